"""Regressions and improvements: a step in a series' history beyond its own noise.

The rule (docs/site.md, "Regressions"), for the points of one series at one cell, oldest first
(analysis/history.py), each a median with its p20–p80 spread; lower is better:

1. At each point i, the level before is the median of the medians of up to WINDOW points
   before it, the level after the median of i and up to WINDOW - 1 points after (of an even
   window, the middle value nearer the other level); the step's factor is after / before.
   Medians of windows, so a lone outlier is never a step, and MIN_SIDE points on each side,
   so a step must hold: a change seen only at the newest run is reported once the next run
   confirms it.
2. It is a regression when the factor is at least the threshold (`--regression-threshold`,
   1.10 unless set) and the spreads part: the median p20 after is above the median p80 before
   (an improvement: the factor at most 1 / threshold, the median p80 after below the median
   p20 before). So noise within the recorded p20–p80 spread is never a step.
3. And beyond the commit-to-commit variation: |log factor| is at least NOISE_MULTIPLE times
   the median |log| of the change from one point to the next over the whole series (a series
   that jumps about at every commit needs a bigger step).
4. Neighbouring points that qualify in the same direction are one step, placed at the
   sharpest change from one point to the next: between the last point before it and the first
   after it, the commit range the change happened in.

5. Runs of one commit are one point (`places`): the same code, so no step falls between them.
6. A step is the code's only where the implementation changed across it and little else moved
   with it: a step of a series whose implementation is the same on both sides (a baseline,
   PyTorch or Transformers, not versioned by the commits) is its environment's; and where steps
   of the same direction between the same two commits of one GPU span SHARED_KERNELS kernels or
   more, the runner or the harness moved, not each kernel's code (`shared_by`).

asv (`asv/step_detect.py`) fits a piecewise-constant function by penalised least absolute
deviations and reports the steps of the fit; its penalty is tuned to the noise, which its
samples estimate. Here every run carries its own spread (do_bench's p20/p80), so the rule uses
it directly, and each reported step can be checked by eye against the two windows it compares.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from sitegen.analysis.history import HistoryPoint, SeriesHistory
from sitegen.content.run_summary import Value

DEFAULT_THRESHOLD = 1.10  # a 10% step: below it, CI noise on a shared GPU is common
WINDOW = 3
MIN_SIDE = 2
NOISE_MULTIPLE = 3.0
# Unrelated kernels rarely change at one commit: this many stepping alike is the machine's doing.
SHARED_KERNELS = 4


class Step(NamedTuple):
    """A step between points `at - 1` and `at` of a series."""

    at: int  # the first point after the step
    factor: float  # the level after / the level before: above 1 is worse
    before: float  # the level before (median of the window's medians)
    after: float

    @property
    def regression(self) -> bool:
        return self.factor > 1


class Found(NamedTuple):
    """A step in one series' history, with the two points it falls between."""

    history: SeriesHistory
    step: Step
    before_at: int = -1  # the last point before the step (runs of no commit may lie between)

    @property
    def last_before(self) -> HistoryPoint:
        return self.history.points[self.before_at if self.before_at >= 0 else self.step.at - 1]

    @property
    def first_after(self) -> HistoryPoint:
        return self.history.points[self.step.at]

    @property
    def regression(self) -> bool:
        return self.step.regression


def find_steps(values: Sequence[Value], threshold: float = DEFAULT_THRESHOLD) -> tuple[Step, ...]:
    """The steps of one series (see the module's docstring); oldest first."""
    if threshold <= 1:
        raise ValueError(f"a threshold is a factor above 1, not {threshold}")
    medians = [value.centre for value in values]
    if len(medians) < 2 * MIN_SIDE or any(m <= 0 for m in medians):
        return ()
    jumps = [abs(math.log(b / a)) for a, b in itertools.pairwise(medians)]
    noise = _median(jumps)
    limit = max(math.log(threshold), NOISE_MULTIPLE * noise)
    candidates: list[tuple[int, Step]] = []  # (direction, step)
    for index in range(MIN_SIDE, len(values) - MIN_SIDE + 1):
        before = [v.centre for v in values[max(0, index - WINDOW) : index]]
        after = [v.centre for v in values[index : index + WINDOW]]
        # Of an even window, the middle value nearer the other side: a step must hold.
        worse = (_median_high(before), _median_low(after))
        better = (_median_low(before), _median_high(after))
        if math.log(worse[1] / worse[0]) >= limit:
            direction, (level_before, level_after) = 1, worse
        elif math.log(better[0] / better[1]) >= limit:
            direction, (level_before, level_after) = -1, better
        else:
            continue
        window = (values[max(0, index - WINDOW) : index], values[index : index + WINDOW])
        if not _spreads_part(*window, direction):
            continue
        step = Step(index, level_after / level_before, level_before, level_after)
        candidates.append((direction, step))
    steps: list[tuple[int, list[Step]]] = []
    for direction, step in candidates:
        previous = steps[-1] if steps else None
        if previous is not None and previous[0] == direction and previous[1][-1].at == step.at - 1:
            previous[1].append(step)
        else:
            steps.append((direction, [step]))
    return tuple(
        max(group, key=lambda s: (abs(math.log(medians[s.at] / medians[s.at - 1])), -s.at))
        for _, group in steps
    )


# statistics' medians, byte for byte, without its checks and conversions: these run ~200,000
# times a build on windows of a few floats.
def _median(values: Iterable[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def _median_low(values: Iterable[float]) -> float:
    ordered = sorted(values)
    return ordered[(len(ordered) - 1) // 2]


def _median_high(values: Iterable[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def _spreads_part(before: Sequence[Value], after: Sequence[Value], direction: int) -> bool:
    """Whether the windows' spreads do not overlap in the step's direction; without recorded
    spreads, the medians alone decide."""
    if any(v.low is None or v.high is None for v in (*before, *after)):
        return True
    lows_after = [v.low for v in after if v.low is not None]
    highs_after = [v.high for v in after if v.high is not None]
    lows_before = [v.low for v in before if v.low is not None]
    highs_before = [v.high for v in before if v.high is not None]
    if direction > 0:
        return _median_low(lows_after) > _median_high(highs_before)
    return _median_high(highs_after) < _median_low(lows_before)


def steps_of(
    histories: Sequence[SeriesHistory], threshold: float = DEFAULT_THRESHOLD
) -> tuple[Found, ...]:
    """Every step of every history, newest first (by the first point after it).

    Runs of one commit are one place (their medians' median): a release run beside a CI run,
    or two sweeps crossing at the cell, measured the same code, so a step can only fall
    between two commits, and a step must hold at two commits, not at two runs of one."""
    found = []
    for history in histories:
        starts, values = places(history.points)
        ends = [start - 1 for start in starts[1:]]  # each place's last point, but the last's
        for step in find_steps(values, threshold):
            before = _last_of_place(history.points, starts[step.at - 1], ends[step.at - 1])
            found.append(Found(history, step._replace(at=starts[step.at]), before))
    found.sort(key=lambda f: (f.first_after.when, f.first_after.run.digest), reverse=True)
    return tuple(found)


def _last_of_place(points: Sequence[HistoryPoint], start: int, end: int) -> int:
    """The last run of the place starting at `start` (runs of no commit may follow it)."""
    commit = points[start].commit
    last = start
    for index in range(start, end + 1):
        if points[index].commit == commit:
            last = index
    return last


def places(points: Sequence[HistoryPoint]) -> tuple[list[int], list[Value]]:
    """Each place's first point and its value: the median of its runs' medians, p20s and p80s.
    A place is a commit; where a series has runs of two commits or more, its runs of no known
    commit take no part (a step to one could not be placed between commits, and such runs,
    published apart from the CI's, may be another machine's); a series of no commits at all
    has a place per run."""
    with_commit = sum(1 for p in points if p.commit) >= 2
    groups: list[list[tuple[int, HistoryPoint]]] = []
    for index, point in enumerate(points):
        if with_commit and not point.commit:
            continue
        if groups and point.commit and groups[-1][0][1].commit == point.commit:
            groups[-1].append((index, point))
        else:
            groups.append([(index, point)])
    starts, values = [], []
    for group in groups:
        starts.append(group[0][0])
        value = group[0][1].value
        if len(group) == 1 and value.spread and value.low is not None and value.high is not None:
            values.append(value)  # a run's own value is its medians' median: most places
            continue
        runs = [p for _, p in group]
        lows = [p.value.low for p in runs]
        highs = [p.value.high for p in runs]
        spread = None if None in lows or None in highs else runs[0].value.spread
        values.append(
            runs[0].value._replace(
                centre=_median(p.value.centre for p in runs),
                low=_median(v for v in lows if v is not None) if spread else None,
                high=_median(v for v in highs if v is not None) if spread else None,
                spread=spread,
            )
        )
    return starts, values


def shared_by(found: Sequence[Found]) -> dict[tuple[str, str, str, bool], int]:
    """How many kernels step alike between the same two runs of one GPU: (environment, the
    place before, the place after, regression) → distinct kernels (a place is the commit, else
    the run's instant)."""
    kernels: dict[tuple[str, str, str, bool], set[str]] = {}
    for item in found:
        kernels.setdefault(moment(item), set()).add(item.first_after.run.kernel_key)
    return {key: len(names) for key, names in kernels.items()}


def moment(item: Found) -> tuple[str, str, str, bool]:
    """Where a step happened: the GPU, the place before and after it, and its direction."""
    before, after = item.last_before, item.first_after
    return (
        item.history.environment,
        before.commit or before.when,
        after.commit or after.when,
        item.regression,
    )


def cause(item: Found, shared: dict[tuple[str, str, str, bool], int]) -> str:
    """`code`, or `machine` where the implementation is the same on both sides (a baseline
    such as PyTorch: its code did not change, its environment did) or many kernels moved at
    once."""
    if item.last_before.run.implementation == item.first_after.run.implementation:
        return "machine"
    return "machine" if shared.get(moment(item), 1) >= SHARED_KERNELS else "code"
