"""Who wins where, in words: the strip under each chart, the sentence that sums it up, and the
tallies of a kernel page's passes and of a GPU page (analysis/verdicts.py decides the verdicts).
"""

from __future__ import annotations

import functools
import operator
from typing import NamedTuple

from sitegen.analysis.kernels import Cohort, Kernel, RunFacts, derived, per_kernel_of_cohorts
from sitegen.analysis.leaderboards import is_leaderboard
from sitegen.analysis.series import metrics_of, rank_cohort
from sitegen.analysis.verdicts import (
    ChartVerdicts,
    PointVerdict,
    Tally,
    judge,
    sentence,
    tally,
    tally_points,
)
from sitegen.content.run_summary import LATENCY
from sitegen.model.digest import short
from sitegen.model.wording import counted
from sitegen.site.format import Wording, anchor, times, wording
from sitegen.site.lookup import SiteLookup
from sitegen.site.records import Link


class StripItem(NamedTuple):
    """One point of a chart's verdict strip."""

    at: str  # the swept axis's value: `1,024`; a shape's label on a chart of one shape
    outcome: str  # win, tie, alone, unknown: the item's class
    name: str  # `Liger`, `tie`, `only Liger`, `no verdict`
    detail: str  # `1.8× faster than Transformers`, `Liger, Transformers`, `no spread recorded`
    colour: str  # the winner's line colour on the chart; ""


class VerdictStrip(NamedTuple):
    axis: str  # the swept axis; ""
    items: tuple[StripItem, ...]
    sentence: str


def verdict_strip(
    verdicts: ChartVerdicts, styles: dict[str, tuple[str, str]], where: str = ""
) -> VerdictStrip:
    """The strip under a chart: at each point the winner beyond the noise, or a tie."""
    chart = verdicts.chart
    words = wording(chart.metric)
    items = []
    for point in verdicts.points:
        at = f"{point.x:,}" if point.x is not None else point.shape.label()
        items.append(_item(point, at, words, styles))
    return VerdictStrip(chart.swept or "", tuple(items), sentence(verdicts, words.best, where))


def _item(
    point: PointVerdict,
    at: str,
    words: Wording,
    styles: dict[str, tuple[str, str]],
) -> StripItem:
    leader = point.leader
    if point.outcome == "win":
        runner_up = point.runner_up.label if point.runner_up else ""
        margin = f"{times(point.margin)} {words.better} than {runner_up}" if point.margin else ""
        return StripItem(at, "win", leader.label, margin, styles[leader.key][0])
    if point.outcome == "tie":
        return StripItem(at, "tie", "tie", ", ".join(s.label for s in point.tied), "")
    if point.outcome == "alone":
        return StripItem(at, "alone", f"only {leader.label}", "nothing to compare", "")
    return StripItem(at, "unknown", "no verdict", "no spread recorded", "")


def tally_text(summary: Tally, words: Wording) -> str:
    """`Liger fastest at 12 of 16 shapes, Transformers at 2; tie at 2.`"""
    if not summary.points:
        return ""
    shapes = counted(summary.points, "shape")
    parts = []
    for number, (series, wins) in enumerate(summary.wins):
        if number == 0:
            parts.append(f"{series.label} {words.best} at {wins:,} of {shapes}")
        else:
            parts.append(f"{series.label} at {wins:,}")
    text = ", ".join(parts)
    rest = []
    if summary.ties:
        rest.append(f"tie at {summary.ties:,}" if parts else f"tie at {summary.ties:,} of {shapes}")
    if summary.unjudged:
        judged = f"{summary.unjudged:,}" if parts or rest else f"{summary.unjudged:,} of {shapes}"
        rest.append(f"no verdict at {judged} (one implementation, or no spread)")
    text = "; ".join(p for p in (text, *rest) if p)
    return text[0].upper() + text[1:] + "."


def gpu_anchor(pass_name: str, gpu_label: str, environment: str) -> str:
    """The id of a pass's GPU section on a kernel page."""
    return anchor(pass_name, gpu_label, short(environment, 8))


class WinsLine(NamedTuple):
    """One pass of one kernel on one GPU, summed up: a row of a kernel or GPU page's table."""

    kernel: Link
    pass_name: str
    gpu: Link  # to the GPU's page
    section: Link  # to the pass's GPU section on the kernel page
    text: str


def leaderboard_kernel(lookup: SiteLookup, key: str) -> bool:
    """Whether the kernel's page is a leaderboard (analysis/leaderboards.py); a look at each
    of its runs, so asked once a kernel (`lookup.memo`), and in `sitegen serve` once while the
    kernel is unchanged."""
    kernel = lookup.kernels[key]
    make = functools.partial(is_leaderboard, kernel)
    return derived(lookup.analysis.held, "leaderboard", kernel, None, make)


def gpu_wins(lookup: SiteLookup, environment: str) -> tuple[WinsLine, ...]:
    """A GPU page's summary: per kernel and pass measured on it, who is fastest where; the same
    verdicts as the kernel page's latency charts, judged cohort by cohort without drawing them."""
    lines: list[WinsLine] = []
    for on_gpus in lookup.memo(_wins_by_kernel)(None).values():
        lines += on_gpus.get(environment, ())
    return tuple(lines)


def held_gpu_wins(lookup: SiteLookup) -> None:
    """Every kernel's `gpu_wins` lines made where the held analysis holds none yet
    (`SiteLookup.held_first`)."""
    lookup.held_first(WINS, _wins_by_kernel)


WINS = "gpu wins"  # what the held analysis holds the GPU pages' lines by


def _wins_by_kernel(lookup: SiteLookup, _: None) -> dict[str, dict[str, list[WinsLine]]]:
    """Each kernel's `gpu_wins` lines, by environment, in kernel order; with a held analysis,
    a kernel's are held while it is the very same object, and each of its cohorts' verdicts
    while the cohort's runs are (~0.2 s at 100k runs for a GPU's page, which sums up every
    kernel measured on it; ~0.15 s for a kernel of ~2,700 runs of which one changed)."""
    part, whole = functools.partial(_cohort_wins, lookup), functools.partial(_kernel_wins, lookup)
    return per_kernel_of_cohorts(lookup.analysis, WINS, part, whole)


def _cohort_wins(
    lookup: SiteLookup, kernel: Kernel, runs: list[RunFacts]
) -> dict[str, PointVerdict]:
    """The verdict on each pass of one cohort of `kernel`'s `runs`: of those with a latency
    (or with no value at all, as the latency charts list them)."""
    if lookup.memo(leaderboard_kernel)(kernel.key):
        return {}  # a leaderboard says who leads in its own words (site/leaderboard.py)
    by_pass: dict[str, list[RunFacts]] = {}
    for run in runs:
        if (LATENCY, "ns") in metrics_of(run):
            by_pass.setdefault(run.pass_name, []).append(run)
    series = lookup.series_by_key(kernel.key)
    found: dict[str, PointVerdict] = {}
    for pass_name, these in by_pass.items():
        cells = rank_cohort(these, series, LATENCY, "ns", None)
        point = judge(cells, these[0].workload, None, these[0].shape)
        if point is not None:
            found[pass_name] = point
    return found


def _kernel_wins(
    lookup: SiteLookup, kernel: Kernel, parts: list[tuple[Cohort, dict[str, PointVerdict]]]
) -> dict[str, list[WinsLine]]:
    # environment → pass → each cohort's verdict, by (protocol, workload)
    points_of: dict[str, dict[str, list[tuple[tuple[str, str], PointVerdict]]]] = {}
    for (workload, protocol, environment), verdicts in parts:
        for pass_name, point in verdicts.items():
            by_pass = points_of.setdefault(environment, {})
            by_pass.setdefault(pass_name, []).append(((protocol, workload), point))
    key = kernel.key
    href = lookup.urls.link(key) or ""
    found: dict[str, list[WinsLine]] = {}
    for environment in sorted(points_of):
        label = lookup.gpu_label(environment)
        gpu = Link(label, lookup.urls.link(environment))
        for pass_name in kernel.pass_names:
            points = points_of[environment].get(pass_name)
            if points is None:
                continue
            points.sort(key=_COHORT_KEY)
            text = tally_text(tally_points(points), wording(LATENCY))
            if text:
                target = f"{href}#{gpu_anchor(pass_name, label, environment)}"
                found.setdefault(environment, []).append(
                    WinsLine(
                        lookup.kernel_link(key),
                        pass_name,
                        gpu,
                        Link(f"{pass_name} pass", target),
                        text,
                    )
                )
    return found


_COHORT_KEY = operator.itemgetter(0)


def latency_tally(verdicts: tuple[ChartVerdicts, ...]) -> str:
    """The latency charts' verdicts of a pass on a GPU, in one line."""
    latency = [v for v in verdicts if v.chart.metric == LATENCY]
    return tally_text(tally(latency), wording(LATENCY))
