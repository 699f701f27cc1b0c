"""The Liger-Kernel importer: kernelindex.dev's digests, every row accounted for, safe writes.

Malformed inputs live in `tests/fixtures/liger/malformed/<case>/` with the exact output expected;
regenerate with `SITEGEN_REGENERATE=1 pytest tests/importers/liger/test_importing.py` and read
the diff.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import sitegen.publish.write
from sitegen.cli import main as cli_main
from sitegen.importers.liger import importing
from sitegen.importers.liger.import_reports import FILE_COMMITS, REPORT_PATH
from sitegen.importers.liger.importing import ImportResult, import_rows, main
from sitegen.importers.liger.resources import nanoseconds, operation
from sitegen.pipeline import check_content
from sitegen.publish.errors import WriteError
from tests.conftest import FIXTURES, REFERENCE, REGENERATE, REPOSITORY, SOURCES, beside, read_json

DATA = SOURCES / "liger"
CSVS = [DATA / name for name in FILE_COMMITS]
CUTILE, CUTEDSL = "all_benchmark_data_cutile.csv", "all_benchmark_data_cutedsl.csv"
LIGER_FIXTURES = FIXTURES / "liger"
MALFORMED = sorted(p for p in (LIGER_FIXTURES / "malformed").iterdir() if p.is_dir())


@pytest.fixture(scope="module")
def real() -> ImportResult:
    return import_rows(CSVS)


@pytest.fixture(scope="module")
def by_external_id(real: ImportResult) -> dict[str, importing.ImportedRow]:
    return {row.run.document["spec"]["sourceNative"]["externalId"]: row for row in real.imported}


def run_main(csv_paths: list[Path], out_dir: Path) -> str:
    """What `main` prints, stdout then stderr, and its exit status."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(csv_paths, out_dir)
    return f"{out.getvalue()}{err.getvalue()}[exit {status}]\n"


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def compare_or_regenerate(expected_file: Path, actual: str) -> None:
    if REGENERATE:
        expected_file.write_text(actual, encoding="utf-8")
    assert actual == expected_file.read_text(encoding="utf-8")


# --- the contract: kernelindex.dev's identities ---------------------------------------------------


def test_reproduces_every_digest_of_the_sample(
    by_external_id: dict[str, importing.ImportedRow],
) -> None:
    sample = read_json(REFERENCE / "liger-digest-sample.json")
    assert len(sample) == 89
    for external_id, expected in sample.items():
        row = by_external_id[external_id]
        run = row.run.document
        got: dict[str, Any] = {
            role: row.resources[role].digest
            for role in ("run", "workload", "implementation", "protocol", "environment")
        }
        got["operation"] = row.resources["operation"].digest
        got["name"] = run["metadata"]["name"]
        got["title"] = run["metadata"]["title"]
        got["implementationName"] = row.resources["implementation"].name
        got["workloadName"] = row.resources["workload"].name
        got["medianNs"] = run["spec"]["timing"]["latencyNs"]["median"]
        got["p20Ns"], got["p80Ns"] = (m["value"] for m in run["spec"]["measurements"])
        assert got == expected, external_id


def test_seed_row_resources_are_reproduced(
    seed_row: dict[str, Any],
    example_bundle: dict[str, Any],
    by_external_id: dict[str, importing.ImportedRow],
) -> None:
    external_id = seed_row["run"]["resource"]["spec"]["sourceNative"]["externalId"]
    row = by_external_id[external_id]
    for role, expected in seed_row.items():
        built = row.resources[role]
        assert built.digest == expected["digest"], role
        assert built.document["spec"] == expected["resource"]["spec"], role
        assert built.document["kind"] == expected["resource"]["kind"]
    for role in ("run", "protocol", "environment"):
        assert row.resources[role].document["metadata"] == example_bundle[role]["metadata"]
    assert (
        row.resources["implementation"].document["metadata"]
        == (seed_row["implementation"]["resource"]["metadata"])
    )


def test_operation_specs_are_the_reference_ones() -> None:
    reference = sorted((REFERENCE / "liger-operations").glob("*.json"))
    assert len(reference) == 35
    for path in reference:
        expected = read_json(path)
        shipped = operation(expected["metadata"]["name"]).document
        assert shipped["spec"] == expected["spec"]
        assert shipped["metadata"]["title"] == expected["metadata"]["title"]
        assert shipped["metadata"]["description"]


def test_the_rounding_tie_rounds_half_up() -> None:
    assert nanoseconds(46.8328125) == 46832813  # Python's round() would give …812
    assert nanoseconds(0.5776320099830627) == 577632


def test_row_counts(real: ImportResult) -> None:
    assert not real.problems
    assert not real.skipped
    counts = Counter((row.file, row.metric) for row in real.imported)
    assert counts == {
        ("all_benchmark_data.csv", "latency"): 1649,
        ("all_benchmark_data.csv", "peak_memory"): 799,
        (CUTILE, "latency"): 888,
        (CUTILE, "peak_memory"): 396,
        (CUTEDSL, "latency"): 132,
        (CUTEDSL, "peak_memory"): 33,
    }
    assert {source.name: source.rows for source in real.sources} == {
        "all_benchmark_data.csv": 2448,
        CUTILE: 1284,
        CUTEDSL: 165,
    }


def test_report_counts_resources_per_kind(real: ImportResult) -> None:
    report = real.reports()[REPORT_PATH]
    assert report["resources"] == {
        "OperationSpec": 35,
        "WorkloadCase": 309,
        "SoftwareProject": 5,
        "ImplementationRevision": 95,
        "BenchmarkProtocol": 7,
        "ExecutionEnvironment": 6,
        "BenchmarkRun": 3897,
    }
    assert report["runs"] == {"latency": 2669, "peak_memory": 1228}
    assert report["licence"] == {
        "spdx": "BSD-2-Clause",
        "copyright": "Copyright 2024 LinkedIn Corporation",
    }
    # Sources are reported in file-name order, whatever order they were given in.
    assert [f["commit"] for f in report["files"]] == [
        FILE_COMMITS[name] for name in sorted(FILE_COMMITS)
    ]


def test_each_row_has_its_own_identity(real: ImportResult) -> None:
    external_ids = [row.run.document["spec"]["sourceNative"]["externalId"] for row in real.imported]
    assert len(set(external_ids)) == len(external_ids)
    assert len({row.run.path for row in real.imported}) == len(real.imported)
    for row in real.imported:
        native = row.run.document["spec"]["sourceNative"]
        if row.file == CUTILE:
            assert native["externalId"].startswith("cutile/")
            assert native["source"] == "liger-kernel-bench-cutile"
        elif row.file == CUTEDSL:
            assert native["externalId"].startswith("cutedsl/")
        else:
            assert native["source"] == "liger-kernel-bench"


def test_memory_runs_are_never_latency(real: ImportResult) -> None:
    for row in real.imported:
        run, protocol = row.run.document, row.resources["protocol"].document
        if row.metric != "peak_memory":
            assert run["spec"]["timing"]["primaryStatistic"] == "median"
            continue
        assert "timing" not in run["spec"]
        assert [m["statistic"] for m in run["spec"]["measurements"]] == ["median", "p20", "p80"]
        assert {m["unit"] for m in run["spec"]["measurements"]} == {"mib"}
        assert "/memory/" in run["spec"]["sourceNative"]["externalId"]
        assert run["metadata"]["title"].endswith(" · peak memory")
        assert protocol["spec"]["measurement"]["timer"] == "not_timed"
        assert protocol["metadata"]["name"].startswith("liger-bench-peak-memory-")


def test_backend_kernels_bind(by_external_id: dict[str, importing.ImportedRow]) -> None:
    mrope = by_external_id[
        "cutile/qwen2vl_mrope/forward/liger_cutile/nvidia-b200/"
        "hidden4096-kv_heads8-q_heads32-seq1024-bf16/2026-06-26-06-45-33"
    ]
    tensors = mrope.resources["workload"].document["spec"]["tensors"]
    assert tensors["q"]["shape"] == [1, 32, 1024, 128]
    assert tensors["cos"] == {"shape": [3, 1, 1024, 128], "dtype": "bf16"}
    model = by_external_id[
        "cutedsl/cross_entropy/forward/torch/nvidia-b200/"
        "tokens2048-vocab32000-fp32/llama_2_7b/2026-07-05-21-00-28"
    ]
    assert model.run.document["metadata"]["labels"]["model_config"] == "llama_2_7b"
    # The cuTile group_norm sweep is over B·T, reshaped to (B·T / H) × channels × H.
    group = by_external_id[
        "cutile/group_norm/forward/liger_cutile/nvidia-b200/"
        "batch2-channels4096-channels_per_group4-hidden512-bf16/2026-06-26-06-45-00"
    ]
    assert group.resources["workload"].document["spec"]["tensors"]["x"]["shape"] == [2, 4096, 512]


# --- the content tree -----------------------------------------------------------------------------


def test_real_content_checks_clean_and_reimports_to_the_same_bytes(
    real: ImportResult, tmp_path: Path
) -> None:
    resources = real.resources()
    assert len({built.digest for built in resources}) == len(resources)  # each identity once
    importing.write_tree(real.tree(), tmp_path / "content")  # slow: the real tree is written once
    checked = check_content(tmp_path / "content", strict=True)
    assert checked.ok, [p.line() for p in checked.problems[:5]]
    assert checked.resource_count == len(resources)
    again = {
        path: importing.render(document) for path, document in import_rows(CSVS).tree().items()
    }
    assert {path: text.encode() for path, text in again.items()} == snapshot(tmp_path / "content")


def test_shared_identities_survive_by_name_whatever_the_order(tmp_path: Path) -> None:
    files = sorted((LIGER_FIXTURES / "shared").glob("*.csv"))
    forward, backward = import_rows(files), import_rows(list(reversed(files)))
    # The report lists the files in the order given; every resource is the same.
    assert {b.path: b.document for b in forward.resources()} == {
        b.path: b.document for b in backward.resources()
    }
    names = {built.name: built for built in forward.resources()}
    assert "liger-swiglu" in names and "liger-tiled-swiglu" not in names
    geglu = names["liger-bench-geglu-liger"].document["metadata"]
    assert geglu["title"] == "GeGLU MLP · Liger / Liger Triton"
    assert "liger-bench-geglu-liger-triton" not in names
    assert "liger-bench-geglu-liger-cutile" in names


def test_importing_twice_changes_no_byte(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    files = sorted((LIGER_FIXTURES / "shared").glob("*.csv"))
    first = run_main(files, Path("content"))
    before = snapshot(tmp_path / "content")
    assert run_main(files, Path("content")) == first
    assert snapshot(tmp_path / "content") == before
    assert beside(tmp_path) == ["content"]  # no staging left over


def test_a_failed_write_leaves_the_previous_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "content"
    before = previous_import(out)

    def fail(path: str, data: bytes) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(sitegen.publish.write, "_write_file", fail)
    with pytest.raises(WriteError, match=r"No space left on device: '\S*content/_sources/"):
        importing.write_tree({REPORT_PATH: {}, "a.json": {}}, out)
    assert snapshot(out) == before
    assert beside(tmp_path) == ["content"]


# --- rows that do not bind, input that is malformed -----------------------------------------------


def test_rows_that_do_not_bind_are_skipped_with_a_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    case = LIGER_FIXTURES / "skips"
    output = run_main(sorted(case.glob("*.csv")), Path("content"))
    compare_or_regenerate(case / "expected.txt", output)
    report = read_json(tmp_path / "content" / REPORT_PATH)
    compare_or_regenerate(
        case / "expected-skipped-rows.json", json.dumps(report["skippedRows"], indent=2) + "\n"
    )


@pytest.mark.parametrize("case", MALFORMED, ids=[case.name for case in MALFORMED])
def test_malformed_input_writes_nothing(case: Path, tmp_path: Path) -> None:
    out = tmp_path / "content"
    before = previous_import(out)
    output = run_main(sorted(case.glob("*.csv")), out)
    compare_or_regenerate(case / "expected.txt", output)
    assert output.endswith("[exit 1]\n")
    assert snapshot(out) == before
    assert beside(tmp_path) == ["content"]


@pytest.mark.parametrize(
    ("names", "refused", "source"),
    [
        (
            ["all_benchmark_data_Foo.csv", "all_benchmark_data_foo.csv"],
            "all_benchmark_data_foo.csv",
            "source 'foo', as all_benchmark_data_Foo.csv's does: their runs would share names",
        ),
        (
            ["all_benchmark_data.csv", "all_benchmark_data_\u00e9.csv"],
            "all_benchmark_data_\u00e9.csv",
            "no source: no letter a-z or digit",
        ),
    ],
)
def test_file_names_that_fold_to_one_source_are_refused(
    names: list[str], refused: str, source: str, tmp_path: Path
) -> None:
    """Runs are named after their file's source: two files of one source would share names,
    and the second's rows (here other measurements of the same rows) would be skipped."""
    lines = (REPOSITORY / "sources" / "liger" / CUTILE).read_text().splitlines(keepends=True)
    (tmp_path / names[0]).write_text("".join(lines[:6]))
    remeasured = [line.replace(",0.", ",1.") for line in lines[1:6]]
    (tmp_path / names[1]).write_text("".join([lines[0], *remeasured]))
    output = run_main([tmp_path / name for name in names], tmp_path / "content")
    assert output == (
        f"{tmp_path / refused}: file: its name gives {source}; "
        "hint: name each file all_benchmark_data_<source>.csv with a source of letters, digits "
        "and dashes that no other file has (sources fold to lowercase)\n"
        "1 problem in the input; nothing written\n[exit 1]\n"
    )
    assert not (tmp_path / "content").exists()


def previous_import(out: Path) -> dict[str, bytes]:
    """A folder a previous import wrote (its report says so), with one file in it."""
    (out / "_sources").mkdir(parents=True)
    (out / REPORT_PATH).write_text("{}\n")
    (out / "keep.json").write_text("{}\n")
    return snapshot(out)


# --- where an import may write --------------------------------------------------------------------


@pytest.mark.parametrize("case", ["project", "home", "current", "parent", "foreign", "link"])
def test_an_import_replaces_only_a_folder_it_wrote(
    case: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The same dangerous-path rules as `sitegen build`'s output (publish/write.py)."""
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    (work / "pyproject.toml").write_text("[project]\n")
    (work / ".git").mkdir()
    home = tmp_path / "home"
    (home / "notes.txt").parent.mkdir()
    (home / "notes.txt").write_text("mine")
    monkeypatch.setenv("HOME", str(home))
    foreign = tmp_path / "photos"
    foreign.mkdir()
    (foreign / "cat.jpg").write_bytes(b"\xff")
    (tmp_path / "link").symlink_to(foreign)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(work / "sub" if case in ("current", "parent") else tmp_path / "elsewhere")
    out, target, reason = {
        "project": (work, work, "it holds a project (pyproject.toml or .git)"),
        "home": (home, home, "the file system root or home directory"),
        "current": (Path("."), work / "sub", "it is or holds the current directory"),
        "parent": (Path(".."), work, "it is or holds the current directory"),
        "foreign": (
            foreign,
            foreign,
            "a non-empty directory that is not a previous import (no _sources folder)",
        ),
        "link": (tmp_path / "link", tmp_path / "link", "it is a symbolic link"),
    }[case]
    before = {folder: snapshot(folder) for folder in (work, home, foreign)}
    csvs = [str(path) for path in sorted((LIGER_FIXTURES / "shared").glob("*.csv"))]
    capsys.readouterr()
    assert cli_main(["import", "liger", *csvs, "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == (
        "",
        f"sitegen import: refusing to write to {target}: {reason}\n",
    )
    assert {folder: snapshot(folder) for folder in (work, home, foreign)} == before


def test_an_import_replaces_a_previous_import_whole(tmp_path: Path) -> None:
    out = tmp_path / "content"
    previous_import(out)
    output = run_main(sorted((LIGER_FIXTURES / "shared").glob("*.csv")), out)
    assert output.endswith("[exit 0]\n")
    written = snapshot(out)
    assert "keep.json" not in written and REPORT_PATH in written
    assert check_content(out).ok
