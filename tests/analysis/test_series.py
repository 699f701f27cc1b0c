"""A kernel's passes, series, cohorts and rankings (sitegen/analysis/series.py and the series of
analysis/kernels.py)."""

from __future__ import annotations

import json
import shutil
import tracemalloc
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.analysis.kernels import Kernel, analyse
from sitegen.analysis.series import _shape_key, _sweeps, passes_of
from sitegen.content.run_summary import Shape
from sitegen.pipeline import check_content
from sitegen.site.kernel import KernelContext
from sitegen.site.records import LazyPage
from tests.site.planned import CONTENT, fixture_site


def layer_norm(content: Path = CONTENT) -> Kernel:
    catalog = check_content(content).catalog
    return next(k for k in analyse(catalog).kernels if k.title == "LayerNorm")


def shared_digest_content(root: Path) -> Path:
    """The fixture, plus LayerNorm backward runs of a second provider whose implementation is
    the liger runs' own (the format gives two providers one digest when their specs agree),
    and an earlier measurement of one liger cell."""
    content = root / "content"
    shutil.copytree(CONTENT, content)
    runs = sorted((content / "runs").glob("liger-layer-norm-backward-liger-*.json"))
    assert len(runs) == 2  # at hidden 1024 and 4096; 16384's is the example bundle
    for number, path in enumerate(runs):
        document: dict[str, Any] = json.loads(path.read_text())
        spec = document["spec"]
        triton = json.loads(json.dumps(document))
        triton["metadata"]["name"] += "-triton"
        triton["metadata"]["title"] = "LayerNorm · liger_triton · backward"
        triton["spec"]["timing"]["latencyNs"]["median"] = spec["timing"]["latencyNs"]["median"] // 2
        triton["spec"]["sourceNative"]["externalId"] += "/triton"
        (content / "runs" / f"triton-{number}.json").write_text(json.dumps(triton))
        if number == 0:
            earlier = json.loads(json.dumps(document))
            earlier["metadata"]["name"] += "-earlier"
            earlier["spec"]["timing"]["latencyNs"]["median"] += 1000
            earlier["spec"]["observedAt"] = "2025-01-01T00:00:00.000Z"
            (content / "runs" / "liger-earlier.json").write_text(json.dumps(earlier))
    return content


def test_passes_gpus_and_not_measured() -> None:
    kernel = layer_norm()
    passes = passes_of(kernel)
    assert [p.name for p in passes] == list(kernel.pass_names) == ["forward", "backward", "full"]
    backward = passes[1]
    assert len(backward.gpus) == 1 and len(backward.missing_gpus) == 1  # no A100 backward
    assert [p.name for p in passes if p.name == "full"] == ["full"]  # memory protocol


def test_ranking_within_one_cohort_with_the_passes_one_baseline() -> None:
    kernel = layer_norm()
    backward = passes_of(kernel)[1]
    assert backward.baseline is not None and backward.baseline.label == "Transformers"
    (chart,) = backward.gpus[0].charts
    assert chart.swept == "hidden"
    assert chart.fixed.label() == "rows=4096 · eps=1e-06 · fp32"
    assert chart.baseline == backward.baseline
    largest = chart.rows[-1]
    assert largest.x == 16384 and not largest.missing and not largest.baseline_missing
    first, second = largest.cells
    assert (first.series.label, first.rank, first.vs_best) == ("Liger", 1, 1.0)
    assert second.series.baseline_role and second.rank == 2
    assert second.value is not None and first.value is not None
    assert first.vs_baseline == second.value.centre / first.value.centre  # a speedup: above 1
    assert first.vs_baseline > 1 and second.vs_baseline == 1.0
    assert second.vs_best == second.value.centre / first.value.centre


def test_providers_sharing_an_implementation_are_two_series_each_ranked_and_linked(
    tmp_path: Path,
) -> None:
    kernel = layer_norm(shared_digest_content(tmp_path))
    labels = {s.label: s for s in kernel.series}
    assert {"Liger", "Liger Triton", "Transformers"} <= set(labels)
    liger, triton = labels["Liger"], labels["Liger Triton"]
    assert liger.implementation == triton.implementation and liger.key != triton.key
    (chart,) = passes_of(kernel)[1].gpus[0].charts
    assert {s.label for s in chart.series} == {"Liger", "Liger Triton", "Transformers"}
    for row in chart.rows[:2]:
        ranked = {c.series.label: c for c in row.cells}
        assert ranked["Liger Triton"].rank == 1  # half Liger's time, on Liger's digest
        assert sorted(c.rank for c in ranked.values()) == [1, 2, 3]
    assert [s.label for s in chart.rows[2].missing] == ["Liger Triton"]  # said once, here
    # The earlier run of one cell is kept beside the newest, which is the one ranked.
    smallest = chart.rows[0]
    own = next(c for c in smallest.cells if c.series.label == "Liger")
    (earlier,) = own.earlier
    assert earlier.observed_at < own.run.observed_at
    # Every run of the kernel is in some cell: the newest, or an earlier one beside it.
    shown = {
        r.digest
        for section in passes_of(kernel)
        for gpu in section.gpus
        for c in gpu.charts
        for row in c.rows
        for cell in row.cells
        for r in (cell.run, *cell.earlier)
    }
    assert shown == {r.digest for r in kernel.runs}


def test_charts_are_derived_where_the_kernel_page_is_planned(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The analysis (one CPU, before the render workers fork) leaves a kernel's charts and
    rankings to its page, which a render worker plans."""
    import sitegen.analysis.series

    derived = []
    charts = sitegen.analysis.series._charts
    monkeypatch.setattr(
        sitegen.analysis.series,
        "_charts",
        lambda *args: derived.append(args[0].key) or charts(*args),
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
