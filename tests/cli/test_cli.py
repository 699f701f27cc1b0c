"""The command line: exit codes, the report's shape, and `sitegen digest`."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sitegen.cli import main
from tests.conftest import FIXTURES, REFERENCE, SOURCES


def test_check_example_warns_of_its_unresolved_references(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The seed bundle names a workload and an implementation that are not in the tree: exit 0
    with a warning each and their count in the summary; under --strict, errors and exit 1."""
    content = tmp_path / "content"
    content.mkdir()
    example = REFERENCE / "layer-norm-backward-liger-h100.json"
    (content / "run.json").write_bytes(example.read_bytes())
    spec = json.loads(example.read_text())["run"]["spec"]
    lines = [
        "content/run.json: run.spec.implementationDigest: {}no ImplementationRevision with "
        f"digest {spec['implementationDigest']}; hint: the content holds no "
        "ImplementationRevision at all",
        "content/run.json: run.spec.workloadDigest: {}no WorkloadCase or WorkloadSuite with "
        f"digest {spec['workloadDigest']}; hint: the content holds no WorkloadCase or "
        "WorkloadSuite at all",
    ]
    assert main(["check", str(content)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        *(line.format("warning: ") for line in lines),
        "ok, 2 warnings: 3 resources in 1 file",
    ]
    assert main(["check", str(content), "--strict"]) == 1
    assert capsys.readouterr().out.splitlines() == [
        *(line.format("") for line in lines),
        "2 errors, 0 warnings: 3 resources in 1 file",
    ]


def test_check_reports_content_problems_with_exit_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "content").mkdir()
    (tmp_path / "content" / "a.json").write_text('{"x": 1,}')
    assert main(["check", str(tmp_path / "content")]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "content/a.json: 1:9: invalid JSON: expecting property name enclosed in double quotes",
        "1 error, 0 warnings: 0 resources in 1 file",
    ]


def test_usage_errors_exit_2() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "sitegen", "check", "--no-such-option"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert "usage: sitegen" in result.stderr


@pytest.mark.parametrize("factor", ["1", "0.9", "inf", "ten"])
def test_a_regression_threshold_is_a_factor_above_one(factor: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "sitegen", "build", "--regression-threshold", factor],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == (
        "sitegen build: error: argument --regression-threshold: a factor above 1, such as 1.1, "
        f"not {factor!r}"
    )


def test_the_command_flushes_its_output_before_its_hard_exit(tmp_path: Path) -> None:
    """`sitegen` ends with os._exit (no teardown): what it printed must still arrive, piped
    (block-buffered), with the exit code `main` returned."""
    import tomllib

    from tests.conftest import FIXTURES, REPOSITORY

    scripts = tomllib.loads((REPOSITORY / "pyproject.toml").read_text())
    assert scripts["project"]["scripts"]["sitegen"] == "sitegen.cli:run"
    content = FIXTURES / "site" / "content"
    command = [sys.executable, "-m", "sitegen", "build", str(content), "--out"]
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}

    def sitegen(out: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*command, str(out)], capture_output=True, text=True, env=environment)

    built = sitegen(tmp_path / "out")
    assert built.returncode == 0 and built.stdout.startswith("built "), built
    assert (tmp_path / "out" / "index.html").is_file()
    broken = tmp_path / "broken"
    shutil.copytree(content, broken)
    (broken / "zz.json").write_text("{")
    command[-2] = str(broken)
    failed = sitegen(tmp_path / "out2")
    assert failed.returncode == 1
    assert "zz.json: 1:2: invalid JSON" in failed.stdout
    assert failed.stderr.endswith("build failed: nothing was written\n")


def test_digest_prints_kind_name_and_digest(
    capsys: pytest.CaptureFixture[str], seed_row: dict[str, Any], tmp_path: Path
) -> None:
    path = tmp_path / "operation.json"
    path.write_text(json.dumps(seed_row["operation"]["resource"]))
    assert main(["digest", str(path)]) == 0
    assert capsys.readouterr().out == (
        f"{path}\tOperationSpec\tliger-layer-norm\t{seed_row['operation']['digest']}\n"
    )


def test_digest_of_a_bundle_names_each_member(capsys: pytest.CaptureFixture[str]) -> None:
    example = REFERENCE / "layer-norm-backward-liger-h100.json"
    assert main(["digest", str(example)]) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert [(r[0].split("#")[1], r[1]) for r in rows] == [
        ("run", "BenchmarkRun"),
        ("protocol", "BenchmarkProtocol"),
        ("environment", "ExecutionEnvironment"),
    ]
    assert rows[0][3] == "sha256:f0cf6dd69e048a9b8a36f49fe2ac18abee9a512e48d2f92dd7cfd4d03a280b86"


def test_import_liger_writes_a_tree_that_checks_clean(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    csv = tmp_path / "all_benchmark_data.csv"
    rows = (SOURCES / "liger" / "all_benchmark_data.csv").read_text().splitlines()
    seed = [r for r in rows if r.startswith("layer_norm,liger,backward,speed")]
    csv.write_text("\n".join([rows[0], *seed]) + "\n")
    out = tmp_path / "content"
    assert main(["import", "liger", str(csv), "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["check", str(out), "--strict"]) == 0
    assert capsys.readouterr().out.startswith("ok, 0 warnings:")
    seed_run = out / "runs" / "layer_norm" / "backward"
    assert any(
        p.name.endswith("hidden16384-rows4096-fp32.2025-07-17-18-18-16.json")
        for p in seed_run.iterdir()
    )


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"sitegen {version('sitegen')}\n"
    result = subprocess.run(
        [sys.executable, "-m", "sitegen", "--version"], capture_output=True, text=True
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "sitegen 0.1.0\n", "")


@pytest.mark.parametrize("command", ["check", "build", "serve"])
def test_every_command_refuses_a_missing_content_directory_alike(
    command: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same line and exit 2 from each, with the full path (`..` folded, as typed)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "here").mkdir()
    assert main([command, "here/../nowhere"]) == 2
    assert capsys.readouterr().err == (
        f"sitegen {command}: {tmp_path}/nowhere: no such directory; hint: name the content "
        f"directory: sitegen {command} CONTENT_DIR (default: content/ here)\n"
    )
    (tmp_path / "a-file").write_text("")
    assert main([command, "a-file"]) == 2
    assert capsys.readouterr().err.startswith(
        f"sitegen {command}: {tmp_path}/a-file: not a directory;"
    )
    assert main([command]) == 2  # the default, content/, is not here either
    assert f"sitegen {command}: {tmp_path}/content: no such directory;" in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == ["a-file", "here"]  # nothing written


def test_digest_import_and_diff_refuse_missing_paths_with_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["digest", str(tmp_path / "gone.json")]) == 2
    assert capsys.readouterr().err == (
        f"sitegen digest: {tmp_path}/gone.json: no such file; hint: check the path\n"
    )
    assert main(["diff", str(tmp_path / "gone")]) == 2
    assert capsys.readouterr().err == (
        f"sitegen diff: {tmp_path}/gone: not a directory, a manifest file, an http(s) URL or a "
        "git commit\n"
    )
    monkeypatch.chdir(tmp_path)
    assert main(["import", "liger", "gone.csv", "--out", "content"]) == 2
    assert capsys.readouterr().err == (
        f"sitegen import: {tmp_path}/gone.csv: no such file or directory; hint: check the path\n"
    )
    assert not (tmp_path / "content").exists()


def test_an_empty_content_directory_warns(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    empty = tmp_path / "content"
    empty.mkdir()
    warning = (
        "content: -: warning: no resources: the site built from it has no runs; hint: is this "
        "the content tree? Resources are its .json files and .jsonl(.zst) bulk files"
    )
    assert main(["check", str(empty)]) == 0
    assert capsys.readouterr().out == f"{warning}\nok, 1 warning: 0 resources in 0 files\n"
    assert main(["check", str(empty), "--strict"]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == "1 error, 0 warnings: 0 resources in 0 files"
    assert main(["build", str(empty), "--out", str(tmp_path / "public"), "--no-search"]) == 0
    captured = capsys.readouterr()
    assert warning in captured.err.splitlines()
    assert captured.out.startswith("built 15 pages (0 runs) in ")


def test_counts_are_plural_correct(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """One run: `1 run`, `1 file`, and its kernel page's `1 implementation ranked`, `1 run`."""
    content = tmp_path / "content"
    content.mkdir()
    shutil.copy(REFERENCE / "layer-norm-backward-liger-h100.json", content / "run.json")
    out = tmp_path / "public"
    assert main(["build", str(content), "--out", str(out)]) == 0
    built = capsys.readouterr().out
    index = r"of which the search index \d+\.\d s \(4 pages, \d+\.\d MiB\)"
    assert re.fullmatch(rf"built 19 pages \(1 run\) in \d+\.\d s, {index} → {out}\n", built), built
    kernel = next((out / "kernels").glob("*/index.html")).read_text()
    assert "LayerNorm: 1 implementation ranked on 1 GPU, 1 run." in kernel
    assert "· 1 ranked" in kernel
    assert main(["build", str(FIXTURES / "site" / "content"), "--out", str(out)]) == 0
    assert capsys.readouterr().out.startswith("built 63 pages (28 runs) in ")


def test_a_build_logs_a_line_per_stage_off_a_terminal(tmp_path: Path) -> None:
    """Netlify's log is not a terminal: each stage's name and time, in order."""
    from tests.conftest import FIXTURES

    command = [sys.executable, "-m", "sitegen", "build", str(FIXTURES / "site" / "content")]
    result = subprocess.run(
        [*command, "--out", str(tmp_path / "public")], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    stages = [re.fullmatch(r"(\w+): \d+\.\d\d s", line) for line in result.stderr.splitlines()]
    assert [m.group(1) for m in stages if m] == [
        "load",
        "resolve",
        "analyse",
        "plan",
        "render",
        "index",  # the search index: Pagefind is installed with the tests
        "publish",
    ]
    assert "\r" not in result.stderr  # the in-place counter is a terminal's only


def test_check_prints_hostile_names_and_keys_as_one_line_each(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    content = tmp_path / "content"
    content.mkdir()
    (content / "a\n::error file=x::forged.json").write_text("{")
    protocol = FIXTURES / "site" / "content" / "protocols" / "liger-bench-do-bench-forward.json"
    document = json.loads(protocol.read_text())
    document["metadata"]["\x1b[2J\n::error::"] = 1
    (content / "b.json").write_text(json.dumps(document))
    assert main(["check", str(content)]) == 1
    out = capsys.readouterr().out
    assert "\x1b" not in out
    assert out.splitlines() == [
        "content/a\\n::error file=x::forged.json: 1:2: invalid JSON: expecting property name "
        "enclosed in double quotes",
        *[line for line in out.splitlines() if line.startswith("content/b.json: ")],
        "2 errors, 0 warnings: 0 resources in 2 files",
    ]
    assert "content/b.json: metadata.\\x1b[2J\\n::error::: unknown field;" in out


@pytest.mark.parametrize("command", ["check", "build", "serve"])
def test_a_content_folder_given_as_a_link_is_a_usage_error_naming_it(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    link = tmp_path / "content"
    link.symlink_to(FIXTURES / "site" / "content")
    assert main([command, str(link)]) == 2
    assert capsys.readouterr().err == (
        f"sitegen {command}: {link}: a symbolic link, and content is never read through one; "
        f"hint: name the folder it leads to: sitegen {command} {FIXTURES / 'site' / 'content'}\n"
    )
