"""Who wins where: at each shape of a chart, the fastest implementation, named only where its
recorded spread clears the runner-up's; a tie otherwise. And, over a chart's swept axis, the
stretches where each one wins, which the site says in one sentence.

A point's winner must be beyond the noise the runs themselves recorded: the fastest run's high
percentile (p80) below the runner-up's low one (p20). Where either run recorded no spread, the
point has no verdict: a median alone cannot say whether a gap is noise.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Literal, NamedTuple

from sitegen.analysis.kernels import Series
from sitegen.analysis.series import Cell, Chart, ShapeRow
from sitegen.content.run_summary import Shape

Outcome = Literal["win", "tie", "alone", "unknown"]


class PointVerdict(NamedTuple):
    """The verdict at one shape of a chart."""

    workload: str
    x: int | None  # the swept axis's value; None on a chart of one shape
    shape: Shape
    outcome: Outcome  # win; tie; alone (one implementation measured); unknown (no spread)
    leader: Series  # the fastest by its median: the winner of a win
    tied: tuple[Series, ...]  # a tie's implementations within the leader's spread, leader first
    margin: float | None  # a win's runner-up median / the winner's: how many times faster
    runner_up: Series | None  # the second by its median; None when one was measured


class ChartVerdicts(NamedTuple):
    chart: Chart
    points: tuple[PointVerdict, ...]  # by x, shapes without a measured value left out


def verdicts_of(chart: Chart) -> ChartVerdicts:
    """Each shape's verdict, along the chart's swept axis."""
    points = (point_verdict(row) for row in chart.rows)
    return ChartVerdicts(chart, tuple(p for p in points if p is not None))


def point_verdict(row: ShapeRow) -> PointVerdict | None:
    """One shape's verdict: None when no implementation has a value there."""
    return judge(row.cells, row.workload, row.x, row.shape)


def judge(cells: Sequence[Cell], workload: str, x: int | None, shape: Shape) -> PointVerdict | None:
    """The verdict on one cohort's ranked cells (`rank_cohort`, fastest first)."""
    ranked = [cell for cell in cells if cell.value is not None]
    if not ranked:
        return None
    leader = ranked[0].series
    if len(ranked) == 1:
        return PointVerdict(workload, x, shape, "alone", leader, (), None, None)
    first, second = ranked[0], ranked[1]
    best, next_best = _spread(first), _spread(second)
    if best is None or next_best is None:
        return PointVerdict(workload, x, shape, "unknown", leader, (), None, second.series)
    if best[1] < next_best[0]:
        centre = first.value.centre  # type: ignore[union-attr]
        margin = second.value.centre / centre if centre else None  # type: ignore[union-attr]
        return PointVerdict(workload, x, shape, "win", leader, (), margin, second.series)
    # Tied with the leader: every implementation whose spread reaches into the leader's.
    tied = tuple(cell.series for cell in ranked if (s := _spread(cell)) is None or s[0] <= best[1])
    return PointVerdict(workload, x, shape, "tie", leader, tied, None, second.series)


def _spread(cell: Cell) -> tuple[float, float] | None:
    value = cell.value
    if value is None or value.low is None or value.high is None:
        return None
    return (value.low, value.high)


class Stretch(NamedTuple):
    """Consecutive points of a chart with one outcome: `first`..`last` index into its points."""

    outcome: Outcome
    series: Series | None  # the winner of a win, the one measured of `alone`; else None
    first: int
    last: int


def stretches(points: tuple[PointVerdict, ...]) -> tuple[Stretch, ...]:
    """The chart's points grouped into runs of one outcome (and one winner), in x order."""
    found: list[Stretch] = []
    for index, point in enumerate(points):
        series = point.leader if point.outcome in ("win", "alone") else None
        last = found[-1] if found else None
        if last is not None and last.outcome == point.outcome and last.series == series:
            found[-1] = last._replace(last=index)
        else:
            found.append(Stretch(point.outcome, series, index, index))
    return tuple(found)


def sentence(verdicts: ChartVerdicts, best_word: str, where: str = "") -> str:
    """The chart's verdicts in one sentence: `Liger fastest for hidden ≥ 2048 on H100; tie at
    hidden = 1024.` `best_word` is `fastest` or `lowest`; `where` is appended to the first
    phrase (` on H100`)."""
    points = verdicts.points
    if not points:
        return ""
    axis = verdicts.chart.swept
    # Each outcome once, at its first stretch, with every stretch it holds: `A fastest for
    # hidden ≤ 1024 and hidden = 8192`.
    phrases: dict[tuple[Outcome, str | None], list[str]] = {}
    labels: dict[tuple[Outcome, str | None], str] = {}
    for stretch in stretches(points):
        key = (stretch.outcome, stretch.series.key if stretch.series else None)
        phrases.setdefault(key, []).append(_range(points, stretch, axis))
        labels[key] = stretch.series.label if stretch.series else ""
    parts = []
    for (outcome, _), ranges in phrases.items():
        label = labels[(outcome, _)]
        at = " and ".join(ranges)
        if outcome == "win":
            parts.append(f"{label} {best_word} {at}")
        elif outcome == "alone":
            parts.append(f"only {label} measured {at}")
        elif outcome == "tie":
            parts.append(f"tie {at}")
        else:
            parts.append(f"no verdict {at} (no spread recorded)")
    parts[0] += where
    text = "; ".join(parts)
    return text[0].upper() + text[1:] + "."


def _range(points: tuple[PointVerdict, ...], stretch: Stretch, axis: str | None) -> str:
    if axis is None or points[stretch.first].x is None:
        return "at this shape"
    low, high = points[stretch.first].x, points[stretch.last].x
    if stretch.first == 0 and stretch.last == len(points) - 1 and len(points) > 1:
        return f"at all {len(points)} points measured ({axis} {low:,}–{high:,})"
    if stretch.first == stretch.last:
        return f"at {axis} = {low:,}"
    if stretch.first == 0:
        return f"for {axis} ≤ {high:,}"
    if stretch.last == len(points) - 1:
        return f"for {axis} ≥ {low:,}"
    return f"for {axis} {low:,}–{high:,}"


class Tally(NamedTuple):
    """A summary of many points' verdicts: wins by implementation, ties, and the rest."""

    points: int
    wins: tuple[tuple[Series, int], ...]  # most wins first
    ties: int
    unjudged: int  # one implementation measured, or no spread


def tally(verdicts: Iterable[ChartVerdicts]) -> Tally:
    """Count the shapes of several charts (a pass on a GPU) by outcome: each cohort once, though
    a crossed sweep shows its workload in two charts (with one verdict: one cohort, one metric)."""
    return tally_points(((c.chart.protocol, p.workload), p) for c in verdicts for p in c.points)


def tally_points(points: Iterable[tuple[tuple[str, str], PointVerdict]]) -> Tally:
    """Count verdicts by outcome, each (protocol, workload) once."""
    by_cohort: dict[tuple[str, str], PointVerdict] = {}
    for key, point in points:
        by_cohort.setdefault(key, point)
    wins: Counter[str] = Counter()
    series: dict[str, Series] = {}
    ties = unjudged = 0
    for point in by_cohort.values():
        if point.outcome == "win":
            wins[point.leader.key] += 1
            series[point.leader.key] = point.leader
        elif point.outcome == "tie":
            ties += 1
        else:
            unjudged += 1
    ordered = sorted(wins.items(), key=lambda i: (-i[1], series[i[0]].label.lower(), i[0]))
    return Tally(len(by_cohort), tuple((series[k], n) for k, n in ordered), ties, unjudged)
