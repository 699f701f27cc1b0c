"""Data-quality marks: where a measurement gives a reader reason to doubt it, each with a
one-line reason (docs/methodology.md has the rules and thresholds). A mark never hides or
drops a run; it says what to check.

- `over-limit`: achieved bandwidth or throughput above the GPU's peak (analysis/speed_of_light.py).
- `no-spread`: a timing run whose p20, p50 and p80 (or p05 and p95) are identical: one timing
  repeated, a timer too coarse for the kernel, or one value written into every quantile; not a
  distribution of timings.
- `host-bound`: latency flat, within its noise, across a sweep while the bytes moved grow at
  least GROWTH times: the shape of a launch- or host-bound measurement.
- `disagrees`: the same implementation, workload and pass on the same GPU product, measured
  in another environment or by another source, the newest run of each more than
  DISAGREEMENT times apart and beyond both spreads. Each links the other.
- `after-regression`: after a regression of its series' history, not since undone
  (analysis/regressions.py; the site says which).
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping
from typing import Any, NamedTuple

from sitegen.analysis.kernels import Analysis, RunFacts, newer
from sitegen.analysis.speed_of_light import Figures
from sitegen.content.catalog import Catalog
from sitegen.content.run_summary import LATENCY, Value
from sitegen.superseded import stop_if_superseded

OVER_LIMIT = "over-limit"
NO_SPREAD = "no-spread"
HOST_BOUND = "host-bound"
DISAGREES = "disagrees"
AFTER_REGRESSION = "after-regression"
KINDS = (OVER_LIMIT, NO_SPREAD, HOST_BOUND, DISAGREES, AFTER_REGRESSION)
TITLES = {
    OVER_LIMIT: "over the physical limit",
    NO_SPREAD: "no spread",
    HOST_BOUND: "host-bound sweep",
    DISAGREES: "disagrees",
    AFTER_REGRESSION: "after a regression",
}
GROWTH = 8.0  # host-bound: the bytes moved across the flat stretch grow at least this much
# An 8× sweep of the main tensor moves a little less than 8× the bytes (its weights do not
# grow with it): 1 % of slack.
SLACK = 0.99
# Not growing: no median more than this much above the stretch's first, or than the widest
# relative p20–p80 spread of the stretch where that is wider (its own noise).
FLAT = 0.10
DISAGREEMENT = 2.0  # disagrees: the medians more than this factor apart


class Mark(NamedTuple):
    kind: str  # one of KINDS
    reason: str  # one line
    other: str = ""  # disagrees: the digest of the run it disagrees with

    @property
    def title(self) -> str:
        return TITLES[self.kind]


class Quality(NamedTuple):
    """Every run's speed-of-light figures and marks, made once a build."""

    figures: dict[str, Figures]  # by run digest, where any figure is stated
    marks: dict[str, tuple[Mark, ...]]  # by run digest, marked runs only, in KINDS order

    def of(self, digest: str) -> tuple[Mark, ...]:
        return self.marks.get(digest, ())


def assess(
    analysis: Analysis,
    catalog: Catalog,
    figures: dict[str, Figures],
    regressions: Mapping[str, str],
    runs: Collection[RunFacts] | None = None,
) -> Quality:
    """Every mark of every run. `regressions`: the reason of each run that sits after a
    regression of its series (run digest → one line). `runs`: only these runs' marks (and
    `figures`, `regressions` of these alone); where they are whole series, those are the
    marks the whole catalog gives them, since a mark compares a run only with runs of its
    own series (a sweep, the same implementation elsewhere, its series' history)."""
    runs = analysis.runs.values() if runs is None else runs
    found: dict[str, list[Mark]] = defaultdict(list)
    for digest, figure in figures.items():
        mark = over_limit(figure)
        if mark is not None:
            found[digest].append(mark)
    for run in runs:
        mark = no_spread(run)
        if mark is not None:
            found[run.digest].append(mark)
    stop_if_superseded()  # each step ~0.1–0.2 s at 100k runs (`sitegen serve`'s home page)
    for digest, mark in host_bound(runs, figures):
        found[digest].append(mark)
    stop_if_superseded()
    products = {
        entry.digest: gpu_of(entry.spec["hardware"])
        for entry in catalog.of_kind("ExecutionEnvironment")
    }
    titles = {
        entry.digest: entry.title or entry.name for entry in catalog.of_kind("ExecutionEnvironment")
    }
    for digest, mark in disagreements(runs, products, titles):
        found[digest].append(mark)
    for digest, reason in regressions.items():
        found[digest].append(Mark(AFTER_REGRESSION, reason))
    order = {kind: index for index, kind in enumerate(KINDS)}
    return Quality(
        figures,
        {
            digest: tuple(sorted(marks, key=lambda m: (order[m.kind], m.other)))
            for digest, marks in sorted(found.items())
        },
    )


def over_limit(figures: Figures) -> Mark | None:
    """Above the GPU's peak bandwidth or throughput: the measurement, the work stated or the
    table is wrong."""
    peak = figures.peak
    if peak is None:
        return None
    gpu = f"{peak.product} ({peak.form})"
    if figures.bandwidth_share is not None and figures.bandwidth_share > 1:
        return Mark(
            OVER_LIMIT,
            f"moves at least {figures.achieved_gbs:,.0f} GB/s, {figures.bandwidth_share:.2f}× "
            f"the {gpu}'s peak memory bandwidth of {peak.bandwidth_gbs:,.0f} GB/s",
        )
    if figures.throughput_share is not None and figures.throughput_share > 1:
        return Mark(
            OVER_LIMIT,
            f"does {figures.achieved_tflops:,.1f} TFLOP/s of {figures.work.dtype}, "
            f"{figures.throughput_share:.2f}× the {gpu}'s dense peak of "
            f"{figures.peak_tflops:,.1f} TFLOP/s",
        )
    return None


def no_spread(run: RunFacts) -> Mark | None:
    """Identical quantiles: p20 = p50 = p80, or p05 = p95."""
    value = run.value(LATENCY, "ns")
    if value is None or value.spread is None or value.low is None or value.high is None:
        return None
    low_name, high_name = value.spread
    if value.low != value.high:
        return None
    if low_name == "p20":
        if value.centre != value.low:
            return None
        said = f"p20 = {value.statistic} = p80 = {duration(value.centre)}"
    else:
        said = f"{low_name} = {high_name} = {duration(value.low)}"
    return Mark(NO_SPREAD, f"{said}: no distribution of timings, so noise cannot be told apart")


def duration(nanoseconds: float) -> str:
    """`140.6 µs`, `44.12 ms`: four significant digits in the unit a kernel engineer reads."""
    if nanoseconds < 1e6:
        return f"{nanoseconds / 1e3:.4g} µs"
    return f"{nanoseconds / 1e6:.4g} ms"


class _SweepPoint(NamedTuple):
    bytes_moved: int
    axis_value: int
    value: Value
    digest: str


def host_bound(runs: Iterable[RunFacts], figures: Mapping[str, Figures]) -> list[tuple[str, Mark]]:
    """Runs on a stretch of a sweep where latency stays flat while the bytes moved grow at
    least GROWTH times. A sweep: one series, pass, GPU, protocol and revision, every axis but
    one fixed."""
    sweeps: dict[tuple[object, ...], list[_SweepPoint]] = defaultdict(list)
    names: dict[tuple[object, ...], str] = {}
    for run in runs:
        figure = figures.get(run.digest)
        value = run.value(LATENCY, "ns")
        if figure is None or figure.work.bytes_moved is None or value is None:
            continue
        revision = run.revision.commit if run.revision else ""
        cell = (run.kernel_key, run.series_key, run.pass_name, run.environment, run.protocol)
        shape = run.shape
        for index, (axis, size) in enumerate(shape.axes):
            fixed = shape.axes[:index] + shape.axes[index + 1 :]
            key: tuple[object, ...] = (
                *cell,
                revision,
                run.release,
                shape.dtype,
                shape.scalars,
                axis,
                fixed,
            )
            sweeps[key].append(_SweepPoint(figure.work.bytes_moved, size, value, run.digest))
            names[key] = axis
    marked: dict[str, Mark] = {}
    for sweep, points in sorted(sweeps.items(), key=lambda item: repr(item[0])):
        if len({p.axis_value for p in points}) < 2:
            continue
        points.sort(key=lambda p: (p.bytes_moved, p.digest))
        for stretch in _flat_stretches(points):
            first, last = stretch[0], stretch[-1]
            centres = [p.value.centre for p in stretch]
            reason = (
                f"latency {duration(min(centres))}–{duration(max(centres))} across "
                f"{names[sweep]} = {first.axis_value:,} … {last.axis_value:,} while the bytes "
                f"moved grow {last.bytes_moved / first.bytes_moved:.0f}×: launch- or host-bound"
            )
            for point in stretch:
                marked.setdefault(point.digest, Mark(HOST_BOUND, reason))
    return sorted(marked.items())


def _flat_stretches(points: list[_SweepPoint]) -> list[list[_SweepPoint]]:
    """From each start, the longest stretch whose latency does not grow (no median above the
    first's by more than the widest noise of any of its runs) while its bytes grow GROWTH times
    or more; one inside a longer one is not repeated."""
    found = []
    covered = 0
    for start in range(len(points)):
        last = None
        lowest = highest = points[start].value.centre
        noise = max(FLAT, _relative_spread(points[start].value))
        for stop in range(start + 1, len(points)):
            value = points[stop].value
            lowest, highest = min(lowest, value.centre), max(highest, value.centre)
            noise = max(noise, _relative_spread(value))
            grown = points[stop].bytes_moved >= GROWTH * SLACK * points[start].bytes_moved
            # Not growing: no median above the stretch's first beyond the noise. A sweep that
            # falls as its data grows 8× (a first point of overhead) is no more a kernel's.
            if grown and lowest > 0 and highest <= points[start].value.centre * (1 + noise):
                last = stop
        if last is not None and last >= covered:
            found.append(points[start : last + 1])
            covered = last + 1
    return found


def _relative_spread(value: Value) -> float:
    """The p20–p80 (or p05–p95) width over the median: the run's own noise; 0 unrecorded."""
    if value.low is None or value.high is None or value.centre <= 0:
        return 0.0
    return (value.high - value.low) / value.centre


def gpu_of(hardware: Mapping[str, Any]) -> tuple[str, str]:
    """An environment's GPU product and form factor ("" where it names none)."""
    return str(hardware.get("product", "")), str(hardware.get("formFactor", ""))


def disagreements(
    runs: Iterable[RunFacts],
    gpus: Mapping[str, tuple[str, str]],
    titles: Mapping[str, str],
) -> list[tuple[str, Mark]]:
    """Pairs of the newest runs of one implementation, workload, pass and GPU product in two
    environments (or sources) whose medians are more than DISAGREEMENT apart beyond both
    spreads: both marked, each naming the other. Two forms of one product that both name
    their form factor (an A100 of 40 GB and one of 80 GB) are two GPUs, not compared."""
    newest: dict[tuple[str, str, str, str], dict[tuple[str, str], RunFacts]] = defaultdict(dict)
    for run in runs:
        product = gpus.get(run.environment, ("", ""))[0]
        if run.status != "passed" or not product or run.value(LATENCY, "ns") is None:
            continue
        cell = newest[(run.series_key, run.workload, run.pass_name, product)]
        where = (run.environment, run.source)
        if newer(run, cell.get(where)):
            cell[where] = run
    found: list[tuple[str, Mark]] = []
    for (_, _, _, product), places in sorted(newest.items()):
        for a, b in itertools.combinations(sorted(places.values(), key=lambda r: r.digest), 2):
            forms = {gpus[a.environment][1], gpus[b.environment][1]}
            if len(forms - {""}) > 1:
                continue
            va, vb = a.value(LATENCY, "ns"), b.value(LATENCY, "ns")
            if va is None or vb is None or not apart(va, vb):
                continue
            for run, other, mine, theirs in ((a, b, va, vb), (b, a, vb, va)):
                factor = max(mine.centre, theirs.centre) / min(mine.centre, theirs.centre)
                word = "slower" if mine.centre > theirs.centre else "faster"
                reason = (
                    f"{factor:.1f}× {word} than the same implementation, workload and pass on "
                    f"the {product} of {titles.get(other.environment, 'another environment')}"
                    f" ({other.source or 'no source'}), beyond both spreads"
                )
                found.append((run.digest, Mark(DISAGREES, reason, other.digest)))
    return found


def apart(a: Value, b: Value) -> bool:
    """Medians more than DISAGREEMENT apart, and the spreads (the median alone where none is
    recorded) do not overlap."""
    if min(a.centre, b.centre) <= 0:
        return False
    if max(a.centre, b.centre) <= DISAGREEMENT * min(a.centre, b.centre):
        return False
    slow, fast = (a, b) if a.centre > b.centre else (b, a)
    slow_low = slow.low if slow.low is not None else slow.centre
    fast_high = fast.high if fast.high is not None else fast.centre
    return slow_low > fast_high
