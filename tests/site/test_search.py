"""The search page and what pages tell the search index (sitegen/site/search.py)."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from sitegen.site.kernel import KernelContext
from sitegen.site.records import SearchTags, Site
from sitegen.site.run import RunContext
from sitegen.site.search import FILTERS, SearchContext, chart_heading, example_words
from tests.site.planned import fixture_site, held_builds, kernels_made


@functools.cache
def _site() -> Site:
    return fixture_site()[1]


def _page(path: str) -> object:
    site = _site()
    return next(p for p in site.pages if p.path == path).built().context


def test_a_run_page_is_filed_under_its_kernel_gpu_pass_and_implementation() -> None:
    run = _page("runs/f0cf6dd69e048a9b/")
    assert isinstance(run, RunContext)
    assert run.meta.search == SearchTags(
        (
            ("GPU", "NVIDIA H100 80GB HBM3"),
            ("Implementation", "Liger"),
            ("Kernel", "LayerNorm"),
            ("Page", "Run"),
            ("Pass", "backward"),
        ),
        # Run titles repeat: the result's title says where and at which shape.
        "LayerNorm · liger · backward · NVIDIA H100 80GB HBM3 · "
        "rows=4096, hidden=16384 · eps=1e-06 · fp32",
        # Indexed by its title and what was measured only (run.html), not its whole text.
        whole=False,
    )


def test_a_kernel_page_is_filed_under_every_gpu_pass_and_implementation_it_shows() -> None:
    kernel = _page("kernels/liger-layer-norm/")
    assert isinstance(kernel, KernelContext) and kernel.meta.search is not None
    filters = kernel.meta.search.filters
    assert {name for name, _ in filters} == set(FILTERS)
    assert [v for name, v in filters if name == "GPU"] == [
        "NVIDIA A100 SXM4-80GB",
        "NVIDIA H100 80GB HBM3",
    ]
    assert [v for name, v in filters if name == "Pass"] == ["backward", "forward", "full"]
    assert kernel.meta.search.title == ""  # its h1 is its title
    # A kernel without runs is still found under its name.
    empty = _page("kernels/liger-rms-norm/")
    assert isinstance(empty, KernelContext) and empty.meta.search is not None
    assert empty.meta.search.filters == (("Kernel", "RMSNorm"), ("Page", "Kernel"))


def test_each_chart_heading_has_an_id_of_its_kernel_gpu_pass_and_shape_words() -> None:
    kernel = _page("kernels/liger-layer-norm/")
    assert isinstance(kernel, KernelContext)
    charts = [c for p in kernel.passes for g in p.gpus for c in g.charts]
    backward = next(p for p in kernel.passes if p.name == "backward").gpus[0].charts[0]
    assert backward.heading_id == (
        "chart-layernorm-nvidia-h100-80gb-hbm3-backward-latency-hidden-rows-4096-eps-1e-06-fp32"
    )
    assert backward.context == "LayerNorm · NVIDIA H100 80GB HBM3 · backward pass"
    ids = [c.heading_id for c in charts]
    assert len(set(ids)) == len(ids) == 4


def test_chart_heading_ids_stay_unique_on_a_page() -> None:
    taken: set[str] = set()
    first = chart_heading("LayerNorm", "NVIDIA H100", "forward", ["latency"], taken)
    second = chart_heading("LayerNorm", "NVIDIA H100", "forward", ["latency"], taken)
    assert (first.id, second.id) == (
        "chart-layernorm-nvidia-h100-forward-latency",
        "chart-layernorm-nvidia-h100-forward-latency-2",
    )


def test_lists_and_the_tool_pages_are_not_indexed() -> None:
    site = _site()
    indexed = {p.path for p in site.pages if p.built().context.meta.search is not None}
    assert "runs/" not in indexed and "kernels/" not in indexed and "" not in indexed
    assert "search/" not in indexed and "compare/" not in indexed
    assert "gpus/liger-bench-nvidia-h100-80gb-hbm3/" in indexed
    assert sum(p.startswith("runs/") for p in indexed) == 28


def test_the_search_page_names_its_index_and_an_example_from_the_catalog() -> None:
    site = _site()
    page = next(p for p in site.pages if p.path == "search/")
    context = page.context
    assert isinstance(context, SearchContext)
    assert (context.bundle, context.base) == ("/pagefind/", "/")
    assert context.example == "layernorm h100 fp32"  # the newest run's kernel, GPU, dtype
    assert page.twin is not None and page.twin["filters"] == list(FILTERS)
    assert page.twin["example"] == "/search/?q=layernorm+h100+fp32"


def test_held_example_words_are_counted_again_only_for_a_changed_kernel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sitegen.site.search

    counted = kernels_made(monkeypatch, sitegen.site.search, "_kernel_words")
    for change, lookup, plain in held_builds(tmp_path, monkeypatch):
        if change == "first build":
            assert len(counted) == len(lookup.analysis.kernels) > 2
        else:
            assert len(counted) == 1, change  # the changed run's kernel
        assert example_words(lookup) == example_words(plain) != "layernorm"
        counted.clear()
