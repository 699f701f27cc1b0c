"""A kernel's page (sitegen/site/kernel.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from sitegen.site.kernel import KernelContext
from tests.analysis.test_series import shared_digest_content
from tests.site.planned import CONTENT, fixture_site


def layer_norm_page(content: Path = CONTENT) -> KernelContext:
    _, site = fixture_site(content)
    page = next(p for p in site.pages if p.path == "kernels/liger-layer-norm/").built()
    assert isinstance(page.context, KernelContext)
    return page.context


def test_kernel_context_names_each_implementation_and_its_project() -> None:
    kernel = layer_norm_page()
    rows = [
        (r.label, r.provider, r.project.text if r.project else None, r.baseline_of)
        for r in kernel.series
    ]
    # The importer's display names, the provider as the runs spell it where it differs, and
    # the one baseline of every pass.
    assert rows == [
        ("Liger", "", "liger-kernel", ""),
        ("Transformers", "huggingface", "transformers", "forward, backward, full"),
    ]


def test_two_providers_of_one_implementation_are_drawn_ranked_and_linked(tmp_path: Path) -> None:
    kernel = layer_norm_page(shared_digest_content(tmp_path))
    backward = next(p for p in kernel.passes if p.name == "backward")
    (chart,) = backward.gpus[0].charts
    names = [trace["name"] for trace in chart.spec["data"]]
    assert names == ["Liger", "Liger Triton", "Transformers (baseline)"]
    assert "3 implementations at 3 shapes, 8 measurements" in chart.fallback
    first = chart.shapes[0]
    by_name = {row.series.text: row for row in first.rows}
    assert by_name["Liger Triton"].rank == "1" and by_name["Liger Triton"].vs_best == "fastest"
    assert by_name["Liger"].vs_best.endswith("× slower")
    assert by_name["Transformers"].vs_baseline == "baseline"
    assert by_name["Liger Triton"].vs_baseline.endswith("× faster")
    assert all(row.run.href and row.anchor.startswith("run-") for row in first.rows)
    (earlier,) = by_name["Liger"].earlier
    assert earlier.href is not None and earlier.href.startswith("/runs/")
    assert by_name["Liger"].earlier_anchors[0] == "run-" + earlier.href.split("/")[2]
    assert chart.shapes[2].missing == "Not measured at this shape: Liger Triton."
    # No ratio is printed as 0.00×, and none without its direction.
    texts = [r.vs_best for s in chart.shapes for r in s.rows] + [
        r.vs_baseline for s in chart.shapes for r in s.rows
    ]
    assert "0.00×" not in texts
    assert all(t in ("fastest", "baseline") or t.endswith(("slower", "faster")) for t in texts)


def test_kernel_page_reads_its_operations_metadata(tmp_path: Path) -> None:
    # Metadata is not hashed: a copy of the fixture with source references keeps its digests.
    content = tmp_path / "content"
    shutil.copytree(CONTENT, content)
    operation = content / "operations" / "liger-layer-norm.json"
    document = json.loads(operation.read_text())
    url = "https://github.com/linkedin/Liger-Kernel/blob/main/benchmark/scripts/benchmark_layer_norm.py"
    document["metadata"]["sourceRefs"] = [{"url": url}]
    operation.write_text(json.dumps(document, indent=2))
    _, site = fixture_site(content)
    kernel = next(p for p in site.pages if p.path == "kernels/liger-layer-norm/").built().context
    assert isinstance(kernel, KernelContext)
    assert kernel.description == document["metadata"]["description"]
    assert [(r.text, r.href) for r in kernel.source_refs] == [(url, url)]
