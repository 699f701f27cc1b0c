"""charts.py: plain plotly dicts from series; spreads, log axes, click-through URLs."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

from sitegen.analysis.kernels import Kernel, analyse
from sitegen.analysis.series import Series, passes_of
from sitegen.pipeline import check_content
from sitegen.site.charts import chart_spec, colours_for, plotly_text
from sitegen.site.format import display_unit
from tests.conftest import FIXTURES


def kernels() -> dict[str, Kernel]:
    catalog = check_content(FIXTURES / "site" / "content").catalog
    return {k.title: k for k in analyse(catalog).kernels}


def series_of(kernel: Kernel, pass_name: str) -> list[Series]:
    section = next(p for p in passes_of(kernel) if p.name == pass_name)
    return [s for gpu in section.gpus for s in gpu.series]


def spec(series: Series) -> dict:
    colours = colours_for([i.digest for i in series.implementations])
    return chart_spec(series, colours, lambda d: f"/runs/{d[7:23]}/", lambda v: f"{v:g}")


def test_latency_chart_is_plain_json_with_asymmetric_spread() -> None:
    (series,) = [s for s in series_of(kernels()["LayerNorm"], "backward")]
    chart = spec(series)
    json.dumps(chart, allow_nan=False)  # plain data, nothing plotly-specific in Python
    assert [t["name"] for t in chart["data"]] == ["huggingface (baseline)", "liger"]
    liger = chart["data"][1]
    assert liger["x"] == [1024, 4096, 16384]
    assert liger["y"][2] == 577632 / 1e6  # milliseconds
    assert liger["error_y"]["array"][2] == (579891 - 577632) / 1e6
    assert liger["error_y"]["arrayminus"][2] == (577632 - 575347) / 1e6
    assert liger["customdata"][2] == "/runs/f0cf6dd69e048a9b/"
    assert chart["data"][0]["line"]["dash"] == "dash"  # the baseline
    assert "type" not in chart["layout"]["xaxis"]  # 16× range: linear
    assert chart["layout"]["xaxis"]["tickvals"] == [1024, 4096, 16384]
    assert chart["layout"]["yaxis"]["title"]["text"] == "median latency (ms)"


def test_wide_ranges_get_log_axes() -> None:
    (series,) = series_of(kernels()["Cross-entropy loss"], "forward")
    chart = spec(series)
    assert chart["layout"]["xaxis"]["type"] == "log"  # 4096 … 131072
    assert chart["layout"]["yaxis"]["type"] == "log"


def test_memory_chart_uses_the_data_unit() -> None:
    (series,) = series_of(kernels()["LayerNorm"], "full")
    chart = spec(series)
    assert series.metric == "peak_memory_allocated" and series.unit == "mib"
    assert chart["layout"]["yaxis"]["title"]["text"] == "peak memory allocated (MiB)"
    assert "latency" not in json.dumps(chart)
    assert display_unit("latency", "ns") == "ms"


def test_names_reach_plotly_as_plain_text(tmp_path: Path) -> None:
    """plotly draws a subset of HTML in legends, hovers and labels: a provider named with a
    link or a style would be a clickable link, or restyle the chart. Only the spec's own
    `<br>`, `<b>` and `<extra>` remain markup."""
    content = tmp_path / "content"
    shutil.copytree(FIXTURES / "site" / "content", content)
    hostile = '<a href="https://evil.example/">log in</a> <span style="font-size:90px">&amp;</span>'
    for path in (content / "runs").glob("*layer-norm-backward-liger*"):
        document = json.loads(path.read_text())
        document["metadata"]["title"] = f"LayerNorm · {hostile} · backward"
        path.write_text(json.dumps(document))
    checked = check_content(content)
    assert checked.ok, checked.problems
    kernel = next(k for k in analyse(checked.catalog).kernels if k.title == "LayerNorm")
    (series,) = series_of(kernel, "backward")
    chart = spec(series)
    texts = list(_strings(chart))
    assert plotly_text(hostile) in [t["name"] for t in chart["data"]]
    assert plotly_text(hostile) == (
        '&lt;a href="https://evil.example/"&gt;log in&lt;/a&gt; '
        '&lt;span style="font-size:90px"&gt;&amp;amp;&lt;/span&gt;'
    )
    tags = {tag for text in texts for tag in re.findall(r"</?([a-z]+)", text)}
    assert tags <= {"br", "b", "extra"}


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
