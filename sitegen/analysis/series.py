"""A kernel's page as data: its passes, each GPU's charts (`Series`) and their rankings.

Derived where the kernel page is planned (in the render workers on a big site), not with the
analysis, and dropped once the page is written. A cohort is (workload, protocol, environment):
only runs of one cohort are ever ranked against each other (FORMAT.md §3).
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any, NamedTuple

from sitegen.analysis.kernels import Implementation, Kernel, RunFacts
from sitegen.content.run_summary import LATENCY, Shape, Value
from sitegen.model.names import short_hash


class Cell(NamedTuple):
    """One implementation at one shape of one chart: ranked, unranked, or not measured."""

    implementation: Implementation
    run: RunFacts | None  # the newest run of the cohort, None when not measured
    value: Value | None  # None when not measured or not passed
    rank: int | None
    vs_best: float | None
    vs_baseline: float | None
    earlier: int  # older runs of the same cohort and implementation, not shown


class ShapeRow(NamedTuple):
    workload: str
    x: int | None  # the swept axis's value
    shape: Shape
    cells: tuple[Cell, ...]  # ranked first, then unranked, then not measured


class Series(NamedTuple):
    """One chart: a cohort family that differs only in the swept axis."""

    element_id: str  # derived from digests, stable across builds
    protocol: str
    environment: str
    metric: str
    unit: str
    swept: str | None
    fixed: Shape  # the shape without the swept axis
    rows: tuple[ShapeRow, ...]  # sorted by x
    implementations: tuple[Implementation, ...]  # the traces, sorted by label


class GpuSection(NamedTuple):
    environment: str
    series: tuple[Series, ...]
    missing: tuple[Implementation, ...]  # measured in this pass elsewhere, not on this GPU


class PassSection(NamedTuple):
    name: str
    gpus: tuple[GpuSection, ...]
    missing_gpus: tuple[str, ...]  # environments of the kernel not measured in this pass


def passes_of(kernel: Kernel) -> tuple[PassSection, ...]:
    """A kernel's passes, each GPU's charts and rankings: what its page shows.

    Derived when the page is planned, not with the analysis: in the render workers, beside
    the other pages, rather than on the one CPU the analysis runs on; dropped once written.
    """
    implementations = {i.digest: i for i in kernel.implementations}
    by_pass: dict[str, list[RunFacts]] = defaultdict(list)
    for run in kernel.runs:
        by_pass[run.pass_name].append(run)
    return tuple(
        _pass_section(kernel.key, name, by_pass[name], implementations, kernel.environments)
        for name in kernel.pass_names
    )


def _pass_section(
    kernel_key: str,
    pass_name: str,
    runs: list[RunFacts],
    implementations: dict[str, Implementation],
    environments: tuple[str, ...],
) -> PassSection:
    by_environment: dict[str, list[RunFacts]] = defaultdict(list)
    for run in runs:
        by_environment[run.environment].append(run)
    # The implementations this pass knows, per metric: what a GPU or a shape may lack.
    universe: dict[tuple[str, str], set[str]] = defaultdict(set)
    for run in runs:
        for value in run.values:
            universe[(value.metric, value.unit)].add(run.implementation)
    everyone = {run.implementation for run in runs}
    gpus = []
    for environment in sorted(by_environment):
        env_runs = by_environment[environment]
        series = _series(kernel_key, env_runs, implementations, universe)
        present = {run.implementation for run in env_runs}
        missing = tuple(implementations[d] for d in implementations if d in everyone - present)
        gpus.append(GpuSection(environment, series, missing))
    missing_gpus = tuple(e for e in environments if e not in by_environment)
    return PassSection(pass_name, tuple(gpus), missing_gpus)


def _series(
    kernel_key: str,
    runs: list[RunFacts],
    implementations: dict[str, Implementation],
    universe: dict[tuple[str, str], set[str]],
) -> tuple[Series, ...]:
    """Charts of one pass on one GPU: per protocol and metric, one per fixed configuration."""
    # cohort → implementation → runs (newest first); cohort = (protocol, metric, unit, workload)
    cohorts: dict[tuple[str, str, str], dict[str, dict[str, list[RunFacts]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    shapes: dict[str, Shape] = {}
    for run in runs:
        shapes[run.workload] = run.shape
        for value in run.values:
            cohorts[(run.protocol, value.metric, value.unit)][run.workload][
                run.implementation
            ].append(run)
    found = []
    for (protocol, metric, unit), by_workload in sorted(
        cohorts.items(), key=lambda i: (i[0][1] != LATENCY, i[0])
    ):
        known = universe[(metric, unit)]
        traces = tuple(implementations[d] for d in implementations if d in known)
        for swept, fixed, members in _sweeps({w: shapes[w] for w in by_workload}):
            rows = []
            for workload in members:
                x = dict(shapes[workload].axes).get(swept) if swept else None
                rows.append(
                    ShapeRow(
                        workload,
                        x,
                        shapes[workload],
                        _rank(by_workload[workload], traces, metric, unit),
                    )
                )
            rows.sort(key=lambda r: (r.x if r.x is not None else -1, r.workload))
            identity = json.dumps(
                [
                    kernel_key,
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
                Series(
                    element_id="chart-" + short_hash(identity),
                    protocol=protocol,
                    environment=runs[0].environment,
                    metric=metric,
                    unit=unit,
                    swept=swept,
                    fixed=fixed,
                    rows=tuple(rows),
                    implementations=traces,
                )
            )
    return tuple(found)


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


def _rank(
    by_implementation: dict[str, list[RunFacts]],
    traces: tuple[Implementation, ...],
    metric: str,
    unit: str,
) -> tuple[Cell, ...]:
    """Rank one cohort: the newest run of each implementation; lower is better."""
    measured: list[tuple[Implementation, RunFacts, Value | None, int]] = []
    for implementation in traces:
        runs = by_implementation.get(implementation.digest)
        if not runs:
            continue
        runs.sort(key=lambda r: (r.observed_at, r.digest), reverse=True)
        newest = runs[0]
        value = newest.value(metric, unit) if newest.status == "passed" else None
        measured.append((implementation, newest, value, len(runs) - 1))
    passed = sorted(
        (m for m in measured if m[2] is not None),
        key=lambda m: (m[2].centre, m[0].label, m[0].digest),  # type: ignore[union-attr]
    )
    best = passed[0][2].centre if passed else None  # type: ignore[union-attr]
    baseline = next((m[2].centre for m in passed if m[0].baseline), None)  # type: ignore[union-attr]
    cells = []
    for rank, (implementation, run, value, earlier) in enumerate(passed, start=1):
        centre = value.centre  # type: ignore[union-attr]
        cells.append(
            Cell(
                implementation,
                run,
                value,
                rank,
                centre / best if best else None,
                centre / baseline if baseline else None,
                earlier,
            )
        )
    cells += [Cell(i, r, None, None, None, None, e) for i, r, v, e in measured if v is None]
    seen = {m[0].digest for m in measured}
    cells += [Cell(i, None, None, None, None, None, 0) for i in traces if i.digest not in seen]
    return tuple(cells)
