"""Across releases on a kernel page (sitegen/site/releases.py)."""

from __future__ import annotations

from pathlib import Path

from tests.analysis.test_releases import with_earlier_releases
from tests.site.test_kernel import layer_norm_page


def test_a_cell_measured_under_several_releases_gets_its_small_chart(tmp_path: Path) -> None:
    kernel = layer_norm_page(with_earlier_releases(tmp_path))
    forward = next(p for p in kernel.passes if p.name == "forward")
    h100 = next(g for g in forward.gpus if "H100" in g.gpu.text)
    (chart,) = h100.charts
    (block,) = chart.releases
    assert block.title == "Liger · hidden = 4,096"
    assert [(c.text, c.beyond_noise) for c in block.changes] == [
        ("0.5.8 → 0.5.10: 1.01× faster, within the spread", False),
        ("0.5.10 → 0.6.0: 1.50× faster, beyond the recorded spread", True),
    ]
    assert block.summary.startswith("Liger at hidden = 4,096, release by release: 0.5.8: ")
    (trace,) = block.spec["data"]
    assert trace["x"] == ["0.5.8", "0.5.10", "0.6.0"]
    assert trace["y"][0] > trace["y"][2]
    assert len(trace["error_y"]["array"]) == 3
    assert block.spec["layout"]["xaxis"]["type"] == "category"
    # Every other chart of the page has no history.
    others = [c for p in kernel.passes for g in p.gpus for c in g.charts if c is not chart]
    assert all(not c.releases for c in others)
