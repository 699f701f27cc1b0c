"""Who wins where, in words: the strip under each chart, the sentence that sums it up, and the
tallies of a kernel page's passes and of a GPU page (analysis/verdicts.py decides the verdicts).
"""

from __future__ import annotations

from typing import NamedTuple

from sitegen.analysis.series import passes_of
from sitegen.analysis.verdicts import ChartVerdicts, PointVerdict, Tally, sentence, tally
from sitegen.analysis.verdicts import verdicts_of as chart_verdicts
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
        row = next(r for r in chart.rows if r.workload == point.workload)
        at = f"{point.x:,}" if point.x is not None else row.shape.label()
        items.append(_item(point, at, words, styles, _runner_up(verdicts, point)))
    return VerdictStrip(chart.swept or "", tuple(items), sentence(verdicts, words.best, where))


def _runner_up(verdicts: ChartVerdicts, point: PointVerdict) -> str:
    row = next(r for r in verdicts.chart.rows if r.workload == point.workload)
    ranked = [cell for cell in row.cells if cell.value is not None]
    return ranked[1].series.label if len(ranked) > 1 else ""


def _item(
    point: PointVerdict,
    at: str,
    words: Wording,
    styles: dict[str, tuple[str, str]],
    runner_up: str,
) -> StripItem:
    leader = point.leader
    if point.outcome == "win":
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


def gpu_wins(lookup: SiteLookup, environment: str) -> tuple[WinsLine, ...]:
    """A GPU page's summary: per kernel and pass measured on it, who is fastest where."""
    lines = []
    label = lookup.gpu_label(environment)
    gpu = Link(label, lookup.urls.link(environment))
    for kernel in lookup.analysis.kernels:
        runs = tuple(r for r in kernel.runs if r.environment == environment)
        if not runs:
            continue
        href = lookup.urls.link(kernel.key) or ""
        for section in passes_of(kernel._replace(runs=runs)):
            for block in section.gpus:
                text = latency_tally(tuple(chart_verdicts(c) for c in block.charts))
                if text:
                    target = f"{href}#{gpu_anchor(section.name, label, environment)}"
                    lines.append(
                        WinsLine(
                            lookup.kernel_link(kernel.key),
                            section.name,
                            gpu,
                            Link(f"{section.name} pass", target),
                            text,
                        )
                    )
    return tuple(lines)


def latency_tally(verdicts: tuple[ChartVerdicts, ...]) -> str:
    """The latency charts' verdicts of a pass on a GPU, in one line."""
    latency = [v for v in verdicts if v.chart.metric == LATENCY]
    return tally_text(tally(latency), wording(LATENCY))
