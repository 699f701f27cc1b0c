"""A kernel's passes, sweeps, cohorts and rankings (sitegen/analysis/series.py)."""

from __future__ import annotations

import pytest

from sitegen.analysis.kernels import Kernel
from sitegen.analysis.series import passes_of
from sitegen.site.kernel import KernelContext
from sitegen.site.records import LazyPage
from tests.site.planned import fixture_site


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


def test_charts_are_derived_where_the_kernel_page_is_planned(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The analysis (one CPU, before the render workers fork) leaves a kernel's charts and
    rankings to its page, which a render worker plans."""
    import sitegen.analysis.series

    derived = []
    series = sitegen.analysis.series._series
    monkeypatch.setattr(
        sitegen.analysis.series, "_series", lambda *args: derived.append(args[0]) or series(*args)
    )
    analysis, site = fixture_site()
    assert derived == []
    kernel = next(k for k in analysis.kernels if k.title == "LayerNorm")
    page = next(
        p for p in site.pages if isinstance(p, LazyPage) and p.path == "kernels/liger-layer-norm/"
    )
    context = page.built().context
    assert isinstance(context, KernelContext)
    assert set(derived) == {kernel.key}
    assert [p.name for p in context.passes] == list(kernel.pass_names)
