"""A kernel's passes, sweeps, cohorts and rankings (sitegen/analysis/series.py)."""

from __future__ import annotations

import tracemalloc
from collections import defaultdict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.analysis.kernels import Kernel
from sitegen.analysis.series import _shape_key, _sweeps, passes_of
from sitegen.content.run_summary import Shape
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


# --- sweeps: one chart per fixed configuration, linear in the axes -------------------------------


def _sweeps_as_first_written(shapes: dict[str, Shape]) -> list[tuple[str | None, Shape, list[str]]]:
    """The grouping as first written, quadratic in the axes (it built every candidate's rest
    of the shape): what `_sweeps` must still choose."""
    candidates: dict[tuple[str, Shape], list[str]] = defaultdict(list)
    for workload, shape in sorted(shapes.items()):
        if not shape.axes:
            candidates[("", shape)].append(workload)
        for axis, _ in shape.axes:
            rest = Shape(tuple(a for a in shape.axes if a[0] != axis), shape.dtype, shape.scalars)
            candidates[(axis, rest)].append(workload)
    covered: set[str] = set()
    chosen = []
    for (axis, rest), members in sorted(
        candidates.items(), key=lambda i: (-len(i[1]), i[0][0], _shape_key(i[0][1]))
    ):
        if not covered.issuperset(members):
            covered.update(members)
            chosen.append((axis or None, rest, members))
    chosen.sort(key=lambda c: (_shape_key(c[1]), c[0] or ""))
    return chosen


_AXES = ("rows", "hidden", "seq", "heads")
shape_sets = st.dictionaries(
    st.text("0123456789abcdef", min_size=4, max_size=4),
    st.builds(
        lambda count, values, dtype, scalars: Shape(
            tuple(zip(_AXES[:count], values, strict=False)), dtype, scalars
        ),
        st.integers(0, len(_AXES)),
        st.lists(st.sampled_from([1, 2, 4, 1024]), min_size=len(_AXES), max_size=len(_AXES)),
        st.sampled_from(["fp32", "bf16"]),
        st.sampled_from([(), (("eps", "1e-06"),)]),
    ),
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(shape_sets)
def test_sweeps_choose_as_the_first_grouping_did(shapes: dict[str, Shape]) -> None:
    assert _sweeps(shapes) == _sweeps_as_first_written(shapes)


def test_sweeps_are_linear_in_the_axes() -> None:
    """15,000 axes in a workload took 1.8 GB when each candidate spelled out its rest."""
    wide = {
        f"w{n}": Shape(tuple((f"axis_{i}", i + n) for i in range(15_000)), "fp32", ())
        for n in range(3)
    }
    tracemalloc.start()
    try:
        chosen = _sweeps(wide)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(chosen) == 3  # every axis differs between them: one chart each
    assert peak < 64 * 2**20, f"{peak / 2**20:.0f} MiB"
