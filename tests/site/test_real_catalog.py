"""The real catalog's kernel pages give the right answers: every run is reachable from its
kernel page, ratios never collapse to 0.00×, and providers sharing an implementation are told
apart (eager PyTorch and torch.compile on DyT)."""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from sitegen.pipeline import build_site
from tests.conftest import REPOSITORY


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    out = tmp_path_factory.mktemp("real") / "public"
    assert build_site(REPOSITORY / "content", out).out_dir is not None
    yield out


def test_every_run_page_is_linked_and_anchored_from_its_kernel_page(site: Path) -> None:
    """From the kernel page, or, for a run a later commit superseded, its kernel's history
    pages (a kernel page shows the newest runs of a series, not every commit's)."""
    runs = {p.parent.name for p in (site / "runs").glob("*/index.html") if p.parent.name != "page"}
    assert len(runs) > 85_000
    linked: set[str] = set()
    anchored: set[str] = set()
    for page in (site / "kernels").rglob("index.html"):
        html = page.read_text(encoding="utf-8")
        linked |= set(re.findall(r'href="/runs/([0-9a-f]{16})/"', html))
        ids = re.findall(r'id="run-([0-9a-f]{16})"', html)
        assert len(ids) == len(set(ids)), f"{page}: an id twice"
        anchored |= set(ids)
    assert runs <= linked and runs <= anchored


def test_no_ratio_is_printed_as_zero(site: Path) -> None:
    for page in site.rglob("index.html"):
        assert "0.00×" not in page.read_text(encoding="utf-8"), page


def test_dyt_b200_forward_shows_torch_compile_ahead_of_eager_pytorch(site: Path) -> None:
    twin = json.loads((site / "kernels" / "liger-dyt" / "index.json").read_text())
    series = {s["key"]: s for s in twin["series"]}
    eager = next(s for s in series.values() if s["provider"] == "torch")
    compiled = next(s for s in series.values() if s["provider"] == "torch_compile")
    assert eager["implementation"] == compiled["implementation"]  # one digest, two series
    assert (eager["label"], compiled["label"]) == ("PyTorch", "torch.compile")
    forward = next(p for p in twin["passes"] if p["pass"] == "forward")
    assert forward["baseline"] == eager["key"]
    b200 = next(g for g in forward["gpus"] if "B200" in g["label"])
    (ranking,) = [
        shape["ranking"]
        for chart in b200["charts"]
        for shape in chart["shapes"]
        if chart["sweptAxis"] == "tokens" and shape["x"] == 4096 and chart["metric"] == "latency"
    ]
    ranks = {cell["label"]: cell for cell in ranking}
    assert ranks["torch.compile"]["rank"] < ranks["PyTorch"]["rank"]
    assert ranks["torch.compile"]["value"] < ranks["PyTorch"]["value"] / 3
    html = (site / "kernels" / "liger-dyt" / "index.html").read_text(encoding="utf-8")
    assert "3.30× faster" in html  # torch.compile against eager PyTorch, the pass's baseline


def test_a_no_grad_forward_pass_is_not_charted_as_the_forward(site: Path) -> None:
    twin = json.loads((site / "kernels" / "liger-cross-entropy" / "index.json").read_text())
    passes = [p["pass"] for p in twin["passes"]]
    assert passes[:2] == ["forward", "no-grad-forward"]
    protocols = {
        chart["protocol"]
        for p in twin["passes"]
        if p["pass"] == "forward"
        for gpu in p["gpus"]
        for chart in gpu["charts"]
    }
    no_grad = json.loads(
        (site / "protocols" / "liger-bench-do-bench-no-grad-forward" / "index.json").read_text()
    )["digest"]
    assert no_grad not in protocols


def test_gpu_pages_and_kernel_pages_give_the_same_verdicts(site: Path) -> None:
    """A GPU page judges each kernel's cohorts without drawing its charts: its line for each
    kernel and pass must be the kernel page's, word for word, and link to that section."""
    from_kernels: dict[str, str] = {}
    for twin_path in (site / "kernels").glob("*/index.json"):
        twin = json.loads(twin_path.read_text())
        if "passes" not in twin:
            continue
        url = twin["kernel"]["url"]
        for section in twin["passes"]:
            for gpu in section["gpus"]:
                if gpu["wins"]:
                    from_kernels[f"{url}|{section['pass']}|{gpu['environment']}"] = gpu["wins"]
    from_gpus: dict[str, str] = {}
    for twin_path in (site / "gpus").glob("*/index.json"):
        twin = json.loads(twin_path.read_text())
        for line in twin.get("wins", ()):
            from_gpus[f"{line['kernel']}|{line['pass']}|{twin['digest']}"] = line["text"]
            kernel_page = site / line["section"].split("#")[0].strip("/") / "index.html"
            assert f'id="{line["section"].split("#")[1]}"' in kernel_page.read_text()
    assert len(from_gpus) > 50
    assert from_gpus == from_kernels


def test_no_kernel_chart_labels_two_values_over_each_other(site: Path) -> None:
    """Where a chart labels each measured size on its x axis, the labels stand 6 % of the
    axis apart; closer sizes (batch 12,383 and 16,254 on a log axis from 1) get a regular
    scale instead, their values shown on hover."""
    decoder = json.JSONDecoder()
    labelled = 0
    for page in (site / "kernels").rglob("index.html"):
        html = page.read_text(encoding="utf-8")
        for match in re.finditer(r'"xaxis":', html):
            axis, _ = decoder.raw_decode(html, match.end())
            if "tickvals" not in axis or "range" in axis:  # none, or a regular 1-2-5 scale
                continue
            values = axis["tickvals"]
            places = [math.log10(v) for v in values] if axis.get("type") == "log" else values
            gaps = [b - a for a, b in itertools.pairwise(places)]
            assert all(gap >= (places[-1] - places[0]) * 0.06 for gap in gaps), (page, values)
            labelled += 1
    assert labelled > 100
    html = (site / "kernels" / "fused-add-rmsnorm-h2048" / "index.html").read_text()
    match = re.search(r'"xaxis":', html)
    assert match is not None
    axis, _ = decoder.raw_decode(html, match.end())
    assert axis["type"] == "log" and 16254 not in axis["tickvals"] and "range" in axis
