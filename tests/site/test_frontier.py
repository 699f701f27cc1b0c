"""Speed against memory on a kernel page (sitegen/site/frontier.py)."""

from __future__ import annotations

from pathlib import Path

from tests.analysis.test_frontier import with_full_latency
from tests.site.test_kernel import layer_norm_page

MEDIANS = {
    ("liger", 4096): 100_000,
    ("huggingface", 4096): 300_000,
    ("liger", 16384): 400_000,
    ("huggingface", 16384): 400_000,
}


def test_a_full_pass_gets_a_scatter_per_shape_with_its_frontier(tmp_path: Path) -> None:
    kernel = layer_norm_page(with_full_latency(tmp_path, MEDIANS))
    full = next(p for p in kernel.passes if p.name == "full")
    (gpu,) = full.gpus
    (block,) = gpu.frontiers
    assert block.title == "Speed against memory · rows=4096 · eps=1e-06 · fp32"
    assert block.sentence == "On the frontier: Liger at 2 of 2 shapes, Transformers at 1."
    assert [s.label for s in block.shapes] == ["hidden = 4,096", "hidden = 16,384"]
    assert block.selected == 1  # the largest shape is drawn first
    at_4096 = block.shapes[0]
    assert [(r.series.text, r.latency, r.memory, r.standing) for r in at_4096.rows] == [
        ("Liger", "100 µs", "320 MiB", "on the frontier"),
        ("Transformers", "300 µs", "320 MiB", "beaten on both by Liger"),
    ]
    assert at_4096.summary == (
        "At hidden = 4,096, on the frontier: Liger. Beaten on both by one of them: Transformers."
    )
    # One spec per shape: a marker per implementation (open where beaten), and the frontier's
    # line where two or more are on it.
    first, largest = block.specs
    assert [t["name"] for t in first["data"]] == ["Liger", "Transformers"]
    assert [t["marker"]["symbol"] for t in first["data"]] == ["circle", "circle-open"]
    assert [t["name"] for t in largest["data"]] == ["frontier", "Liger", "Transformers"]
    assert largest["data"][0]["line"]["shape"] == "hv"
    assert all(t["customdata"][0].startswith("/runs/") for t in first["data"])
    assert first["layout"]["xaxis"]["ticksuffix"] == " µs"
    low, high = first["layout"]["xaxis"]["range"]
    assert 0 <= low < 99 and high > 301  # both points inside, with room
    # The twin keeps the raw values and both runs of each point.
    (twin,) = [g for g in kernel_twin_gpus(tmp_path) if g["speedAgainstMemory"]]
    point = twin["speedAgainstMemory"][0]["shapes"][0]["points"][1]
    assert point["latency"] == 300_000 and point["dominatedBy"].endswith("/liger")
    assert point["latencyRun"] != point["memoryRun"]


def kernel_twin_gpus(tmp_path: Path) -> list[dict[str, object]]:
    from tests.site.planned import fixture_site

    _, site = fixture_site(with_full_latency(tmp_path / "twin", MEDIANS))
    page = next(p for p in site.pages if p.path == "kernels/liger-layer-norm/").built()
    twin = page.twin
    assert twin is not None
    full = next(p for p in twin["passes"] if p["pass"] == "full")
    return list(full["gpus"])


def test_no_full_pass_latency_means_no_frontier() -> None:
    kernel = layer_norm_page()
    full = next(p for p in kernel.passes if p.name == "full")
    assert all(not gpu.frontiers for gpu in full.gpus)  # the fixture's full pass: memory only
