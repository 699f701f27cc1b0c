"""A series' history: its value at one cell (workload, protocol, GPU, metric) run after run,
in the order of the code it measured.

A run's place is the commit of the code it measured where its importer reads one (the commit's
date), else when it was observed: so two runs at one commit (a CI run and a release run) sit
together, and a run of no known commit sits by its own date. Failed runs and runs without the
metric take no part. Everything here is plain data; site/history.py draws it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import NamedTuple

from sitegen.analysis.kernels import Kernel, RunFacts, Series
from sitegen.analysis.series import metrics_of
from sitegen.content.run_summary import Shape, Value


class HistoryPoint(NamedTuple):
    run: RunFacts
    value: Value
    when: str  # the commit's instant, else the run's: the point's place on the time axis

    @property
    def commit(self) -> str:
        return self.run.revision.commit if self.run.revision else ""

    @property
    def tag(self) -> str:
        """The release this run was made for; ""."""
        return self.run.revision.tag if self.run.revision else ""


class SeriesHistory(NamedTuple):
    """One series at one cell, oldest point first."""

    series: Series
    pass_name: str
    environment: str
    protocol: str
    workload: str
    shape: Shape
    metric: str
    unit: str
    points: tuple[HistoryPoint, ...]

    @property
    def key(self) -> tuple[str, str, str, str, str, str]:
        return (
            self.series.key,
            self.environment,
            self.protocol,
            self.workload,
            self.metric,
            self.unit,
        )

    @property
    def reference(self) -> tuple[str, str] | None:
        """The commit the source compares this kernel against, and its instant, if any."""
        for point in reversed(self.points):
            revision = point.run.revision
            if revision is not None and revision.reference:
                return revision.reference, revision.reference_at
        return None


def point_order(run: RunFacts) -> tuple[str, str, str]:
    """Where a run sits in its series' history (see the module's docstring)."""
    revision = run.revision
    when = revision.committed_at if revision and revision.committed_at else run.observed_at
    return (when, run.observed_at, run.digest)


def histories_of(kernel: Kernel, environment: str | None = None) -> tuple[SeriesHistory, ...]:
    """Every series of the kernel at every cell, measured once or more (on one GPU if given),
    in a fixed order: pass, GPU, protocol, workload, metric, series label."""
    runs = kernel.runs
    if environment is not None:
        runs = tuple(run for run in runs if run.environment == environment)
    return in_history_order(kernel, cell_histories(kernel, runs))


def cell_histories(kernel: Kernel, runs: Iterable[RunFacts]) -> list[SeriesHistory]:
    """The histories of `kernel`'s `runs`, in no order: a series at a cell (pass, GPU,
    protocol, workload, metric and unit) measured once or more. A cell's runs are of one
    cohort: a kernel's histories are its cohorts' (site/history.py holds them a cohort at a
    time)."""
    series = kernel.series_by_key
    cells: dict[tuple[str, str, str, str, str, str, str], list[RunFacts]] = defaultdict(list)
    for run in runs:
        if run.status != "passed":
            continue
        for metric, unit in metrics_of(run):
            key = (
                run.pass_name,
                run.environment,
                run.protocol,
                run.workload,
                metric,
                unit,
                run.series_key,
            )
            cells[key].append(run)
    found = []
    for (pass_name, env, protocol, workload, metric, unit, series_key), runs_at in cells.items():
        points = _points(runs_at, metric, unit)
        if points:
            found.append(
                SeriesHistory(
                    series[series_key],
                    pass_name,
                    env,
                    protocol,
                    workload,
                    runs_at[0].shape,
                    metric,
                    unit,
                    points,
                )
            )
    return found


def in_history_order(
    kernel: Kernel, histories: Iterable[SeriesHistory]
) -> tuple[SeriesHistory, ...]:
    """`histories` in `histories_of`'s order, whatever order they come in: every part of a
    cell is in the key, and no two histories are of one cell."""
    order = {name: index for index, name in enumerate(kernel.pass_names)}
    return tuple(
        sorted(
            histories,
            key=lambda h: (
                order.get(h.pass_name, len(order)),
                h.environment,
                h.protocol,
                h.metric != "latency",
                h.metric,
                h.shape.axes,
                h.workload,
                h.series.label.lower(),
                h.series.key,
                h.unit,  # a cell's: histories of one cell but the unit came in the runs' order
            ),
        )
    )


def _points(runs: Iterable[RunFacts], metric: str, unit: str) -> tuple[HistoryPoint, ...]:
    points = []
    for run in sorted(runs, key=point_order):
        value = run.value(metric, unit)
        if value is not None and value.centre > 0:
            points.append(HistoryPoint(run, value, point_order(run)[0]))
    return tuple(points)
