"""Leaderboards: an operation's runs ranked where a chart of lines cannot show them, as plain
data (site/leaderboard.py formats it).

An operation is shown as leaderboards when some cohort holds more implementations than a chart
can tell apart (a GPU MODE problem's hundreds of submissions), when every protocol and GPU
measured it at one workload only (a leaderboard suite's one score: nothing to draw a line
through), or when its workloads do not form sweeps along one axis (a trace's real calls, which
vary in several axes at once). A board is one protocol, GPU, metric and statistic: rankings
never mix them. Within a board each workload is a cohort, ranked on its own; an implementation
is ranked by its best passed run there, and runs that did not pass are evidence, listed with
their status, never ranked.
"""

from __future__ import annotations

import bisect
import json
import math
from collections import defaultdict
from collections.abc import Iterable
from typing import NamedTuple

from sitegen.analysis.kernels import Kernel, RunFacts, Series, newest_first
from sitegen.analysis.series import sweeps
from sitegen.content.records import RecordEvent, RecordHistory
from sitegen.content.run_summary import LATENCY, Shape, Value
from sitegen.model.names import short_hash

MAX_CHART_SERIES = 8  # more implementations in one cohort than a chart's lines can tell apart
MIN_SWEEP_POINTS = 2  # fewer points a chart on average, and the workloads do not form sweeps
BEST_SHOWN = 8  # the implementations a board's chart draws


class Entry(NamedTuple):
    """One implementation in one cohort: its best passed run there."""

    rank: int
    series: Series
    run: RunFacts  # the best of its passed runs in the cohort
    value: Value
    vs_best: float  # its value / the best value: 1 for the best
    others: tuple[RunFacts, ...]  # its other runs in the cohort, best first


class Cohort(NamedTuple):
    """One workload of a board, ranked."""

    workload: str
    shape: Shape
    entries: tuple[Entry, ...]  # best first
    failed: tuple[RunFacts, ...]  # runs whose status is not `passed`, newest first
    unvalued: tuple[RunFacts, ...]  # passed runs without a value for the board's metric
    records: tuple[tuple[str, tuple[RecordEvent, ...]], ...]  # comparisons of its runs


class Board(NamedTuple):
    element_id: str  # derived from digests, stable across builds
    protocol: str
    environment: str
    metric: str
    unit: str
    statistic: str  # the protocol's primary statistic, as the values report it
    cohorts: tuple[Cohort, ...]  # by shape
    best: tuple[Series, ...]  # the implementations the chart draws, best overall first

    @property
    def runs(self) -> int:
        return sum(
            len(c.failed) + len(c.unvalued) + sum(1 + len(e.others) for e in c.entries)
            for c in self.cohorts
        )


def is_leaderboard(kernel: Kernel) -> bool:
    """Whether the operation's page ranks rather than charts (see the module's docstring)."""
    if not kernel.runs:
        return False
    per_cohort: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    workloads: dict[tuple[str, str], set[str]] = defaultdict(set)
    for run in kernel.runs:
        per_cohort[run.cohort].add(run.series_key)
        workloads[(run.protocol, run.environment)].add(run.workload)
    crowded = any(len(series) > MAX_CHART_SERIES for series in per_cohort.values())
    if crowded or all(len(found) == 1 for found in workloads.values()):
        return True
    # Workloads that vary in several axes at once (a trace's real calls) give charts of a point
    # or two: nothing to draw a line through.
    shapes = {run.workload: run.shape for run in kernel.runs}
    charts = points = 0
    for found in workloads.values():
        for _, _, members in sweeps({w: shapes[w] for w in found}):
            charts += 1
            points += len(members)
    return points < MIN_SWEEP_POINTS * charts


def boards_of(kernel: Kernel, records: RecordHistory) -> tuple[Board, ...]:
    """Every board of the operation, by GPU then protocol then metric."""
    series = kernel.series_by_key
    # (protocol, environment, metric, unit, statistic) → workload → runs
    grouped: dict[tuple[str, str, str, str, str], dict[str, list[RunFacts]]] = defaultdict(
        lambda: defaultdict(list)
    )
    primary: dict[tuple[str, str, str], tuple[str, str, str]] = {}  # cohort → its first metric
    # The first metric of each protocol on each GPU: a cohort where nothing passed joins it.
    usual: dict[tuple[str, str], tuple[str, str, str]] = {}
    for run in sorted(kernel.runs, key=lambda r: r.digest):
        for value in run.values:
            key = (run.protocol, run.environment, value.metric, value.unit, value.statistic)
            grouped[key][run.workload].append(run)
            primary.setdefault(run.cohort, key[2:])
            usual.setdefault((run.protocol, run.environment), key[2:])
    for run in kernel.runs:  # a run without a value joins its cohort's first board
        if not run.values:
            fallback = usual.get((run.protocol, run.environment), (LATENCY, "ns", ""))
            metric, unit, statistic = primary.get(run.cohort, fallback)
            key = (run.protocol, run.environment, metric, unit, statistic)
            grouped[key][run.workload].append(run)
    boards = []
    for key, by_workload in grouped.items():
        protocol, environment, metric, unit, statistic = key
        cohorts = tuple(
            sorted(
                (
                    _cohort(workload, runs, series, metric, unit, records)
                    for workload, runs in by_workload.items()
                ),
                key=lambda c: (c.shape.dtype, c.shape.axes, c.shape.scalars, c.workload),
            )
        )
        identity = json.dumps([kernel.key, *key])
        boards.append(
            Board(
                "board-" + short_hash(identity),
                protocol,
                environment,
                metric,
                unit,
                statistic,
                cohorts,
                _best(cohorts),
            )
        )
    boards.sort(key=lambda b: (b.environment, b.protocol, b.metric != LATENCY, b.metric, b.unit))
    return tuple(boards)


def _cohort(
    workload: str,
    runs: list[RunFacts],
    series: dict[str, Series],
    metric: str,
    unit: str,
    records: RecordHistory,
) -> Cohort:
    valued: dict[str, list[tuple[float, RunFacts, Value]]] = defaultdict(list)
    failed, unvalued = [], []
    for run in runs:
        if run.status != "passed":
            failed.append(run)
            continue
        value = run.value(metric, unit)
        if value is None:
            unvalued.append(run)
        else:
            valued[run.series_key].append((value.centre, run, value))
    best_of = []
    for key, found in valued.items():
        found.sort(key=lambda item: (item[0], item[1].digest))
        best_of.append((found[0][0], series[key].label.lower(), key, found))
    best_of.sort()
    top = best_of[0][0] if best_of else 0.0
    entries = tuple(
        Entry(
            rank,
            series[key],
            found[0][1],
            found[0][2],
            centre / top if top else 1.0,
            tuple(item[1] for item in found[1:]),
        )
        for rank, (centre, _, key, found) in enumerate(best_of, start=1)
    )
    digests = {run.digest for run in runs}
    held = sorted({key for digest in digests for key in records.by_run.get(digest, ())})
    return Cohort(
        workload,
        runs[0].shape,
        entries,
        tuple(newest_first(failed)),
        tuple(sorted(unvalued, key=lambda r: r.digest)),
        tuple((key, records.comparisons[key]) for key in held),
    )


def _best(cohorts: Iterable[Cohort]) -> tuple[Series, ...]:
    """The implementations a board's chart draws: those ranked at the most workloads, then by
    the geometric mean of their ratio to the best where they were ranked."""
    ratios: dict[str, list[float]] = defaultdict(list)
    found: dict[str, Series] = {}
    for cohort in cohorts:
        for entry in cohort.entries:
            ratios[entry.series.key].append(entry.vs_best)
            found[entry.series.key] = entry.series
    ranked = sorted(
        ratios,
        key=lambda key: (
            -len(ratios[key]),
            math.fsum(math.log(r) for r in ratios[key]) / len(ratios[key]),
            found[key].label.lower(),
            key,
        ),
    )
    return tuple(found[key] for key in ranked[:BEST_SHOWN])


def distribution(values: list[float], bins: int = 24) -> list[tuple[float, float, int]]:
    """How many values fall in each of `bins` bins, equal in log scale when the values span
    more than a factor of 20 (a leaderboard's submissions span orders of magnitude), else equal
    in width: (low, high, count) per bin."""
    positive = sorted(v for v in values if v > 0)
    if not positive:
        return []
    low, high = positive[0], positive[-1]
    if high == low:
        return [(low, high, len(positive))]
    logarithmic = high / low > 20
    if logarithmic:
        edges = [
            math.exp(math.log(low) + (math.log(high) - math.log(low)) * i / bins)
            for i in range(bins + 1)
        ]
    else:
        edges = [low + (high - low) * i / bins for i in range(bins + 1)]
    counts = [0] * bins
    for value in positive:
        counts[min(bisect.bisect_right(edges, value) - 1, bins - 1)] += 1
    return [(edges[i], edges[i + 1], counts[i]) for i in range(bins)]
