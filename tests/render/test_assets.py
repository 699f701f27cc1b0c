"""Assets and JSON Schemas every site carries (sitegen/render/assets.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sitegen.model.resources import KINDS, json_schemas
from sitegen.pipeline import build_site
from sitegen.render.assets import SCHEMAS_DIR, schema_files, site_assets
from sitegen.render.compact_json import compact_json
from sitegen.render.errors import RenderError
from tests.conftest import FIXTURES, REGENERATE


def test_assets_are_content_hashed() -> None:
    assets = site_assets()
    for asset in assets.values():
        assert asset.path.startswith("assets/")
    assert assets["plotly"].path.startswith("assets/plotly-")
    assert len(assets["plotly"].data) > 1_000_000  # the real bundle, from the plotly package


def test_the_shipped_json_schemas_are_the_models() -> None:
    """sitegen/model/schemas/<Kind>.json, published as schemas/<Kind>.json, are what the models say
    (`SITEGEN_REGENERATE=1` rewrites them after a model changes)."""
    expected = {kind: compact_json(schema, newline=True) for kind, schema in json_schemas().items()}
    if REGENERATE:
        SCHEMAS_DIR.mkdir(exist_ok=True)
        for stale in SCHEMAS_DIR.glob("*.json"):
            stale.unlink()
        for kind, data in expected.items():
            (SCHEMAS_DIR / f"{kind}.json").write_bytes(data)
    assert sorted(path.stem for path in SCHEMAS_DIR.glob("*.json")) == sorted(KINDS)
    assert schema_files() == expected, "a model changed: SITEGEN_REGENERATE=1 to rewrite"


def test_a_missing_json_schema_fails_the_build_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shipped = tmp_path / "schemas"
    shutil.copytree(SCHEMAS_DIR, shipped)
    (shipped / "WorkloadCase.json").unlink()
    monkeypatch.setattr("sitegen.render.assets.SCHEMAS_DIR", shipped)
    with pytest.raises(RenderError, match="JSON Schema of WorkloadCase is missing"):
        build_site(FIXTURES / "site" / "content", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_the_plotly_bundle_is_the_basic_one_of_the_plotly_js_the_python_package_ships() -> None:
    """The site serves plotly.js's basic bundle (scatter, bar, pie), kept in the repository; it
    must be the plotly.js release the `plotly` package pins, so the charts draw as tested."""
    import importlib.util
    import re

    from sitegen.render.assets import PLOTLY_BUNDLE

    spec = importlib.util.find_spec("plotly")
    assert spec is not None and spec.submodule_search_locations
    full = Path(next(iter(spec.submodule_search_locations))) / "package_data" / "plotly.min.js"
    version = re.compile(rb"plotly\.js (?:\(basic - minified\) )?v(\d+\.\d+\.\d+)")
    ours = version.search(PLOTLY_BUNDLE.read_bytes()[:300])
    theirs = version.search(full.read_bytes()[:300])
    assert ours and theirs and ours.group(1) == theirs.group(1)
    assert b"(basic - minified)" in PLOTLY_BUNDLE.read_bytes()[:300]
    assert PLOTLY_BUNDLE.stat().st_size < full.stat().st_size / 3


def test_published_schemas_are_json_schema_2020_12_with_their_own_url(tmp_path: Path) -> None:
    import json

    from jsonschema import Draft202012Validator

    out = tmp_path / "out"
    build_site(FIXTURES / "site" / "content", out, base_url="https://example.org/sub/")
    run = json.loads((out / "runs" / "f0cf6dd69e048a9b" / "index.json").read_text())["document"]
    for kind in KINDS:
        schema = json.loads((out / "schemas" / f"{kind}.json").read_text())
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["$id"] == f"https://example.org/sub/schemas/{kind}.json"
        Draft202012Validator.check_schema(schema)
    schema = json.loads((out / "schemas" / "BenchmarkRun.json").read_text())
    Draft202012Validator(schema).validate(run)  # a real run's normalised document
    broken = {**run, "spec": {**run["spec"], "status": "fine"}}
    assert not Draft202012Validator(schema).is_valid(broken)
