"""The kernelindex.dev export importer: every manifest checked against its recorded digest,
links by row id, each source's policy and record history, safe and idempotent writes.

The fixture is a slice of the real export (make_fixture.py writes it); one test imports the
real export whole.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
import zstandard

from sitegen.importers.kernelindex.export import Export, read_export
from sitegen.importers.kernelindex.importing import main
from sitegen.importers.kernelindex.manifests import link, sources_of
from sitegen.pipeline import check_content
from sitegen.publish.errors import OutputError

Json = dict[str, Any]
HERE = Path(__file__).parent
FIXTURE = HERE / "fixture-export.jsonl.zst"
REAL = HERE.parents[2] / "sources/kernelindex/catalog-2026-08-16-0022af0b.jsonl.zst"


def run_main(export: Path, out_dir: Path, named: tuple[str, ...] = ()) -> str:
    """What `main` prints, stdout then stderr, and its exit status."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(export, out_dir, list(named))
    return f"{out.getvalue()}{err.getvalue()}[exit {status}]\n"


def rewritten(tmp_path: Path, change: Callable[[Json], Json | None]) -> Path:
    """The fixture with each `{table, row}` line passed through `change` (None drops it)."""
    with open(FIXTURE, "rb") as raw:
        reader = zstandard.ZstdDecompressor().stream_reader(raw)
        lines = [orjson.loads(line) for line in io.BufferedReader(reader) if line.strip()]
    kept = [change(line) for line in lines]
    data = b"".join(orjson.dumps(line) + b"\n" for line in kept if line is not None)
    path = tmp_path / "changed.jsonl.zst"
    path.write_bytes(zstandard.ZstdCompressor().compress(data))
    return path


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.fixture(scope="module")
def fixture_export() -> Export:
    export, problems = read_export(FIXTURE)
    assert problems == []
    return export


def test_sources_without_a_policy_are_imported_only_when_named(fixture_export: Export) -> None:
    _, chosen, problems = sources_of(fixture_export, [])
    assert problems == []
    assert [s.slug for s in chosen] == ["flashinfer-bench", "gpumode-kernelbot", "mlperf-inference"]
    _, chosen, _ = sources_of(fixture_export, ["sol-execbench"])
    assert "sol-execbench" in [s.slug for s in chosen]
    _, _, problems = sources_of(fixture_export, ["no-such-source"])
    assert [p.message for p in problems] == ["--source no-such-source: no source has that slug"]


def test_every_fixture_run_is_linked_with_what_it_names(fixture_export: Export) -> None:
    _, chosen, _ = sources_of(fixture_export, ["sol-execbench"])
    linked, problems = link(fixture_export, chosen)
    assert problems == []
    runs = [d for d in linked.documents if d.kind == "BenchmarkRun"]
    assert len(runs) == len(fixture_export.rows("benchmark_runs"))
    digests = {d.digest for d in linked.documents}
    for run in runs:
        spec = run.value["run"]["spec"]
        assert spec["implementationDigest"] in digests
        assert spec["workloadDigest"] in digests
    implementations = [d for d in linked.documents if d.kind == "ImplementationRevision"]
    projects = {d.name for d in linked.documents if d.kind == "SoftwareProject"}
    assert all(d.value["metadata"]["labels"]["project"] in projects for d in implementations)
    assert linked.records and {slug for slug, _ in linked.records} <= {
        "gpumode-kernelbot",
        "flashinfer-bench",
        "sol-execbench",
    }
    assert [name for name, _ in linked.skipped_tables] == [
        "model_revisions",
        "serving_configurations",
        "serving_measurements",
        "serving_runs",
        "serving_stack_revisions",
        "serving_workloads",
    ]


def test_a_changed_manifest_is_named_with_both_digests(tmp_path: Path) -> None:
    changed: list[str] = []

    def change(line: Json) -> Json:
        if line["table"] == "implementations" and not changed:
            changed.append(line["row"]["id"])
            line["row"]["manifest"]["spec"]["callable"]["language"] = "cuda"
        return line

    printed = run_main(rewritten(tmp_path, change), tmp_path / "out")
    row_id = changed[0]
    assert (
        f"implementations row {row_id}: implementationDigest: the export recorded sha256:"
        in printed
    )
    assert ", the manifest hashes to sha256:" in printed
    assert printed.endswith("nothing written\n[exit 1]\n")
    assert not (tmp_path / "out").exists()


def test_a_link_to_no_row_is_named(tmp_path: Path) -> None:
    def change(line: Json) -> Json | None:
        return None if line["table"] == "workloads" else line

    printed = run_main(rewritten(tmp_path, change), tmp_path / "out")
    assert ": workloadId: no workloads row with id " in printed
    assert printed.endswith("[exit 1]\n")


def test_a_file_that_is_not_zstd_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "plain.jsonl.zst"
    path.write_text('{"table": "sources", "row": {}}\n')
    printed = run_main(path, tmp_path / "out")
    assert printed.startswith(f"{path}: -: not a readable zstd file (")
    assert printed.endswith("1 problem in the export; nothing written\n[exit 1]\n")


def test_the_import_checks_clean_and_twice_writes_the_same_bytes(tmp_path: Path) -> None:
    out = tmp_path / "kernelindex"
    printed = run_main(FIXTURE, out)
    assert printed.endswith("[exit 0]\n"), printed
    assert (
        "sol-execbench: not imported: its row states no policy; name it with --source sol-execbench"
        in printed
    )
    assert (
        "skipped serving tables, not benchmark kinds (a later issue may render them): " in printed
    )
    first = snapshot(out)
    assert sorted(first) == [
        "_records/flashinfer-bench.json",
        "_records/gpumode-kernelbot.json",
        "_sources/flashinfer-bench.json",
        "_sources/gpumode-kernelbot.json",
        "implementations.jsonl.zst",
        "operations.jsonl.zst",
        "projects.jsonl.zst",
        "runs/flashinfer-bench.jsonl.zst",
        "runs/gpumode-kernelbot.jsonl.zst",
        "workloads.jsonl.zst",
    ]
    report = json.loads(first["_sources/gpumode-kernelbot.json"])
    assert report["licence"] == "June 9 Researcher Reciprocity License v1.0"
    assert report["copyright"] == "GPU Mode and the KernelBot dataset"
    assert report["runs"] == {"passed": 196}
    assert run_main(FIXTURE, out).endswith("[exit 0]\n")
    assert snapshot(out) == first
    checked = check_content(out)
    assert [p.line() for p in checked.problems if p.severity == "error"] == []


def test_an_import_replaces_only_a_folder_it_wrote(tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    with pytest.raises(OutputError, match="a non-empty directory that is not a previous import"):
        main(FIXTURE, out, [])
    assert (out / "notes.txt").read_text() == "keep me"


def test_every_run_of_the_real_export_is_imported(tmp_path: Path) -> None:
    out = tmp_path / "kernelindex"
    printed = run_main(REAL, out, ("sol-execbench",))
    assert printed.endswith("[exit 0]\n"), printed[-2000:]
    assert "gpumode-kernelbot: 5,215 runs (5,215 passed)" in printed
    assert (
        "flashinfer-bench: 1,937 runs (4 compile_error, 1,851 passed, 82 runtime_error)" in printed
    )
    assert "sol-execbench: 705 runs (705 passed) (states no policy: named with --source)" in printed
    runs = 0
    for path in (out / "runs").iterdir():
        with open(path, "rb") as raw:
            reader = zstandard.ZstdDecompressor().stream_reader(raw)
            runs += sum(1 for line in io.BufferedReader(reader) if line.strip())
    assert runs == 7857
