"""A kernel's page as data: its passes, each GPU's charts and their rankings.

Derived where the kernel page is planned (in the render workers on a big site), not with the
analysis, and dropped once the page is written. A cohort is (workload, protocol, environment):
only runs of one cohort are ever ranked against each other (FORMAT.md §3). A chart's lines are
series (analysis/kernels.py): implementations as their runs' titles name them.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from sitegen.analysis.kernels import Kernel, RunFacts, Series, newest_first
from sitegen.content.run_summary import LATENCY, Shape, Value
from sitegen.model.names import short_hash


class Cell(NamedTuple):
    """One series at one shape of one chart: ranked, or measured without a value."""

    series: Series
    run: RunFacts  # the newest run of the series in the cohort
    value: Value | None  # None when the run did not pass or has no value for the metric
    rank: int | None
    vs_best: float | None  # value / the fastest value: 1 for the fastest, more for the rest
    vs_baseline: float | None  # the baseline's value / value: above 1 is faster than it
    earlier: tuple[RunFacts, ...]  # the series' older runs in the cohort, newest first


class ShapeRow(NamedTuple):
    workload: str
    x: int | None  # the swept axis's value
    shape: Shape
    cells: tuple[Cell, ...]  # ranked first, then those without a value
    missing: tuple[Series, ...]  # series of the chart not measured at this shape
    baseline_missing: bool  # the chart has a baseline, and it was not measured here


class Chart(NamedTuple):
    """One chart: a cohort family that differs only in the swept axis."""

    element_id: str  # derived from digests, stable across builds
    protocol: str
    environment: str
    metric: str
    unit: str
    swept: str | None
    fixed: Shape  # the shape without the swept axis
    rows: tuple[ShapeRow, ...]  # sorted by x
    series: tuple[Series, ...]  # the lines drawn, in the kernel's order
    baseline: Series | None  # the pass's baseline, where it is one of the lines


class GpuSection(NamedTuple):
    environment: str
    charts: tuple[Chart, ...]
    missing: tuple[Series, ...]  # measured in this pass elsewhere, not on this GPU


class PassSection(NamedTuple):
    name: str
    gpus: tuple[GpuSection, ...]
    missing_gpus: tuple[str, ...]  # environments of the kernel not measured in this pass
    baseline: Series | None  # every ratio to a baseline in this pass is to this series


def passes_of(kernel: Kernel) -> tuple[PassSection, ...]:
    """A kernel's passes, each GPU's charts and rankings: what its page shows."""
    by_pass: dict[str, list[RunFacts]] = defaultdict(list)
    for run in kernel.runs:
        by_pass[run.pass_name].append(run)
    return tuple(_pass_section(kernel, name, by_pass[name]) for name in kernel.pass_names)


def metrics_of(run: RunFacts) -> tuple[tuple[str, str], ...]:
    """The (metric, unit) charts a run appears in: each of its values; a run without a value
    (a failed one) in its protocol's latency chart, so that every run is listed somewhere."""
    return tuple((v.metric, v.unit) for v in run.values) or ((LATENCY, "ns"),)


def statistic_of(cells: Iterable[Cell]) -> str:
    """The statistic the cells' values are, as their protocol reports it (`median`, `mean`,
    `geomean`); "" when none has a value. A cohort's runs share one protocol, so one."""
    return next((cell.value.statistic for cell in cells if cell.value is not None), "")


def measured_words(metric: str, statistic: str) -> str:
    """What a value is: `median latency`, `mean latency`, `geomean score`, `peak memory`."""
    name = metric.replace("_", " ")
    return f"{statistic} {name}" if statistic and statistic != "unspecified" else name


def _pass_section(kernel: Kernel, pass_name: str, runs: list[RunFacts]) -> PassSection:
    series = kernel.series_by_key
    baseline_key = kernel.baseline_of(pass_name)
    baseline = series[baseline_key] if baseline_key else None
    by_environment: dict[str, list[RunFacts]] = defaultdict(list)
    for run in runs:
        by_environment[run.environment].append(run)
    in_pass = {run.series_key for run in runs}
    gpus = []
    for environment in sorted(by_environment):
        env_runs = by_environment[environment]
        present = {run.series_key for run in env_runs}
        missing = tuple(s for s in kernel.series if s.key in in_pass - present)
        charts = _charts(kernel, env_runs, baseline)
        gpus.append(GpuSection(environment, charts, missing))
    missing_gpus = tuple(e for e in kernel.environments if e not in by_environment)
    return PassSection(pass_name, tuple(gpus), missing_gpus, baseline)


def _charts(kernel: Kernel, runs: list[RunFacts], baseline: Series | None) -> tuple[Chart, ...]:
    """Charts of one pass on one GPU: per protocol and metric, one per fixed configuration."""
    by_key = kernel.series_by_key
    # (protocol, metric, unit) → workload → series key → runs
    cohorts: dict[tuple[str, str, str], dict[str, dict[str, list[RunFacts]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    shapes: dict[str, Shape] = {}
    for run in runs:
        shapes[run.workload] = run.shape
        for metric, unit in metrics_of(run):
            cohorts[(run.protocol, metric, unit)][run.workload][run.series_key].append(run)
    found = []
    for (protocol, metric, unit), by_workload in sorted(
        cohorts.items(), key=lambda i: (i[0][1] != LATENCY, i[0])
    ):
        for swept, fixed, members in _sweeps({w: shapes[w] for w in by_workload}):
            drawn = {key for w in members for key in by_workload[w]}
            lines = tuple(s for s in kernel.series if s.key in drawn)
            chart_baseline = baseline if baseline is not None and baseline.key in drawn else None
            rows = []
            for workload in members:
                cells = rank_cohort(by_workload[workload], by_key, metric, unit, chart_baseline)
                here = {cell.series.key for cell in cells}
                x = dict(shapes[workload].axes).get(swept) if swept else None
                rows.append(
                    ShapeRow(
                        workload,
                        x,
                        shapes[workload],
                        cells,
                        tuple(s for s in lines if s.key not in here),
                        chart_baseline is not None and chart_baseline.key not in here,
                    )
                )
            rows.sort(key=lambda r: (r.x if r.x is not None else -1, r.workload))
            identity = json.dumps(
                [
                    kernel.key,
                    protocol,
                    runs[0].environment,
                    metric,
                    unit,
                    swept,
                    fixed.label(),
                    members,
                ]
            )
            found.append(
                Chart(
                    element_id="chart-" + short_hash(identity),
                    protocol=protocol,
                    environment=runs[0].environment,
                    metric=metric,
                    unit=unit,
                    swept=swept,
                    fixed=fixed,
                    rows=tuple(rows),
                    series=lines,
                    baseline=chart_baseline,
                )
            )
    return tuple(found)


def sweeps(shapes: dict[str, Shape]) -> list[tuple[str | None, Shape, list[str]]]:
    """The charts workloads of these shapes are drawn in: (swept axis, the rest, workloads)."""
    return _sweeps(shapes)


def _sweeps(shapes: dict[str, Shape]) -> list[tuple[str | None, Shape, list[str]]]:
    """Group workloads into charts: the swept axis is the one whose value varies in a group.

    Every (axis, rest of the shape) pair is a candidate; the largest candidates are taken first,
    each while it still adds a workload, so a crossed sweep (rope's T and H) gives two charts
    sharing their corner and a grid of several fixed configurations gives one chart per row.

    Linear in the axes: a candidate's key never spells out the rest of its shape. The axes,
    sorted by name, get an interned id for each prefix and each suffix, and (axis, the ids of
    what is before and after it, dtype, scalars) names the rest exactly; only the chosen
    candidates' rests are built. Candidates of one axis never share a workload, so their order
    among themselves changes nothing chosen.
    """
    candidates: dict[tuple[Any, ...], list[str]] = defaultdict(list)
    first: dict[tuple[Any, ...], Shape] = {}  # a shape of each candidate, to build its rest
    prefixes: dict[tuple[int, tuple[str, int]], int] = {}
    suffixes: dict[tuple[int, tuple[str, int]], int] = {}
    for workload, shape in sorted(shapes.items()):
        ordered = sorted(shape.axes)  # axis names are unique: by name
        before = [0]
        for item in ordered:
            before.append(prefixes.setdefault((before[-1], item), len(prefixes) + 1))
        after = [0]
        for item in reversed(ordered):
            after.append(suffixes.setdefault((after[-1], item), len(suffixes) + 1))
        after.reverse()  # after[i]: the id of ordered[i:]
        keys = [(name, before[i], after[i + 1]) for i, (name, _) in enumerate(ordered)]
        for axis, head, tail in keys or [("", 0, 0)]:
            key = (axis, head, tail, shape.dtype, shape.scalars)
            candidates[key].append(workload)
            first.setdefault(key, shape)
    covered: set[str] = set()
    chosen = []
    for key, members in sorted(candidates.items(), key=lambda i: (-len(i[1]), i[0][0])):
        if not covered.issuperset(members):
            covered.update(members)
            axis, shape = key[0], first[key]
            rest = Shape(tuple(a for a in shape.axes if a[0] != axis), shape.dtype, shape.scalars)
            chosen.append((axis or None, rest, members))
    chosen.sort(key=lambda c: (_shape_key(c[1]), c[0] or ""))
    return chosen


def _shape_key(shape: Shape) -> tuple[Any, ...]:
    return (shape.dtype, shape.axes, shape.scalars)


def rank_cohort(
    by_series: dict[str, list[RunFacts]] | Iterable[RunFacts],
    series: Mapping[str, Series],
    metric: str,
    unit: str,
    baseline: Series | None,
) -> tuple[Cell, ...]:
    """Rank one cohort on one metric: the newest run of each series; lower is better.

    `by_series` is the cohort's runs, grouped by series key or not; `series` the kernel's, by
    key; `baseline` the series ratios to a baseline are to (None: none).
    """
    if not isinstance(by_series, dict):
        grouped: dict[str, list[RunFacts]] = defaultdict(list)
        for run in by_series:
            grouped[run.series_key].append(run)
        by_series = grouped
    measured: list[tuple[Series, RunFacts, Value | None, tuple[RunFacts, ...]]] = []
    for key, runs in by_series.items():
        ordered = newest_first(runs)
        newest = ordered[0]
        value = newest.value(metric, unit) if newest.status == "passed" else None
        measured.append((series[key], newest, value, tuple(ordered[1:])))
    measured.sort(key=lambda m: (m[0].label.lower(), m[0].key))
    passed = sorted(
        (m for m in measured if m[2] is not None),
        key=lambda m: (m[2].centre, m[0].label.lower(), m[0].key),  # type: ignore[union-attr]
    )
    best = passed[0][2].centre if passed else None  # type: ignore[union-attr]
    base = next(
        (m[2].centre for m in passed if baseline is not None and m[0].key == baseline.key),  # type: ignore[union-attr]
        None,
    )
    cells = []
    for rank, (line, run, value, earlier) in enumerate(passed, start=1):
        centre = value.centre  # type: ignore[union-attr]
        cells.append(
            Cell(
                line,
                run,
                value,
                rank,
                centre / best if best else None,
                base / centre if base is not None and centre else None,
                earlier,
            )
        )
    cells += [Cell(s, r, None, None, None, None, e) for s, r, v, e in measured if v is None]
    return tuple(cells)
