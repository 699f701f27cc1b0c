"""Resources as loaded (sitegen/content/loaded.py): what every page reads of a resource."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from sitegen.content.documents import validate_resource
from sitegen.content.loaded import LoadedResource, shown_title
from sitegen.model.problems import Problem
from sitegen.model.resources import BenchmarkProtocol, BenchmarkRun
from sitegen.pipeline import build_site
from tests.conftest import FIXTURES


def test_a_resource_reads_as_its_kinds_model_with_typed_attributes(
    example_bundle: dict[str, Any],
) -> None:
    problems: list[Problem] = []
    loaded = validate_resource(example_bundle["run"], "x.json", "run", problems)
    assert loaded is not None and problems == []
    run = loaded.model(BenchmarkRun)
    assert run.spec.status == "passed"
    assert run.spec.timing is not None and run.spec.timing.latency_ns.median == 577632
    compact = LoadedResource.compact(
        loaded.path,
        loaded.where,
        loaded.digest,
        orjson.dumps(loaded.document),
        "BenchmarkRun",
        loaded.name,
        loaded.title,
    )
    assert compact.model(BenchmarkRun).spec == run.spec  # rebuilt from the document
    with pytest.raises(TypeError, match="a BenchmarkRun, not a BenchmarkProtocol"):
        loaded.model(BenchmarkProtocol)


def test_a_title_of_white_space_is_none() -> None:
    assert shown_title("   ") is None and shown_title("\t\u3000 ") is None
    assert shown_title(None) is None and shown_title(" LayerNorm ") == " LayerNorm "
    compact = LoadedResource.compact("p.json", "", "sha256:" + "0" * 64, b"{}", "X", "x", "  ")
    assert compact.title is None


def test_a_title_is_neutralised_for_every_output() -> None:
    """Controls and bidirectional controls in a title (accepted with a warning) are shown as
    their escapes on pages, feeds, search and Markdown alike: all read this title."""
    assert shown_title("H100 \u202eevil\u202c\n") == "H100 \\u202eevil\\u202c\\n"
    compact = LoadedResource.compact("p.json", "", "sha256:" + "0" * 64, b"{}", "X", "x", "a\x1b")
    assert compact.title == "a\\x1b"


def test_pages_name_a_resource_whose_title_is_white_space(tmp_path: Path) -> None:
    """No blank heading, link or page title: the resource's name stands in."""
    content = tmp_path / "content"
    shutil.copytree(FIXTURES / "site" / "content", content)
    for path in (
        content / "operations" / "liger-layer-norm.json",
        content / "implementations" / "liger-bench-layer-norm-liger.json",
    ):
        document = json.loads(path.read_text())
        document["metadata"]["title"] = "  \u3000 "
        path.write_text(json.dumps(document))
    out = tmp_path / "public"
    assert build_site(content, out).out_dir is not None
    kernel = (out / "kernels" / "liger-layer-norm" / "index.html").read_text()
    assert "<h1>liger-layer-norm</h1>" in kernel
    implementation = out / "implementations" / "liger-bench-layer-norm-liger" / "index.html"
    assert "<h1>liger-bench-layer-norm-liger</h1>" in implementation.read_text()
    blank = re.compile(r"<(h1|h2|h3|a|title)\b[^>]*>[\s\u3000]*</\1>")
    for page in out.rglob("*.html"):
        assert not blank.search(page.read_text()), page
