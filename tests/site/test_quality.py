"""Figures and marks as pages show them, and the data-quality page (sitegen/site/quality.py):
on the run page, the kernel page's row and chart hover, the twins, the home page's share."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sitegen.analysis.kernels import HeldAnalysis
from sitegen.analysis.quality import KINDS, OVER_LIMIT
from sitegen.model.digest import digest
from sitegen.site.home import HomeContext
from sitegen.site.lookup import SiteLookup
from sitegen.site.quality import (
    QualityContext,
    _run_quality,
    _runs_by_series,
    _series_runs,
    marks_of,
    run_figures,
    run_quality,
)
from sitegen.site.records import Site
from sitegen.site.run import RunContext
from tests.conftest import REPOSITORY
from tests.site.planned import CONTENT, fixture_site, site_inputs
from tests.site.test_history import page

H100_1024 = "nvidia-h100-80gb-hbm3-hidden1024-rows4096-fp32-2025-07-17-18-18"
FORWARD_H100 = f"liger-layer-norm-forward-liger-{H100_1024}-11"
BACKWARD_H100 = f"liger-layer-norm-backward-liger-{H100_1024}-16"


@pytest.fixture(scope="module")
def marked(tmp_path_factory: pytest.TempPathFactory) -> Site:
    """The fixture site with one run whose p20, median and p80 are one timing."""
    content = tmp_path_factory.mktemp("quality") / "content"
    shutil.copytree(CONTENT, content)
    path = content / "runs" / f"{FORWARD_H100}.json"
    document = json.loads(path.read_text())
    median = document["spec"]["timing"]["latencyNs"]["median"]
    for measurement in document["spec"]["measurements"]:
        measurement["value"] = median
    path.write_text(json.dumps(document))
    return fixture_site(content)[1]


def run_page_of(site: Site, name: str) -> RunContext:
    for item in site.pages:
        if item.template == "run.html":
            built = item.built()
            if built.twin and built.twin["document"]["metadata"]["name"] == name:
                assert isinstance(built.context, RunContext)
                return built.context
    raise AssertionError(name)


def test_a_forward_run_states_its_bytes_bandwidth_and_share_of_peak() -> None:
    _, site = fixture_site()
    context = run_page_of(site, FORWARD_H100)
    assert context.speed is not None
    facts = {fact.label: fact.value for fact in context.speed.facts}
    # x and y 4096 × 1024 fp32, weight and bias 1024 fp32.
    assert facts["Bytes moved at least once"] == "33.6 MB (33,562,624 bytes)"
    assert facts["Of peak memory bandwidth"].endswith("of 3,350 GB/s")
    assert context.speed.datasheet is not None
    assert context.speed.datasheet.text == "NVIDIA H100 Tensor Core GPU datasheet"
    assert "80GB HBM3" not in context.speed.note and "SXM5 80GB" in context.speed.note


def test_a_backward_run_says_why_it_has_no_figures() -> None:
    _, site = fixture_site()
    context = run_page_of(site, BACKWARD_H100)
    assert context.speed is not None and context.speed.facts == ()
    assert context.speed.note.startswith("No figures for a backward pass")


def test_a_mark_shows_on_the_run_page_kernel_row_chart_and_twins(marked: Site) -> None:
    context = run_page_of(marked, FORWARD_H100)
    (mark,) = context.marks
    assert mark.kind == "no-spread" and mark.title == "no spread"
    assert mark.reason.startswith("p20 = median = p80 = ")
    assert mark.methodology == "/methodology/#mark-no-spread"
    kernel = page(marked, "kernels/liger-layer-norm/")
    rows = [
        row
        for block in kernel.context.passes
        for gpu in block.gpus
        for chart in gpu.charts
        for shape in chart.shapes
        for row in shape.rows
        if row.marks
    ]
    assert [m.kind for row in rows for m in row.marks] == ["no-spread"]
    hovers = json.dumps(
        [chart.spec for b in kernel.context.passes for g in b.gpus for chart in g.charts],
        ensure_ascii=False,
    )
    assert "⚠ no spread: p20 = median = p80" in hovers
    twin = kernel.twin
    assert twin is not None and '"marks": ["no-spread"]' in json.dumps(twin)


def test_the_data_quality_page_counts_marks_by_source_gpu_and_kernel(marked: Site) -> None:
    built = page(marked, "data-quality/")
    context = built.context
    assert isinstance(context, QualityContext)
    assert context.runs == 28 and context.unmarked == 27
    assert context.totals == (0, 1, 0, 0, 0)
    (kernel_row,) = [row for row in context.by_kernel if sum(row.counts)]
    assert kernel_row.where.text == "LayerNorm"
    assert kernel_row.where.href == "/kernels/liger-layer-norm/"
    (gpu_row,) = [row for row in context.by_gpu if sum(row.counts)]
    assert gpu_row.where.href is not None and gpu_row.where.href.startswith("/gpus/")
    no_spread = context.sections[1]
    assert no_spread.total == 1 and no_spread.runs[0].run.href is not None
    assert built.twin is not None and built.twin["marks"]["no-spread"] == 1
    home = page(marked, "").context
    assert isinstance(home, HomeContext) and home.unmarked is not None
    assert home.unmarked.text == "96.4 %" and home.unmarked.href == "/data-quality/"


def test_a_catalog_without_marks_says_so() -> None:
    _, site = fixture_site()
    context = page(site, "data-quality/").context
    assert isinstance(context, QualityContext)
    assert context.totals == (0, 0, 0, 0, 0) and context.unmarked_share == "100.0 %"
    assert all(section.runs == () for section in context.sections)


def test_a_series_alone_gives_its_runs_the_marks_the_whole_catalog_gives() -> None:
    """`sitegen serve` marks the runs it publishes ahead of the site from their series alone
    (site/quality.py): on the real catalog, each run's marks and figures so made are the
    whole catalog's."""
    lookup = SiteLookup(site_inputs(REPOSITORY / "content", keyed=True))
    by_series: dict[str, list[str]] = {}
    for run in lookup.runs.values():
        by_series.setdefault(run.series_key, []).append(run.digest)
    alone = {
        digest: (marks_of(lookup, digest), run_figures(lookup, digest))
        for digests in by_series.values()
        for digest in digests
    }
    assert not lookup.made(_run_quality)  # each series was assessed alone
    whole = run_quality(lookup)
    assert lookup.made(_run_quality)
    # Every kind that compares runs is there (none is over the limit: that mark is a run's own).
    kinds = {mark.kind for marks in whole.marks.values() for mark in marks}
    assert kinds >= set(KINDS) - {OVER_LIMIT}
    assert alone == {
        digest: (whole.of(digest), whole.figures.get(digest)) for digest in lookup.runs
    }


def test_held_series_runs_are_merged_from_each_kernels_as_grouping_every_run_gives(
    tmp_path: Path,
) -> None:
    """With a held analysis each series' runs are merged from its kernels' (`_runs_by_series`),
    even a series measured on two kernels' workloads (a run whose workload is another
    operation's case): the same runs in the same order as grouping every run."""
    content = tmp_path / "content"
    shutil.copytree(CONTENT, content)
    layer_norm = sorted((content / "runs").glob("liger-layer-norm-*.json"))[0]
    run = json.loads(layer_norm.read_text())
    workload = json.loads(next((content / "workloads").glob("liger-cross-entropy-*")).read_text())
    run["metadata"]["name"] += "-on-cross-entropy"
    run["spec"]["workloadDigest"] = digest("WorkloadCase", workload["spec"])
    (content / "runs" / "elsewhere.json").write_text(json.dumps(run))
    lookup = SiteLookup(site_inputs(content, keyed=True, held=HeldAnalysis()))
    kernels: dict[str, set[str]] = {}
    for fact in lookup.runs.values():
        kernels.setdefault(fact.series_key, set()).add(fact.kernel_key)
    assert any(len(keys) > 1 for keys in kernels.values())  # one series, two kernels
    merged = lookup.memo(_runs_by_series)("")
    grouped = _series_runs(lookup.runs.values())
    assert {k: [r.digest for r in v] for k, v in merged.items()} == {
        k: [r.digest for r in v] for k, v in grouped.items()
    }
