"""Rows a contributor measured: an unknown GPU, a machine described by `--environment`, the H200
runs of this catalog, and the environment file checked as strictly as content.

Expected outputs live beside their inputs in `tests/fixtures/liger/`; regenerate with
`SITEGEN_REGENERATE=1 pytest tests/importers/liger/test_measured.py` and read the diff.
"""

from __future__ import annotations

import contextlib
import io
from collections import Counter
from pathlib import Path

import pytest

from sitegen.cli import main as cli_main
from sitegen.importers.liger import importing
from sitegen.importers.liger.import_reports import FILE_COMMITS
from sitegen.importers.liger.importing import Measured, import_rows, main
from sitegen.model.digest import digest
from sitegen.pipeline import check_content
from tests.conftest import FIXTURES, REGENERATE, REPOSITORY, SHARED, read_json

LIGER = FIXTURES / "liger"
UNKNOWN_GPU = LIGER / "unknown-gpu"
MEASURED = LIGER / "measured"
HOST = MEASURED / "host.json"
MEASURED_CSV = MEASURED / "all_benchmark_data.csv"
UPSTREAM_FIXTURE = LIGER / "shared" / "all_benchmark_data.csv"  # the same file name
ENVIRONMENT_FILES = sorted(p for p in (LIGER / "environment-files").iterdir() if p.is_dir())
UPSTREAM = [SHARED / "data" / "liger" / name for name in FILE_COMMITS]
H200_CSV = SHARED / "data" / "liger-h200" / "all_benchmark_data.csv"
H200_ENVIRONMENT = REPOSITORY / "sources" / "liger-h200" / "environment.json"


def run_main(csv_paths: list[Path], out_dir: Path, measured: list[Measured]) -> str:
    """What `main` prints, stdout then stderr, and its exit status."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(csv_paths, out_dir, measured)
    return f"{out.getvalue()}{err.getvalue()}[exit {status}]\n"


def run_cli(argv: list[str]) -> str:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli_main(argv)
    return f"{out.getvalue()}{err.getvalue()}[exit {status}]\n"


def compare_or_regenerate(expected_file: Path, actual: str) -> None:
    if REGENERATE:
        expected_file.write_text(actual, encoding="utf-8")
    assert actual == expected_file.read_text(encoding="utf-8")


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


# --- an unknown GPU, with and without an environment ----------------------------------------------


def test_an_unknown_gpu_imports_with_hardware_from_its_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    output = run_main([UNKNOWN_GPU / "all_benchmark_data.csv"], Path("content"), [])
    compare_or_regenerate(UNKNOWN_GPU / "expected.txt", output)
    environments = tmp_path / "content" / "environments"
    h200 = read_json(environments / "liger-bench-nvidia-h200.json")
    assert h200["spec"] == {
        "hardware": {"vendor": "nvidia", "product": "NVIDIA H200", "architecture": "sm_90"},
        "software": {},
    }
    assert h200["metadata"]["title"] == "Liger benchmark host · H200"
    # The known GPU keeps the table's hardware, and both rows are upstream's.
    h100 = read_json(environments / "liger-bench-nvidia-h100-80gb-hbm3.json")
    assert h100["spec"]["hardware"]["formFactor"] == "80GB HBM3"
    runs = [read_json(p) for p in (tmp_path / "content" / "runs").rglob("*.json")]
    assert {run["spec"]["sourceNative"]["source"] for run in runs} == {"liger-kernel-bench"}
    assert check_content(tmp_path / "content", strict=True).ok


def test_an_environment_binds_every_row_of_its_csv(tmp_path: Path) -> None:
    host = read_json(HOST)
    host_digest = digest("ExecutionEnvironment", host["spec"])
    csv = tmp_path / "all_benchmark_data.csv"
    # The unknown GPU's rows, measured on the H200 the environment describes (the H100 row aside).
    lines = (UNKNOWN_GPU / "all_benchmark_data.csv").read_text().splitlines(keepends=True)
    csv.write_text("".join(line for line in lines if "H100" not in line))
    output = run_main([], tmp_path / "content", [Measured(HOST, (csv,))])
    assert output.endswith("[exit 0]\n") and "warning" not in output
    content = tmp_path / "content"
    assert sorted(p.name for p in (content / "environments").iterdir()) == ["lab-h200.json"]
    written = read_json(content / "environments" / "lab-h200.json")
    assert written["spec"] == host["spec"] and written["metadata"] == host["metadata"]
    (run_path,) = (content / "runs").rglob("*.json")
    run = read_json(run_path)
    assert run["spec"]["environmentDigest"] == host_digest
    native = run["spec"]["sourceNative"]
    assert native["source"] == "liger-kernel-scripts-lab-h200"
    assert native["externalId"].startswith("lab-h200/layer_norm/forward/liger/nvidia-h200/")
    assert run_path.name.startswith("lab-h200.liger.nvidia-h200.")
    assert run["metadata"]["name"].startswith("liger-lab-h200-layer-norm-forward-")
    report = read_json(content / "_sources" / "liger-kernel-scripts-lab-h200.json")
    assert report["source"] == native["source"]
    assert report["environment"] == {"name": "lab-h200", "digest": host_digest}
    assert report["files"] == [
        {"name": "all_benchmark_data.csv", "rows": 1, "imported": {"latency": 1}, "skipped": 0}
    ]
    assert not (content / "_sources" / "liger-kernel.json").exists(), "no upstream rows"
    assert check_content(content, strict=True).ok


def test_measured_rows_never_collide_with_upstream_ones(tmp_path: Path) -> None:
    alone = import_rows([UPSTREAM_FIXTURE])
    both = import_rows([UPSTREAM_FIXTURE], [Measured(HOST, (MEASURED_CSV,))])
    assert not both.problems and not both.skipped
    # Two files named all_benchmark_data.csv, told apart by where they come from.
    assert [(f.name, f.origin.tag) for f in both.sources] == [
        ("all_benchmark_data.csv", ""),
        ("all_benchmark_data.csv", "lab-h200"),
    ]
    tree = both.tree()
    for path, document in alone.tree().items():
        if path.startswith("_sources/"):
            continue
        assert tree[path] == document, f"{path}: the measured rows changed an upstream resource"
    ids = [row.run.document["spec"]["sourceNative"]["externalId"] for row in both.imported]
    assert len(set(ids)) == len(ids) == len(alone.imported) + 4
    assert len({row.run.path for row in both.imported}) == len(ids)
    # Whatever the order the files are given in, the same tree.
    more = tmp_path / "all_benchmark_data_more.csv"
    more.write_text(MEASURED_CSV.read_text().replace("2026-12-01", "2026-12-02"))
    forward = import_rows([UPSTREAM_FIXTURE], [Measured(HOST, (MEASURED_CSV, more))])
    backward = import_rows([UPSTREAM_FIXTURE], [Measured(HOST, (more, MEASURED_CSV))])
    assert not forward.problems and forward.tree() == backward.tree()


def test_the_current_benchmark_format_binds(tmp_path: Path) -> None:
    result = import_rows([], [Measured(HOST, (MEASURED_CSV,))])
    assert not result.problems and not result.skipped
    rows = {row.run.document["spec"]["sourceNative"]["benchmark"]: row for row in result.imported}
    # A sequence-length sweep over T, with the model's hidden size from the config.
    layer_norm = rows["layer_norm/forward"].resources["workload"].document["spec"]
    assert layer_norm["axes"] == {"rows": 1024, "hidden": 4096}
    rms_memory = rows["rms_norm/full"].run.document["spec"]
    assert rms_memory["measurements"][0]["unit"] == "mib"
    # The embedding sweep over B·T at T = 1024: a batch of 4.
    embedding = rows["embedding/forward"].resources["workload"].document["spec"]
    assert embedding["axes"] == {"batch": 4, "seq": 1024, "hidden": 4096, "vocab": 128256}
    # Liger accumulating in fp32 is an implementation of its own, not Liger's.
    fp32 = rows["fused_linear_cross_entropy/forward"].resources["implementation"]
    assert fp32.document["spec"]["callable"] == {
        "language": "triton",
        "interface": "accum_dtype_float32",
    }
    assert fp32.name == "liger-bench-fused-linear-cross-entropy-liger-fp32-accum"


# --- the H200 runs of this catalog ----------------------------------------------------------------


def test_every_h200_row_imports_with_its_environment() -> None:
    result = import_rows([], [Measured(H200_ENVIRONMENT, (H200_CSV,))])
    assert not result.problems and not result.warnings
    assert not result.skipped, [(row.reason, row.detail) for row in result.skipped[:5]]
    assert Counter(row.metric for row in result.imported) == {"latency": 614, "peak_memory": 218}
    kernels = {
        row.run.document["spec"]["sourceNative"]["benchmark"].split("/")[0]
        for row in result.imported
    }
    assert len(kernels) == 21
    environments = {row.resources["environment"].name for row in result.imported}
    assert environments == {"kernelindex-h200"}


def test_the_content_tree_is_upstream_and_the_h200_runs(tmp_path: Path) -> None:
    """content/ is what the documented command writes (README, docs/liger-import.md)."""
    result = import_rows(UPSTREAM, [Measured(H200_ENVIRONMENT, (H200_CSV,))])
    assert not result.problems and not result.skipped
    expected = {
        path: importing.render(document).encode() for path, document in result.tree().items()
    }
    assert expected == snapshot(REPOSITORY / "content"), "regenerate content/ (README)"


# --- the environment file is untrusted input ------------------------------------------------------


@pytest.mark.parametrize("case", ENVIRONMENT_FILES, ids=[case.name for case in ENVIRONMENT_FILES])
def test_a_bad_environment_file_is_one_line_and_writes_nothing(
    case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(case)  # the file as a contributor names it: host.json
    out = tmp_path / "content"
    (out / "_sources").mkdir(parents=True)  # a previous import, which it may replace
    (out / "_sources" / "liger-kernel.json").write_text("{}\n")
    (out / "keep.json").write_text("{}\n")
    before = snapshot(out)
    output = run_main([], out, [Measured(Path("host.json"), (MEASURED_CSV,))])
    compare_or_regenerate(case / "expected.txt", output)
    assert output.endswith("[exit 1]\n")
    assert output.count("host.json: ") == 1
    assert snapshot(out) == before


def test_an_environment_must_describe_its_rows_gpu(tmp_path: Path) -> None:
    output = run_main(
        [], tmp_path / "content", [Measured(HOST, (UNKNOWN_GPU / "all_benchmark_data.csv",))]
    )
    assert output.endswith("[exit 1]\n")
    assert (
        f"{UNKNOWN_GPU / 'all_benchmark_data.csv'}:3: gpu_name: 'NVIDIA H100 80GB HBM3', but the "
        "environment 'lab-h200' describes a 'NVIDIA H200'; hint: give each CSV after the "
        "--environment of the machine that measured it\n"
    ) in output
    assert not (tmp_path / "content").exists()


def test_two_machines_may_not_share_a_name(tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    other.write_text(HOST.read_text().replace('"580.159.04"', '"575.57.08"'))
    csv = tmp_path / "all_benchmark_data.csv"
    csv.write_text(MEASURED_CSV.read_text())
    result = import_rows([], [Measured(HOST, (MEASURED_CSV,)), Measured(other, (csv,))])
    assert [problem.line() for problem in result.problems] == [
        f"{other}: metadata.name: 'lab-h200' also names {HOST}, which describes another "
        "machine; hint: give each machine's environment a name of its own"
    ]


# --- the command line -----------------------------------------------------------------------------


def test_the_command_takes_an_environment_for_its_csvs(tmp_path: Path) -> None:
    content = tmp_path / "content"
    alone = run_cli(
        ["import", "liger", str(MEASURED_CSV), "--environment", str(HOST), "--out", str(content)]
    )
    assert alone.startswith("all_benchmark_data.csv (measured on lab-h200): 4 rows, 4 imported")
    first = snapshot(content)
    grouped = run_cli(
        ["import", "liger", "--environment", str(HOST), str(MEASURED_CSV), "--out", str(content)]
    )
    assert grouped == alone and snapshot(content) == first


def test_the_command_refuses_an_ambiguous_environment(tmp_path: Path) -> None:
    out = str(tmp_path / "content")
    argv = ["import", "liger", str(UPSTREAM_FIXTURE), "--environment", str(HOST)]
    output = run_cli([*argv, "--environment", str(HOST), str(MEASURED_CSV), "--out", out])
    assert output.endswith("[exit 2]\n")
    assert "names no CSV, so it describes every CSV before it" in output
    assert run_cli(["import", "liger", "--out", out]).endswith(
        "sitegen import liger: no CSV given\n[exit 2]\n"
    )
    assert not (tmp_path / "content").exists()
