"""`sitegen import --all` and `--verify` (sitegen/cli/importing.py): content/ is what the manifest's
steps write, and a source file that is not the recorded one stops everything."""

from __future__ import annotations

import hashlib
import shutil
import tomllib
from pathlib import Path

import pytest

from sitegen.cli import main
from tests.conftest import REPOSITORY, SOURCES

MANIFEST = str(SOURCES / "sources.toml")


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file, but the locks each step leaves beside its folder (ignored by git)."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.name.endswith(".sitegen-lock")
    }


def test_content_is_what_import_all_writes_and_again_the_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's regenerate command, into a fresh folder: byte for byte content/; run a
    second time over its own output, not one byte moves."""
    out = tmp_path / "content"
    assert (
        main(["import", "--all", "--sources", str(SOURCES / "sources.toml"), "--out", str(out)])
        == 0
    )
    printed = capsys.readouterr().out.splitlines()
    manifest = tomllib.loads((SOURCES / "sources.toml").read_text(encoding="utf-8"))
    sources, files = len(manifest["source"]), sum(len(s["files"]) for s in manifest["source"])
    assert printed[0].endswith(
        f"sources.toml: {sources} sources, {files} files, every sha256 as recorded"
    )
    assert printed[1].startswith("step 1/2: sitegen import liger ")
    written = snapshot(out)
    assert written == snapshot(REPOSITORY / "content"), "regenerate: sitegen import --all"
    assert (
        main(["import", "--all", "--sources", str(SOURCES / "sources.toml"), "--out", str(out)])
        == 0
    )
    assert snapshot(out) == written


def test_the_repository_sources_verify(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", "--verify", "--sources", str(SOURCES / "sources.toml")]) == 0
    assert capsys.readouterr().out.endswith("every sha256 as recorded\n")


def small_sources(root: Path) -> Path:
    """A sources folder of one real CSV and its manifest, with the recorded sha256."""
    folder = root / "sources"
    (folder / "liger").mkdir(parents=True)
    csv = folder / "liger" / "all_benchmark_data.csv"
    shutil.copy(SOURCES / "liger" / "all_benchmark_data.csv", csv)
    sha = hashlib.sha256(csv.read_bytes()).hexdigest()
    (folder / "sources.toml").write_text(
        f"""[[source]]
name = "liger"
title = "Liger-Kernel benchmark data"
repository = "https://github.com/linkedin/Liger-Kernel"
commit = "ead96b618e5c67bddc6a6e9bcb99bfe6b5ab661c"
upstream_path = "benchmark/data/"
licence = "BSD-2-Clause"
attribution = "Copyright 2024 LinkedIn Corporation"
obtained = "copied"
files = [{{ path = "liger/all_benchmark_data.csv", sha256 = "{sha}" }}]

[[import]]
importer = "liger"
out = "."
arguments = ["liger/all_benchmark_data.csv"]
""",
        encoding="utf-8",
    )
    return folder


def test_a_modified_source_file_fails_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = small_sources(tmp_path)
    csv = folder / "liger" / "all_benchmark_data.csv"
    recorded = hashlib.sha256(csv.read_bytes()).hexdigest()
    csv.write_bytes(csv.read_bytes().replace(b"H100", b"H200", 1))
    now = hashlib.sha256(csv.read_bytes()).hexdigest()
    out = tmp_path / "content"
    manifest = str(folder / "sources.toml")
    for flags in (["--all", "--out", str(out)], ["--verify"]):
        assert main(["import", *flags, "--sources", manifest]) == 1
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err.splitlines() == [
            f"{csv}: -: sha256 is {now}, sources.toml records {recorded} (source 'liger'); "
            "hint: the file is not the upstream one: restore it (git checkout), or record the "
            "new upstream file and its provenance in sources.toml",
            "1 problem in the sources; nothing imported",
        ]
    assert not out.exists()


def test_an_unlisted_file_a_link_and_a_bad_manifest_are_each_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = small_sources(tmp_path)
    (folder / "liger" / "extra.csv").write_text("x\n")
    (folder / "liger" / "all_benchmark_data.csv").rename(folder / "elsewhere.csv")
    (folder / "liger" / "all_benchmark_data.csv").symlink_to(folder / "elsewhere.csv")
    assert main(["import", "--verify", "--sources", str(folder / "sources.toml")]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"{folder}/elsewhere.csv: -: not listed in sources.toml; hint: every input needs its "
        "provenance: add it to a [[source]]'s files, or remove it",
        f"{folder}/liger/all_benchmark_data.csv: -: a symbolic link: a source is a "
        "regular file, never a link",
        f"{folder}/liger/extra.csv: -: not listed in sources.toml; hint: every input needs its "
        "provenance: add it to a [[source]]'s files, or remove it",
        "3 problems in the sources; nothing imported",
    ]
    manifest = folder / "sources.toml"
    text = manifest.read_text()
    manifest.write_text(
        text.replace('licence = "BSD-2-Clause"\n', 'licence = ""\nlicense = "x"\n')
        .replace('out = "."', 'out = "../up"')
        .replace('importer = "liger"', 'importer = "nope"')
        + '\n[[import]]\nimporter = "liger"\nout = "."\narguments = ["/etc/passwd", "--out"]\n'
    )
    assert main(["import", "--all", "--sources", str(manifest)]) == 1
    err = capsys.readouterr().err.splitlines()
    shown = str(manifest)
    assert err == [
        f"{shown}: source[0].license: unknown key; hint: allowed here: name, title, repository, "
        "commit, upstream_path, licence, attribution, obtained, files",
        f"{shown}: source[0].licence: not a non-empty string",
        f"{shown}: import[0].importer: no importer named 'nope'; "
        "hint: sitegen has: kernelindex, liger",
        f"{shown}: import[0].out: not a path inside the sources folder: '../up'",
        f"{shown}: import[1].arguments[0]: not a path inside the sources folder: '/etc/passwd'",
        f"{shown}: import[1].arguments[1]: --out is the step's `out`",
        "6 problems in the sources; nothing imported",
    ]


def test_import_without_a_source_or_all_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["import"]) == 2
    assert capsys.readouterr().err.startswith("sitegen import: name a source, or --all; hint: ")
