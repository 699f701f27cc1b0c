"""The compare page and the links to it (sitegen/site/compare.py)."""

from __future__ import annotations

import functools

from sitegen.site.compare import MAX_RUNS, CompareContext, compare_href, compare_hrefs
from sitegen.site.kernel import KernelContext
from sitegen.site.lookup import SiteLookup
from sitegen.site.records import Site
from sitegen.site.run import RunContext
from tests.site.planned import fixture_site, site_inputs

SEED = "f0cf6dd69e048a9b"
SEED_COMPETITOR = "567351cb8062f81d"  # Transformers at the seed's workload, protocol and GPU


@functools.cache
def _site() -> Site:
    return fixture_site()[1]


def test_compare_href_lists_run_ids_in_order_at_most_eight() -> None:
    lookup = SiteLookup(site_inputs())
    runs = sorted(lookup.runs.values(), key=lambda r: r.digest)
    assert compare_href(lookup, runs[:1]) == ""  # nothing to compare
    two = compare_href(lookup, runs[:2])
    assert two == f"/compare/?runs={runs[0].digest[7:23]},{runs[1].digest[7:23]}"
    many = compare_href(lookup, runs[:20])
    assert many.count(",") == MAX_RUNS - 1


def test_compare_hrefs_are_compare_href_of_each_pair() -> None:
    lookup = SiteLookup(site_inputs())
    runs = sorted(lookup.runs.values(), key=lambda r: r.digest)[:6]
    assert compare_hrefs(lookup, runs[0], runs) == [
        compare_href(lookup, [runs[0], other]) for other in runs
    ]
    assert compare_hrefs(lookup, runs[0], []) == []


def test_the_compare_page_is_static_with_its_usage_in_its_twin() -> None:
    site = _site()
    page = next(p for p in site.pages if p.path == "compare/")
    context = page.context
    assert isinstance(context, CompareContext)
    assert (context.base, context.min_runs, context.max_runs) == ("/", 2, 8)
    assert context.example.startswith("/compare/?runs=")  # the newest run's cohort
    assert page.twin is not None
    assert page.twin["query"] == "/compare/?runs=<id>,<id>"
    assert page.twin["runTwin"] == "/runs/<id>/index.json"
    assert page.twin["runs"] == {"min": 2, "max": 8, "id": page.twin["runs"]["id"]}


def test_a_run_page_links_a_comparison_with_each_competitor() -> None:
    site = _site()
    run = next(p for p in site.pages if p.path == f"runs/{SEED}/").built().context
    assert isinstance(run, RunContext) and run.ranking is not None
    links = [(row.series.text, row.compare) for row in run.ranking.rows]
    assert links == [("Liger", ""), ("Transformers", f"/compare/?runs={SEED},{SEED_COMPETITOR}")]


def test_a_kernel_chart_links_a_comparison_of_each_shape() -> None:
    site = _site()
    kernel = next(p for p in site.pages if p.path == "kernels/liger-layer-norm/").built().context
    assert isinstance(kernel, KernelContext)
    backward = next(p for p in kernel.passes if p.name == "backward")
    shape = backward.gpus[0].charts[0].shapes[-1]  # hidden = 16384: Liger first, the fastest
    assert shape.compare == f"/compare/?runs={SEED},{SEED_COMPETITOR}"
