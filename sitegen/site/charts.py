"""Chart specs from charts: data in, a JSON-able plotly {data, layout, config} dict out, no HTML.

Plain dicts that the page's static script hands to `Plotly.newPlot` (building plotly's
`graph_objects` would cost milliseconds a chart). Every text plotly shows comes from content, so
it passes through `plotly_text` first: plotly renders a subset of HTML in names and hover text.
"""

from __future__ import annotations

import html
import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

from sitegen.analysis.series import Chart, statistic_of
from sitegen.content.run_summary import LATENCY
from sitegen.site.format import Scale, metric_name

# Okabe–Ito: distinguishable with the common colour-vision deficiencies.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
DASHES = ("solid", "dot", "dashdot")  # past the palette's eight, the colours repeat dotted
LOG_RANGE = 20  # a log axis once max/min exceeds this
MAX_LABELLED_TICKS = 12
MIN_TICK_GAP = 0.06  # of the axis between labelled values (~60 px on a desktop), else a scale
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"


def plotly_text(value: str) -> str:
    """Text plotly shows as written: its HTML subset (`<a>`, `<span style>`, `<br>` …) and
    entities escaped, so a name can neither link nor restyle."""
    return html.escape(value, quote=False)


def chart_spec(
    chart: Chart,
    styles: dict[str, tuple[str, str]],
    run_href: Callable[[str], str],
    scale: Scale,
    marks: Callable[[str], tuple[str, ...]] | None = None,
) -> dict[str, Any]:
    """One chart: a trace per series, median with asymmetric spread bars. `styles` gives each
    series key its colour and dash; `scale` the display unit of the chart and its table;
    `marks` a run's data-quality marks in words, said in its point's hover."""
    categorical = chart.swept is None
    traces = []
    xs: set[int] = set()
    ys: list[float] = []
    for series in chart.series:
        x, y, plus, minus, custom, text = [], [], [], [], [], []
        for row in chart.rows:
            cell = next((c for c in row.cells if c.series.key == series.key), None)
            if cell is None or cell.value is None:
                continue
            value = cell.value
            centre = value.centre / scale.per
            x.append(plotly_text(row.shape.label()) if categorical else row.x)
            y.append(centre)
            # Differences in the stored unit first: exact for integer nanoseconds.
            high, low = value.high, value.low
            plus.append(None if high is None else max(high - value.centre, 0) / scale.per)
            minus.append(None if low is None else max(value.centre - low, 0) / scale.per)
            custom.append(run_href(cell.run.digest))
            line = f"{scale.text(value.centre)} ({plotly_text(value.statistic)})"
            if value.spread and low is not None and high is not None:
                line += (
                    f"<br>{plotly_text(value.spread[0])} {scale.text(low)} / "
                    f"{plotly_text(value.spread[1])} {scale.text(high)}"
                )
            for words in marks(cell.run.digest) if marks else ():
                line += f"<br>⚠ {plotly_text(words)}"
            text.append(line)
            if row.x is not None:
                xs.add(row.x)
            ys.append(centre)
        if not x:
            continue
        colour, dash = styles[series.key]
        baseline = chart.baseline is not None and chart.baseline.key == series.key
        trace: dict[str, Any] = {
            "type": "scatter",
            "mode": "lines+markers",
            "name": plotly_text(series.label) + (" (baseline)" if baseline else ""),
            "x": x,
            "y": y,
            "customdata": custom,
            "text": text,
            "hovertemplate": "<b>%{fullData.name}</b><br>"
            + ("" if categorical else f"{plotly_text(chart.swept or '')} = %{{x:,}}<br>")
            + "%{text}<extra>click for the run</extra>",
            "line": {"color": colour, "width": 3 if baseline else 2, "dash": dash},
            "marker": {"color": colour, "size": 7, "symbol": "diamond" if baseline else "circle"},
        }
        if any(v is not None for v in plus + minus):
            trace["error_y"] = {
                "type": "data",
                "symmetric": False,
                "array": plus,
                "arrayminus": minus,
                "color": colour,
                "thickness": 1.5,
                "width": 4,
            }
        traces.append(trace)

    xaxis: dict[str, Any] = {
        "title": {"text": plotly_text(chart.swept or "workload")},
        "automargin": True,
    }
    if categorical:
        xaxis["type"] = "category"
    else:
        ordered = sorted(xs)
        if _wants_log(ordered):
            xaxis["type"] = "log"
        if 0 < len(ordered) <= MAX_LABELLED_TICKS and _apart(ordered, xaxis.get("type") == "log"):
            xaxis["tickvals"] = ordered
            xaxis["ticktext"] = [f"{v:,}" for v in ordered]
        elif xaxis.get("type") == "log":
            ticks = log_ticks(min(ordered), max(ordered))
            xaxis["tickvals"] = ticks
            xaxis["ticktext"] = [tick_text(t) for t in ticks]
            xaxis["range"] = log_range(ticks)
    statistic = statistic_of(cell for row in chart.rows for cell in row.cells)
    measured = (f"{statistic} " if chart.metric == LATENCY and statistic else "") + metric_name(
        chart.metric
    )
    yaxis: dict[str, Any] = {
        "title": {"text": f"{plotly_text(measured)} ({plotly_text(scale.unit)})"},
        "automargin": True,
        "rangemode": "tozero",
        "ticksuffix": f" {plotly_text(scale.unit)}",
    }
    if _wants_log(ys):
        ticks = log_ticks(min(ys), max(ys))
        yaxis["type"] = "log"
        yaxis["tickvals"] = ticks
        yaxis["ticktext"] = [f"{tick_text(t)} {plotly_text(scale.unit)}" for t in ticks]
        yaxis["range"] = log_range(ticks)
        del yaxis["rangemode"], yaxis["ticksuffix"]
    layout = base_layout(xaxis, yaxis)
    config = CONFIG
    return {"data": traces, "layout": layout, "config": config}


# The page's script restyles these for a dark colour scheme (templates/assets/site.js).
GRID = {"gridcolor": "#e5e7eb", "linecolor": "#9ca3af", "zeroline": False}
CONFIG = {
    "responsive": True,
    "displaylogo": False,
    "modeBarButtonsToRemove": ["select2d", "lasso2d"],
}


def base_layout(xaxis: dict[str, Any], yaxis: dict[str, Any]) -> dict[str, Any]:
    """Every chart's layout: its size, font, colours and legend around its two axes."""
    return {
        "height": 380,
        "margin": {"l": 64, "r": 16, "t": 16, "b": 56},
        "font": {"family": FONT, "size": 13},
        "paper_bgcolor": "#ffffff",
        "plot_bgcolor": "#ffffff",
        "hovermode": "closest",
        "showlegend": True,
        "legend": {"orientation": "h", "x": 0, "y": 1.02, "yanchor": "bottom"},
        "xaxis": {**xaxis, **GRID},
        "yaxis": {**yaxis, **GRID},
    }


def log_ticks(low: float, high: float) -> list[float]:
    """Ticks for a log axis that say their magnitude: 1, 2, 5 × 10ⁿ (every decade alone on a
    very wide range; 1 … 9 × 10ⁿ on a narrow one), from the last at or below `low` to the first
    at or above `high`: every point lies between two labelled ticks (`log_range`)."""
    if not (math.isfinite(low) and math.isfinite(high)) or low <= 0 or high < low:
        return []
    first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
    ticks: list[float] = []
    for steps in ((1, 2, 5), (1,), (1, 2, 3, 4, 5, 6, 7, 8, 9)):
        round_values = [float(f"{s}e{power}") for power in range(first, last + 1) for s in steps]
        below = max(v for v in round_values if v <= low * (1 + 1e-9))  # 10**first is one
        above = min(v for v in round_values if v >= high * (1 - 1e-9))  # 10**last is one
        ticks = [v for v in round_values if below <= v <= above]
        if 4 <= len(ticks) <= MAX_LABELLED_TICKS:  # fewer: a narrow range, finer steps
            return ticks
    return ticks


def log_range(ticks: list[float]) -> list[float]:
    """A log axis drawn from its first tick to its last (plotly's range is in decades), with a
    little room so that a point on an end tick is not cut in half."""
    start, end = math.log10(ticks[0]), math.log10(ticks[-1])
    pad = 0.03 * (end - start)
    # Rounded: the same bytes whichever libm computed the logarithm.
    return [round(start - pad, 4), round(end + pad, 4)]


def tick_text(value: float) -> str:
    """A round tick as written: `50`, `0.5`, `2,000` (no padding zeros, unlike a value)."""
    return f"{value:,.0f}" if value >= 1 else f"{value:g}"


def _apart(ordered: Sequence[float], log: bool) -> bool:
    """Whether labels at each of the `ordered` values stand apart on the axis (in decades on a
    log one): a value's label is ~40 px wide, and two close values (12,383 and 16,254 on a
    log axis from 1) wrote their labels over each other."""
    places = [math.log10(v) for v in ordered] if log else list(ordered)
    span = places[-1] - places[0]
    return all(b - a >= span * MIN_TICK_GAP for a, b in itertools.pairwise(places))


def _wants_log(values: Sequence[float]) -> bool:
    positive = [v for v in values if v > 0]
    return (
        len(positive) == len(values)
        and len(values) > 1
        and max(positive) / min(positive) > LOG_RANGE
    )


def styles_for(keys: list[str]) -> dict[str, tuple[str, str]]:
    """A colour and a dash per series key, stable within one kernel page."""
    return {
        key: (PALETTE[i % len(PALETTE)], DASHES[(i // len(PALETTE)) % len(DASHES)])
        for i, key in enumerate(keys)
    }
