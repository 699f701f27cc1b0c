"""Chart specs from series: data in, a JSON-able plotly {data, layout, config} dict out, no HTML.

Building `plotly.graph_objects.Figure`s costs milliseconds each; these are plain dicts that the
page's static script hands to `Plotly.newPlot`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sitegen.analysis.series import Series
from sitegen.content.run_summary import LATENCY
from sitegen.site.format import display_unit, metric_name, scale

# Okabe–Ito: distinguishable with the common colour-vision deficiencies.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
LOG_RANGE = 20  # a log axis once max/min exceeds this
MAX_LABELLED_TICKS = 12


# What plotly.js reads as markup in any text it draws (legend, hover, axis and tick labels):
# tags (<a href>, <span style>, <br>, <b> …) and entities; escaped, a name is only text.
_PLOTLY_MARKUP = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


def plotly_text(value: str) -> str:
    """`value` as plain text in a plotly spec: its HTML subset escaped."""
    return value.translate(_PLOTLY_MARKUP)


def chart_spec(
    series: Series,
    colours: dict[str, str],
    run_href: Callable[[str], str],
    format_value: Callable[[float], str],
) -> dict[str, Any]:
    """One chart: a trace per implementation, median with asymmetric spread bars."""
    divisor = scale(series.metric, series.unit)
    unit = display_unit(series.metric, series.unit)
    categorical = series.swept is None
    traces = []
    xs: set[int] = set()
    ys: list[float] = []
    for implementation in series.implementations:
        x, y, plus, minus, custom, text = [], [], [], [], [], []
        for row in series.rows:
            cell = next(c for c in row.cells if c.implementation.digest == implementation.digest)
            if cell.value is None or cell.run is None:
                continue
            value = cell.value
            centre = value.centre / divisor
            x.append(plotly_text(row.shape.label()) if categorical else row.x)
            y.append(centre)
            # Differences in the stored unit first: exact for integer nanoseconds.
            plus.append(None if value.high is None else max(value.high - value.centre, 0) / divisor)
            minus.append(None if value.low is None else max(value.centre - value.low, 0) / divisor)
            custom.append(run_href(cell.run.digest))
            line = plotly_text(f"{format_value(value.centre)} {unit} ({value.statistic})")
            if value.spread and value.low is not None and value.high is not None:
                line += "<br>" + plotly_text(
                    f"{value.spread[0]} {format_value(value.low)} / "
                    f"{value.spread[1]} {format_value(value.high)} {unit}"
                )
            text.append(line)
            if row.x is not None:
                xs.add(row.x)
            ys.append(centre)
        if not x:
            continue
        colour = colours.get(implementation.digest, PALETTE[0])
        trace: dict[str, Any] = {
            "type": "scatter",
            "mode": "lines+markers",
            "name": plotly_text(
                implementation.label + (" (baseline)" if implementation.baseline else "")
            ),
            "x": x,
            "y": y,
            "customdata": custom,
            "text": text,
            "hovertemplate": "<b>%{fullData.name}</b><br>"
            + ("" if categorical else f"{plotly_text(series.swept or '')} = %{{x}}<br>")
            + "%{text}<extra>click for the run</extra>",
            "line": {
                "color": colour,
                "width": 2,
                "dash": "dash" if implementation.baseline else "solid",
            },
            "marker": {"color": colour, "size": 7},
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
        "title": {"text": plotly_text(series.swept or "workload")},
        "automargin": True,
    }
    if categorical:
        xaxis["type"] = "category"
    else:
        if _wants_log(list(xs)):
            xaxis["type"] = "log"
        if 0 < len(xs) <= MAX_LABELLED_TICKS:
            ordered = sorted(xs)
            xaxis["tickvals"] = ordered
            xaxis["ticktext"] = [f"{v:,}" for v in ordered]
    yaxis: dict[str, Any] = {
        "title": {
            "text": plotly_text(
                f"{'median ' if series.metric == LATENCY else ''}"
                f"{metric_name(series.metric)} ({unit})"
            )
        },
        "automargin": True,
        "rangemode": "tozero",
    }
    if _wants_log(ys):
        yaxis["type"] = "log"
        yaxis["dtick"] = "D2"  # label 1, 2, 5 per decade: all nine minor labels crowd the axis
        del yaxis["rangemode"]
    layout = {
        "height": 380,
        "margin": {"l": 64, "r": 16, "t": 16, "b": 56},
        "font": {"family": "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif", "size": 13},
        "paper_bgcolor": "#ffffff",
        "plot_bgcolor": "#ffffff",
        "hovermode": "closest",
        "showlegend": True,
        "legend": {"orientation": "h", "x": 0, "y": 1.02, "yanchor": "bottom"},
        "xaxis": {**xaxis, "gridcolor": "#e5e7eb", "linecolor": "#9ca3af", "zeroline": False},
        "yaxis": {**yaxis, "gridcolor": "#e5e7eb", "linecolor": "#9ca3af", "zeroline": False},
    }
    config = {
        "responsive": True,
        "displaylogo": False,
        "modeBarButtonsToRemove": ["select2d", "lasso2d"],
    }
    return {"data": traces, "layout": layout, "config": config}


def _wants_log(values: list[float]) -> bool:
    positive = [v for v in values if v > 0]
    return (
        len(positive) == len(values)
        and len(values) > 1
        and max(positive) / min(positive) > LOG_RANGE
    )


def colours_for(labels: list[str]) -> dict[str, str]:
    """A colour per implementation digest, stable within one kernel page."""
    return {digest_value: PALETTE[i % len(PALETTE)] for i, digest_value in enumerate(labels)}
