"""Across releases on a kernel page: under a chart, for each series and shape measured under
several releases, a small chart of its value release by release, and each change in words,
flagged where it is beyond the recorded spread (analysis/releases.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from sitegen.analysis.releases import ReleaseHistory
from sitegen.analysis.series import Chart
from sitegen.model.names import short_hash
from sitegen.site.charts import CONFIG, base_layout, plotly_text
from sitegen.site.format import scale_for, times, wording


class ReleaseChange(NamedTuple):
    text: str  # `0.8.0 → 0.8.5: 1.32× slower`
    beyond_noise: bool


class ReleaseBlock(NamedTuple):
    element_id: str
    title: str  # `Liger · hidden = 4,096`
    summary: str  # the chart's text alternative
    changes: tuple[ReleaseChange, ...]
    spec: dict[str, Any]


def release_blocks(
    chart: Chart,
    histories: tuple[ReleaseHistory, ...],
    styles: dict[str, tuple[str, str]],
    run_href: Callable[[str], str],
) -> tuple[ReleaseBlock, ...]:
    words = wording(chart.metric)
    blocks = []
    for history in histories:
        at = (
            f"{chart.swept} = {history.x:,}"
            if chart.swept and history.x is not None
            else history.shape.label()
        )
        scale = scale_for(chart.unit, [p.value.centre for p in history.points])
        changes = tuple(
            ReleaseChange(
                f"{c.before} → {c.after}: "
                + (
                    "no change"
                    if c.ratio == 1
                    else f"{times(c.ratio)} {words.worse}"
                    if c.ratio > 1
                    else f"{times(1 / c.ratio)} {words.better}"
                )
                + (", beyond the recorded spread" if c.beyond_noise else ", within the spread"),
                c.beyond_noise,
            )
            for c in history.changes
        )
        values = ", ".join(f"{p.release}: {scale.text(p.value.centre)}" for p in history.points)
        colour = styles[history.series.key][0]
        x = [plotly_text(p.release) for p in history.points]
        y = [p.value.centre / scale.per for p in history.points]
        trace: dict[str, Any] = {
            "type": "scatter",
            "mode": "lines+markers",
            "name": plotly_text(history.series.label),
            "x": x,
            "y": y,
            "customdata": [run_href(p.run.digest) for p in history.points],
            "hovertemplate": "%{x}: %{y:.3~s}" + f" {scale.unit}<extra>click for the run</extra>",
            "line": {"color": colour, "width": 2},
            "marker": {"color": colour, "size": 8},
        }
        if all(p.value.low is not None and p.value.high is not None for p in history.points):
            trace["error_y"] = {
                "type": "data",
                "symmetric": False,
                "array": [(p.value.high - p.value.centre) / scale.per for p in history.points],  # type: ignore[operator]
                "arrayminus": [(p.value.centre - p.value.low) / scale.per for p in history.points],  # type: ignore[operator]
                "color": colour,
                "thickness": 1.5,
                "width": 4,
            }
        layout = base_layout(
            {"title": {"text": "release"}, "type": "category", "automargin": True},
            {
                "title": {"text": scale.unit},
                "automargin": True,
                "rangemode": "tozero",
                "ticksuffix": f" {scale.unit}",
            },
        ) | {"height": 220, "showlegend": False, "margin": {"l": 64, "r": 16, "t": 8, "b": 48}}
        identity = f"{chart.element_id}/{history.series.key}/{history.workload}"
        blocks.append(
            ReleaseBlock(
                element_id="releases-" + short_hash(identity),
                title=f"{history.series.label} · {at}",
                summary=f"{history.series.label} at {at}, release by release: {values}.",
                changes=changes,
                spec={"data": [trace], "layout": layout, "config": CONFIG},
            )
        )
    return tuple(blocks)
