"""A kernel's page (sitegen/site/kernel.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from sitegen.site.kernel import KernelContext
from tests.site.planned import CONTENT, fixture_site


def test_kernel_context_names_each_implementation_and_its_project() -> None:
    _, site = fixture_site()
    pages = {p.path: p for p in site.pages}
    kernel = pages["kernels/liger-layer-norm/"].context
    assert isinstance(kernel, KernelContext)
    labels = [(r.label, r.project.text if r.project else None) for r in kernel.implementations]
    assert labels == [("huggingface", "transformers"), ("liger", "liger-kernel")]


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
