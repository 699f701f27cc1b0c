"""The methodology page and a GPU page's peaks (sitegen/site/methodology.py)."""

from __future__ import annotations

from sitegen.analysis.speed_of_light import gpu_table
from sitegen.site.methodology import MethodologyContext
from sitegen.site.resource import ResourceContext
from tests.site.planned import fixture_site
from tests.site.test_history import page


def test_the_methodology_page_shows_every_row_of_the_gpu_table_and_the_thresholds() -> None:
    _, site = fixture_site()
    built = page(site, "methodology/")
    context = built.context
    assert isinstance(context, MethodologyContext)
    assert len(context.gpus) == len(gpu_table())
    h100 = next(row for row in context.gpus if row.form == "SXM5 80GB")
    assert h100.bandwidth == "3,350 GB/s"
    assert dict(zip(context.columns, h100.throughput, strict=True))["bf16"] == "989.5"
    assert h100.source.href is not None and h100.source.href.startswith("https://")
    assert (context.growth, context.flat, context.disagreement) == ("8×", "10 %", "2×")
    assert built.twin is not None and built.twin["thresholds"]["hostBoundGrowth"] == 8.0


def test_a_gpu_page_shows_the_row_its_form_factor_names() -> None:
    _, site = fixture_site()
    context = page(site, "gpus/liger-bench-nvidia-h100-80gb-hbm3/").context
    assert isinstance(context, ResourceContext) and context.peaks is not None
    (row,) = context.peaks.rows
    assert row.form == "SXM5 80GB" and row.bandwidth == "3,350 GB/s"
    assert "names the form factor '80GB HBM3'" in context.peaks.note
