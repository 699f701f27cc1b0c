"""A run's page (sitegen/site/run.py)."""

from __future__ import annotations

from pathlib import Path

from sitegen.site.run import RunContext
from tests.analysis.test_series import shared_digest_content
from tests.site.planned import fixture_site


def test_run_context_spells_out_its_value_and_credits_its_source() -> None:
    _, site = fixture_site()
    pages = {p.path: p for p in site.pages}
    run = pages["runs/f0cf6dd69e048a9b/"].context
    assert isinstance(run, RunContext)
    assert run.meta.title == "LayerNorm · liger · backward"
    (headline,) = run.headlines
    assert (headline.value, headline.exact, headline.spread) == (
        "578 µs",
        "577,632 ns",
        "p20 575 / p80 580 µs",
    )
    assert [a.text for a in run.meta.attributions] == [
        "Liger-Kernel, BSD-2-Clause, Copyright 2024 LinkedIn Corporation"
    ]


def test_a_run_page_says_whether_the_run_is_the_fastest_here(tmp_path: Path) -> None:
    _, site = fixture_site(shared_digest_content(tmp_path))
    pages = {p.path: p for p in site.pages}
    seed = pages["runs/f0cf6dd69e048a9b/"].built().context  # Liger at hidden 16384, backward
    assert isinstance(seed, RunContext) and seed.ranking is not None
    ranking = seed.ranking
    assert ranking.verdict.startswith("Fastest of 2 implementations at this workload")
    assert [(r.rank, r.series.text, r.this) for r in ranking.rows] == [
        ("1", "Liger", True),
        ("2", "Transformers", False),
    ]
    assert ranking.rows[1].versus.endswith("× slower")  # than this run
    assert ranking.chart.href == "/kernels/liger-layer-norm/#run-f0cf6dd69e048a9b"
    # A run of the same cell that a newer one replaces says so, and links the newer run.
    earlier = next(
        p.built().context
        for p in site.pages
        if p.path.startswith("runs/")
        and p.template == "run.html"
        and p.built().context.ranking.newer is not None
    )
    assert earlier.ranking.verdict.startswith("A newer run of this implementation")
    assert earlier.ranking.rows[[r.this for r in earlier.ranking.rows].index(True)].versus == (
        "the newer run"
    )
    # Found through the newer run, not by itself: the search index holds one run a cell.
    assert earlier.meta.search is None
    assert seed.meta.search is not None
    newer = pages[earlier.ranking.newer.href.removeprefix("/")].built().context
    assert isinstance(newer, RunContext) and newer.meta.search is not None


def test_the_run_page_names_the_implementation_as_the_kernel_page_does() -> None:
    _, site = fixture_site()
    pages = {p.path: p for p in site.pages}
    run = pages["runs/f0cf6dd69e048a9b/"].built().context
    implementation = next(f for f in run.summary if f.label == "Implementation")
    assert implementation.value == "Liger"
    twin = pages["runs/f0cf6dd69e048a9b/"].built().twin
    assert twin is not None and twin["derived"]["implementationLabel"] == "Liger"
    baseline_runs = [
        p.built().context
        for p in site.pages
        if p.template == "run.html" and "huggingface" in p.built().context.meta.title
    ]
    named = {next(f for f in r.summary if f.label == "Implementation").value for r in baseline_runs}
    assert named == {"Transformers (huggingface)"}


def test_the_run_twin_holds_its_values_as_stored_and_shown() -> None:
    _, site = fixture_site()
    page = next(p for p in site.pages if p.path == "runs/f0cf6dd69e048a9b/").built()
    assert page.twin is not None
    derived = page.twin["derived"]
    assert derived["shape"] == "rows=4096, hidden=16384 · eps=1e-06 · fp32"
    assert derived["values"] == [
        {
            "metric": "latency",
            "unit": "ns",
            "statistic": "median",
            "value": 577632,
            "low": 575347,
            "high": 579891,
            "spread": ["p20", "p80"],
            "text": "578 µs",
            "spreadText": "p20 575 / p80 580 µs",
        }
    ]


def test_provenance_shows_controls_in_source_text_as_escapes() -> None:
    """An externalId or benchmark may hold controls (free text from the source, accepted with
    a warning): shown as their escapes, as titles are."""
    from sitegen.site.lookup import SiteLookup
    from sitegen.site.run import provenance_facts
    from tests.site.planned import site_inputs

    lookup = SiteLookup(site_inputs())
    run = next(iter(lookup.runs.values()))
    native = {"source": "liger-kernel-bench", "benchmark": "a\u202eb", "externalId": "x\x1b[2Jy"}
    facts = {f.label: f.value for f in provenance_facts(lookup, run, {"sourceNative": native}, {})}
    assert facts["Benchmark"] == "a\\u202eb" and facts["External id"] == "x\\x1b[2Jy"
