"""Leaderboard pages (sitegen/site/leaderboard.py), over a slice of kernelindex.dev's export
imported and built: every run on its operation's page, failed runs never ranked, the
protocol's statistic named, the record history shown, the sources credited."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from sitegen.importers.kernelindex.importing import main as import_export
from sitegen.pipeline import build_site
from tests.importers.kernelindex.test_importing import FIXTURE

RUN_LINK = re.compile(r'href="/(runs/[0-9a-f]{16}/)"')


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("leaderboard")
    content = root / "content"
    content.mkdir()
    with contextlib.redirect_stdout(io.StringIO()):
        assert import_export(FIXTURE, content / "kernelindex", []) == 0
    site = root / "site"
    result = build_site(content, site)
    assert result.checked.ok
    return site


def page(site: Path, path: str) -> str:
    return (site / path / "index.html").read_text(encoding="utf-8")


def test_every_imported_run_has_a_page_linked_from_its_operation_page(built: Path) -> None:
    runs = {p.parent.name for p in (built / "runs").glob("*/index.html")}
    linked: set[str] = set()
    for kernel in (built / "kernels").glob("*/index.html"):
        linked |= {m.split("/")[1] for m in RUN_LINK.findall(kernel.read_text(encoding="utf-8"))}
    assert len(runs) == 196 + 12 + 6  # the fixture's runs of its sources with a policy
    assert runs <= linked


def test_a_leaderboard_names_its_statistic_and_ranks_only_passed_runs(built: Path) -> None:
    html = page(built, "kernels/gpumode-amd-fp8-mm")
    assert "Mean latency on AMD Instinct MI300X" in html
    assert (
        "the protocol&#39;s primary statistic (mean)" in html or "primary statistic (mean)" in html
    )
    # A chart page lists a run that did not pass beside its implementation's ranked run, with
    # its status: never ranked.
    failed = page(built, "kernels/gemm-fp4-fp6-n2048-k2048")
    assert re.search(r"<code>[0-9a-f]{12} \(compile error\)</code>", failed)


def test_the_record_history_is_on_the_operation_and_the_run_page(built: Path) -> None:
    html = page(built, "kernels/gpumode-amd-fp8-mm")
    assert "Record history:" in html
    with_history = [
        p for p in (built / "runs").glob("*/index.html") if "records-heading" in p.read_text()
    ]
    assert with_history
    run = with_history[0].read_text()
    assert "Record held by" in run and "this run" in run


def test_run_pages_show_source_metrics_and_failed_status(built: Path) -> None:
    pages = [p.read_text() for p in (built / "runs").glob("*/index.html")]
    assert any(
        "Metrics as flashinfer-bench reports them" in p and "speedup_factor" in p for p in pages
    )
    failed = [p for p in pages if "status-compile_error" in p]
    assert failed and all("it is shown as evidence, and never ranked" in p for p in failed)


def test_sources_page_credits_each_source_with_its_policy(built: Path) -> None:
    html = page(built, "sources")
    assert "June 9 Researcher Reciprocity License v1.0" in html
    assert "GPU Mode and the KernelBot dataset" in html
    assert "Apache-2.0" in html
    # Every page showing a source's numbers carries its credit.
    assert "GPU Mode and the KernelBot dataset" in page(built, "kernels/gpumode-amd-fp8-mm")


def test_gpu_and_implementation_pages_for_the_new_hardware(built: Path) -> None:
    gpus = page(built, "gpus")
    assert "AMD Instinct MI300X" in gpus and "NVIDIA B200" in gpus
    implementation = next(
        p.read_text()
        for p in (built / "implementations").glob("*/index.html")
        if "submission" in p.read_text()
    )
    assert "Source file" in implementation and "Content digest" in implementation
    assert "Project" in implementation
