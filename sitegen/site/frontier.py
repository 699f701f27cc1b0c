"""Speed against memory on a kernel page: per sweep of a GPU's full pass, a scatter of each
implementation's latency and peak memory at the chosen shape, with the frontier drawn, and
every shape's values in a table (analysis/frontier.py finds the frontier)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any, NamedTuple

from sitegen.analysis.frontier import FrontierChart, FrontierPoint, ShapeFrontier
from sitegen.model.digest import short
from sitegen.model.wording import counted
from sitegen.site.charts import CONFIG, base_layout, plotly_text
from sitegen.site.format import Scale, metric_name, scale_for
from sitegen.site.lookup import SiteLookup
from sitegen.site.records import Link

FRONTIER_COLOUR = "#6b7280"


class FrontierRow(NamedTuple):
    series: Link
    latency: str  # `31.2 µs`
    memory: str  # `120 MiB`
    standing: str  # `on the frontier`, `beaten by Liger on both`
    runs: tuple[Link, Link]  # the latency run, the memory run


class FrontierShape(NamedTuple):
    label: str  # `hidden = 4,096`
    summary: str  # `On the frontier: Liger, torch.compile. Beaten on both: PyTorch.`
    rows: tuple[FrontierRow, ...]


class FrontierBlock(NamedTuple):
    element_id: str
    title: str
    memory: str  # `peak memory allocated`
    sentence: str  # `On the frontier: Liger at 8 of 8 shapes, torch.compile at 3.`
    shapes: tuple[FrontierShape, ...]
    selected: int  # the shape drawn first: the largest
    specs: list[dict[str, Any]]  # a plotly spec per shape, with its label and summary
    data: dict[str, Any]  # the block in the page's JSON twin


def frontier_block(
    lookup: SiteLookup, chart: FrontierChart, styles: dict[str, tuple[str, str]], fixed: str
) -> FrontierBlock:
    run_href: Callable[[str], str] = lambda d: lookup.urls.link(d) or ""  # noqa: E731
    memory = metric_name(chart.memory.metric)
    shapes, specs = [], []
    on_frontier: Counter[str] = Counter()
    labels: dict[str, str] = {}
    for shape in chart.shapes:
        label = _shape_label(chart, shape)
        times = scale_for("ns", [v for p in shape.points for v in _spread(p.latency)])
        amounts = scale_for(chart.memory.unit, [v for p in shape.points for v in _spread(p.memory)])
        rows = tuple(_row(lookup, point, times, amounts) for point in shape.points)
        summary = _summary(shape, label)
        shapes.append(FrontierShape(label, summary, rows))
        specs.append(
            {
                "label": label,
                "summary": summary,
                **_spec(shape, styles, run_href, times, amounts, memory),
            }
        )
        for point in shape.frontier:
            on_frontier[point.series.key] += 1
            labels[point.series.key] = point.series.label
    ordered = sorted(on_frontier.items(), key=lambda i: (-i[1], labels[i[0]].lower(), i[0]))
    count = counted(len(chart.shapes), "shape")
    sentence = "On the frontier: " + ", ".join(
        f"{labels[key]} at {n:,} of {count}" if number == 0 else f"{labels[key]} at {n:,}"
        for number, (key, n) in enumerate(ordered)
    )
    title = "Speed against memory" + (f" · {fixed}" if fixed != "unknown shape" else "")
    return FrontierBlock(
        element_id=chart.element_id,
        title=title,
        memory=memory,
        sentence=sentence + ".",
        shapes=tuple(shapes),
        selected=len(shapes) - 1,
        specs=specs,
        data={
            "id": chart.element_id,
            "latencyProtocol": chart.latency.protocol,
            "memoryProtocol": chart.memory.protocol,
            "memoryMetric": chart.memory.metric,
            "shapes": [
                {
                    "workload": shape.workload,
                    "x": shape.x,
                    "points": [
                        {
                            "series": p.series.key,
                            "latency": p.latency.centre,
                            "memory": p.memory.centre,
                            "latencyRun": p.latency_run.digest,
                            "memoryRun": p.memory_run.digest,
                            "dominatedBy": p.dominated_by.key if p.dominated_by else None,
                        }
                        for p in shape.points
                    ],
                }
                for shape in chart.shapes
            ],
        },
    )


def _shape_label(chart: FrontierChart, shape: ShapeFrontier) -> str:
    swept = chart.latency.swept
    return f"{swept} = {shape.x:,}" if swept and shape.x is not None else shape.shape.label()


def _spread(value: Any) -> tuple[float, ...]:
    return tuple(v for v in (value.centre, value.low, value.high) if v is not None)


def _summary(shape: ShapeFrontier, label: str) -> str:
    front = ", ".join(p.series.label for p in shape.frontier)
    beaten = ", ".join(p.series.label for p in shape.points if p.dominated_by is not None)
    text = f"At {label}, on the frontier: {front}."
    return text + (f" Beaten on both by one of them: {beaten}." if beaten else "")


def _row(lookup: SiteLookup, point: FrontierPoint, times: Scale, amounts: Scale) -> FrontierRow:
    link = lookup.urls.link
    standing = (
        "on the frontier"
        if point.dominated_by is None
        else f"beaten on both by {point.dominated_by.label}"
    )
    return FrontierRow(
        series=Link(point.series.label, link(point.series.implementation)),
        latency=times.text(point.latency.centre),
        memory=amounts.text(point.memory.centre),
        standing=standing,
        runs=(
            Link(short(point.latency_run.digest), link(point.latency_run.digest)),
            Link(short(point.memory_run.digest), link(point.memory_run.digest)),
        ),
    )


def _spec(
    shape: ShapeFrontier,
    styles: dict[str, tuple[str, str]],
    run_href: Callable[[str], str],
    times: Scale,
    amounts: Scale,
    memory: str,
) -> dict[str, Any]:
    traces: list[dict[str, Any]] = []
    front = shape.frontier
    if len(front) > 1:
        traces.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": "frontier",
                "x": [p.latency.centre / times.per for p in front],
                "y": [p.memory.centre / amounts.per for p in front],
                "line": {"shape": "hv", "dash": "dash", "color": FRONTIER_COLOUR, "width": 1.5},
                "hoverinfo": "skip",
            }
        )
    for point in shape.points:
        colour = styles[point.series.key][0]
        standing = (
            "on the frontier"
            if point.dominated_by is None
            else f"beaten on both by {plotly_text(point.dominated_by.label)}"
        )
        trace: dict[str, Any] = {
            "type": "scatter",
            "mode": "markers+text",
            "name": plotly_text(point.series.label),
            "x": [point.latency.centre / times.per],
            "y": [point.memory.centre / amounts.per],
            "text": [plotly_text(point.series.label)],
            "textposition": "top center",
            "customdata": [run_href(point.latency_run.digest)],
            "hovertemplate": f"<b>{plotly_text(point.series.label)}</b><br>"
            f"{times.text(point.latency.centre)}, {amounts.text(point.memory.centre)}<br>"
            f"{standing}<extra>click for the latency run</extra>",
            "marker": {
                "color": colour,
                "size": 11,
                "symbol": "circle" if point.dominated_by is None else "circle-open",
                "line": {"color": colour, "width": 2},
            },
        }
        for axis, value, scale in (
            ("error_x", point.latency, times),
            ("error_y", point.memory, amounts),
        ):
            if value.low is not None and value.high is not None:
                trace[axis] = {
                    "type": "data",
                    "symmetric": False,
                    "array": [max(value.high - value.centre, 0) / scale.per],
                    "arrayminus": [max(value.centre - value.low, 0) / scale.per],
                    "color": colour,
                    "thickness": 1.5,
                    "width": 3,
                }
        traces.append(trace)
    xrange = _padded([v / times.per for p in shape.points for v in _spread(p.latency)], 0.1)
    yrange = _padded([v / amounts.per for p in shape.points for v in _spread(p.memory)], 0.2)
    xaxis = {
        "title": {"text": f"median latency ({times.unit})"},
        "automargin": True,
        "range": xrange,
        "ticksuffix": f" {times.unit}",
    }
    yaxis = {
        "title": {"text": f"{plotly_text(memory)} ({amounts.unit})"},
        "automargin": True,
        "range": yrange,
        "ticksuffix": f" {amounts.unit}",
    }
    layout = base_layout(xaxis, yaxis) | {"showlegend": False}
    return {"data": traces, "layout": layout, "config": CONFIG}


def _padded(values: list[float], above: float) -> list[float]:
    """An axis range around `values`, with room for the points' names above (`above`: a share
    of the span), never below zero: close points stay apart, the table has the numbers."""
    low, high = min(values), max(values)
    span = (high - low) or abs(high) or 1.0
    return [max(low - 0.1 * span, 0.0), high + max(above, 0.1) * span]
