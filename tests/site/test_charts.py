"""charts.py: plain plotly dicts from charts; spreads, log axes and their ticks, units, names."""

from __future__ import annotations

import json
import math

from sitegen.analysis.kernels import Kernel, analyse
from sitegen.analysis.series import Chart, passes_of
from sitegen.pipeline import check_content
from sitegen.site.charts import chart_spec, log_range, log_ticks, plotly_text, styles_for
from sitegen.site.kernel import chart_scale
from tests.conftest import FIXTURES


def kernels() -> dict[str, Kernel]:
    catalog = check_content(FIXTURES / "site" / "content").catalog
    return {k.title: k for k in analyse(catalog).kernels}


def charts_of(kernel: Kernel, pass_name: str) -> list[Chart]:
    section = next(p for p in passes_of(kernel) if p.name == pass_name)
    return [c for gpu in section.gpus for c in gpu.charts]


def spec(kernel: Kernel, chart: Chart) -> dict:  # type: ignore[type-arg]
    styles = styles_for([s.key for s in kernel.series])
    return chart_spec(chart, styles, lambda d: f"/runs/{d[7:23]}/", chart_scale(chart))


def test_latency_chart_is_plain_json_in_the_unit_that_suits_it() -> None:
    kernel = kernels()["LayerNorm"]
    (chart,) = charts_of(kernel, "backward")
    found = spec(kernel, chart)
    json.dumps(found, allow_nan=False)  # plain data, nothing plotly-specific in Python
    # The importer's names for the providers; the pass's one baseline marked in the legend.
    assert [t["name"] for t in found["data"]] == ["Liger", "Transformers (baseline)"]
    liger = found["data"][0]
    assert liger["x"] == [1024, 4096, 16384]
    assert chart_scale(chart).unit == "µs"  # the largest value is under 1 ms
    assert liger["y"][2] == 577632 / 1e3
    assert liger["error_y"]["array"][2] == (579891 - 577632) / 1e3
    assert liger["error_y"]["arrayminus"][2] == (577632 - 575347) / 1e3
    assert liger["customdata"][2] == "/runs/f0cf6dd69e048a9b/"
    assert found["data"][1]["marker"]["symbol"] == "diamond"  # the baseline
    assert "type" not in found["layout"]["xaxis"]  # 16× range: linear
    assert found["layout"]["xaxis"]["tickvals"] == [1024, 4096, 16384]
    assert found["layout"]["yaxis"]["title"]["text"] == "median latency (µs)"
    assert found["layout"]["yaxis"]["ticksuffix"] == " µs"
    assert "578 µs (median)" in liger["text"][2]


def test_wide_ranges_get_log_axes_whose_ticks_carry_their_magnitude_and_unit() -> None:
    kernel = kernels()["Cross-entropy loss"]
    (chart,) = charts_of(kernel, "forward")
    found = spec(kernel, chart)
    xaxis, yaxis = found["layout"]["xaxis"], found["layout"]["yaxis"]
    assert xaxis["type"] == "log" and yaxis["type"] == "log"  # 4096 … 131072
    unit = chart_scale(chart).unit
    assert all(text.endswith(f" {unit}") for text in yaxis["ticktext"])
    values = [float(text.split()[0].replace(",", "")) for text in yaxis["ticktext"]]
    assert values == yaxis["tickvals"] and len(values) >= 3
    assert not any(t.split()[0].endswith((".0", ".00")) for t in yaxis["ticktext"])
    assert {f"{v:e}"[0] for v in values} <= {"1", "2", "5"}  # 1, 2, 5 × 10ⁿ
    medians = [y for trace in found["data"] for y in trace["y"]]
    assert values[0] <= min(medians) and max(medians) <= values[-1]  # every point between ticks
    assert yaxis["range"] == log_range(values)


def test_log_ticks_are_one_two_five_per_decade_and_bracket_every_value() -> None:
    assert log_ticks(18, 310) == [10.0, 20.0, 50.0, 100.0, 200.0, 500.0]
    assert log_ticks(0.5, 40) == [0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0]
    # Liger's fused neighborhood attention at 0.256 ms beside PyTorch's 331 ms: a tick below
    # the fastest point, not the lowest at 0.5 ms with the point under it unlabelled.
    ticks = log_ticks(0.256, 331)
    assert ticks[0] == 0.2 and ticks[-1] == 500.0
    wide = log_ticks(1, 1e9)
    assert wide == [10.0**n for n in range(10)]  # every decade alone
    narrow = log_ticks(31, 58)
    assert narrow == [30.0, 40.0, 50.0, 60.0]  # within a decade: every step
    assert log_ticks(0, 10) == [] and log_ticks(5, 1) == []


def test_a_log_axis_is_drawn_from_its_first_tick_to_its_last() -> None:
    start, end = log_range([0.2, 0.5, 1.0, 500.0])
    assert start < math.log10(0.2) < math.log10(500) < end
    assert end - math.log10(500) < 0.15  # a little room, not another decade


def test_memory_chart_uses_a_byte_unit() -> None:
    kernel = kernels()["LayerNorm"]
    (chart,) = charts_of(kernel, "full")
    found = spec(kernel, chart)
    assert chart.metric == "peak_memory_allocated" and chart.unit == "mib"
    assert chart_scale(chart).unit in {"MiB", "GiB"}
    assert found["layout"]["yaxis"]["title"]["text"].startswith("peak memory allocated (")
    assert "latency" not in json.dumps(found)


def test_text_reaches_plotly_as_plain_text() -> None:
    hostile = '<a href="https://evil.example">x</a> <span style="color:red">y</span> &amp;'
    escaped = plotly_text(hostile)
    assert "<" not in escaped and ">" not in escaped
    assert "&amp;amp;" in escaped  # an entity stays text too
