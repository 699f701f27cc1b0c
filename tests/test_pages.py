"""kernels.py and pages.py: passes, sweeps, cohorts, rankings, projects, sources."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from sitegen.build import check_content
from sitegen.display import Numbers, decimals_for
from sitegen.kernels import Kernel, analyse, passes_of
from sitegen.pages import (
    Inputs,
    KernelContext,
    LazyPage,
    RunContext,
    plan_site,
    schema_documents,
)
from sitegen.run_summary import values_of
from sitegen.sources import load_reports
from sitegen.urls import plan_urls
from tests.conftest import FIXTURES

CONTENT = FIXTURES / "site" / "content"


def fixture_site(content: Path = CONTENT):  # type: ignore[no-untyped-def]
    catalog = check_content(content).catalog
    analysis = analyse(catalog)
    urls = plan_urls(catalog, analysis.kernels, None)
    reports, _ = load_reports(content)
    return analysis, plan_site(Inputs(catalog, analysis, urls, reports, None))


def layer_norm() -> Kernel:
    analysis, _ = fixture_site()
    return next(k for k in analysis.kernels if k.title == "LayerNorm")


def test_passes_gpus_and_not_measured() -> None:
    kernel = layer_norm()
    passes = passes_of(kernel)
    assert [p.name for p in passes] == list(kernel.pass_names) == ["forward", "backward", "full"]
    backward = passes[1]
    assert len(backward.gpus) == 1 and len(backward.missing_gpus) == 1  # no A100 backward
    assert [p.name for p in passes if p.name == "full"] == ["full"]  # memory protocol


def test_ranking_within_one_cohort() -> None:
    backward = passes_of(layer_norm())[1]
    (series,) = backward.gpus[0].series
    assert series.swept == "hidden"
    assert series.fixed.label() == "rows=4096 · eps=1e-06 · fp32"
    largest = series.rows[-1]
    assert largest.x == 16384
    first, second = largest.cells
    assert (first.implementation.label, first.rank, first.vs_best) == ("liger", 1, 1.0)
    assert second.implementation.baseline and second.rank == 2
    assert first.vs_baseline is not None and round(first.vs_baseline, 3) == round(
        577632 / second.value.centre,
        3,  # type: ignore[union-attr]
    )


def test_kernel_context_and_run_context() -> None:
    _, site = fixture_site()
    pages = {p.path: p for p in site.pages}
    kernel = pages["kernels/liger-layer-norm/"].context
    assert isinstance(kernel, KernelContext)
    labels = [(r.label, r.project.text if r.project else None) for r in kernel.implementations]
    assert labels == [("huggingface", "transformers"), ("liger", "liger-kernel")]
    run = pages["runs/f0cf6dd69e048a9b/"].context
    assert isinstance(run, RunContext)
    assert run.meta.title == "LayerNorm · liger · backward"
    (headline,) = run.headlines
    assert (headline.value, headline.exact, headline.spread) == (
        "0.578 ms",
        "577,632 ns",
        "p20 0.575 / p80 0.580 ms",
    )
    assert [a.text for a in run.meta.attributions] == [
        "Liger-Kernel, BSD-2-Clause, Copyright 2024 LinkedIn Corporation"
    ]


def test_kernel_page_reads_its_operations_metadata(tmp_path: Path) -> None:
    # Metadata is not hashed: a copy of the fixture with source references keeps its digests.
    content = tmp_path / "content"
    shutil.copytree(CONTENT, content)
    operation = content / "operations" / "liger-layer-norm.json"
    document = json.loads(operation.read_text())
    url = "https://github.com/linkedin/Liger-Kernel/blob/main/benchmark/scripts/benchmark_layer_norm.py"
    document["metadata"]["sourceRefs"] = [{"url": url}]
    operation.write_text(json.dumps(document, indent=2))
    _, site = fixture_site(content)
    kernel = next(p for p in site.pages if p.path == "kernels/liger-layer-norm/").built().context
    assert isinstance(kernel, KernelContext)
    assert kernel.description == document["metadata"]["description"]
    assert [(r.text, r.href) for r in kernel.source_refs] == [(url, url)]


def test_number_formatting() -> None:
    assert decimals_for(0.5776) == 3 and decimals_for(0.00812) == 5 and decimals_for(46.8) == 3
    numbers = Numbers("peak_memory", "mib")
    assert numbers.one(1280.53125) == "1,280.53" and numbers.unit == "MiB"


def test_values_prefer_timing_and_attach_spread() -> None:
    spec = json.loads((CONTENT / "bundles" / "layer-norm-backward-liger-h100.json").read_text())
    (value,) = values_of(spec["run"]["spec"])
    assert (value.metric, value.centre, value.low, value.high) == (
        "latency",
        577632,
        575347,
        579891,
    )
    assert value.spread == ("p20", "p80")


def test_reports_are_read_defensively(tmp_path: Path) -> None:
    sources = tmp_path / "_sources"
    sources.mkdir()
    (sources / "a.json").write_text("[1, 2]")
    (sources / "b.json").write_text("{not json")
    (sources / "c.json").write_text(
        json.dumps(
            {
                "title": "X" * 5000,
                "repository": "javascript:alert(1)",
                "snapshot": "not-hex",
                "licence": {"spdx": ["weird"]},
                "files": "nope",
                "skipped": {"a reason": 2, "bad": "3"},
            }
        )
    )
    reports, warnings = load_reports(tmp_path)
    assert sorted(reports) == ["c.json"] and len(warnings) == 2
    report = reports["c.json"]
    assert report.repository is None and report.commit is None and report.licence is None
    assert len(report.name or "") <= 300
    assert report.reasons == (("a reason", 2),) and report.skipped == 2


def test_published_schemas_speak_json_schema_only() -> None:
    """Every constraint in /schemas/ is a JSON Schema keyword: a constraint pydantic cannot
    express there (on a union, say) leaks as its own name (`"ge": 0`), which readers ignore."""
    leaked = set()

    def walk(value: object) -> None:
        if isinstance(value, dict):
            leaked.update(value.keys() & {"ge", "gt", "le", "lt", "allow_inf_nan", "strict"})
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    documents = schema_documents()
    assert set(documents) >= {"BenchmarkRun", "WorkloadCase"}
    walk(documents)
    assert not leaked
    run = json.dumps(documents["BenchmarkRun"])
    assert '"minimum": 0' in run  # error bounds: never negative


def test_charts_are_derived_where_the_kernel_page_is_planned(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The analysis (one CPU, before the render workers fork) leaves a kernel's charts and
    rankings to its page, which a render worker plans."""
    import sitegen.kernels

    derived = []
    series = sitegen.kernels._series
    monkeypatch.setattr(
        sitegen.kernels, "_series", lambda *args: derived.append(args[0]) or series(*args)
    )
    analysis, site = fixture_site()
    assert derived == []
    kernel = next(k for k in analysis.kernels if k.title == "LayerNorm")
    page = next(p for p in site.pages if isinstance(p, LazyPage) and p.owner == kernel.key)
    context = page.built().context
    assert isinstance(context, KernelContext)
    assert set(derived) == {kernel.key}
    assert [p.name for p in context.passes] == list(kernel.pass_names)


def test_resource_run_lists_are_ordered_where_their_pages_are_planned(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Planning the site (one CPU, before the render workers fork) only counts a resource's
    runs for its pages' paths; ordering them waits for the page, in a render worker (at 100k
    runs planning took 3.7–4.4 s with the sorts, 1.1–1.4 s without). An incremental build's
    keys need the order, so it is made there as before; both plan the same pages."""
    import sitegen.pages

    monkeypatch.setattr(sitegen.pages, "RUNS_PER_PAGE", 4)  # continuation pages in the fixture
    ordered: list[int] = []
    original = sitegen.pages._Planner.resource_runs

    def resource_runs(self: Any, entry: Any) -> Any:
        ordered.append(1)
        return original(self, entry)

    monkeypatch.setattr(sitegen.pages._Planner, "resource_runs", resource_runs)
    catalog = check_content(CONTENT).catalog
    analysis = analyse(catalog)
    urls = plan_urls(catalog, analysis.kernels, None)
    reports, _ = load_reports(CONTENT)
    plain = plan_site(Inputs(catalog, analysis, urls, reports, None))
    assert ordered == []
    keyed = plan_site(Inputs(catalog, analysis, urls, reports, None, keyed=True))
    assert ordered
    assert [p.path for p in plain.pages] == [p.path for p in keyed.pages]
    continuations = [p for p in plain.pages if "/runs/" in p.path and isinstance(p, LazyPage)]
    assert continuations, "the fixture's resources list more runs than one page holds"
    ordered.clear()
    page = continuations[0]
    twin = next(p for p in keyed.pages if p.path == page.path)
    assert page.built().context == twin.built().context
    assert ordered
    # The count (the runs' tallies) is the number of runs that use the resource (the catalog's
    # reverse references), a project's through its implementations.
    planner = sitegen.pages._Planner(Inputs(catalog, analysis, urls, reports, None))
    counted = {
        entry.digest: planner.resource_run_count(entry)
        for entry in catalog.by_digest.values()
        if entry.kind != "BenchmarkRun"
    }
    assert counted == {
        digest: len(list(planner.run_digests(planner.run_sources(catalog.by_digest[digest]))))
        for digest in counted
    }
    assert 0 in counted.values() and max(counted.values()) > 4
