"""write.py: staged, swapped-in output; refused output paths; failures leave the old site."""

from __future__ import annotations

import errno
import os
import re
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from sitegen.cli import main
from sitegen.pipeline import build_site
from sitegen.publish.write import (
    DISCARD_ASIDE_BYTES,
    MARKER,
    OutputError,
    WriteError,
    check_output_dir,
    patched,
    remove_tree,
    staged_folder,
    write_site,
)
from tests.conftest import FIXTURES, REPOSITORY, beside

SITE_CONTENT = FIXTURES / "site" / "content"


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_write_replaces_the_whole_tree(tmp_path: Path) -> None:
    out = tmp_path / "public"
    write_site({"a/index.html": b"one", "gone.html": b"old"}, out)
    write_site({"a/index.html": b"two"}, out)
    assert snapshot(out) == {"a/index.html": b"two", MARKER: (out / MARKER).read_bytes()}
    # No staging left behind; the lock file stays (removing it would race with a waiter).
    assert beside(tmp_path) == ["public"]


def test_exception_mid_write_keeps_previous_site(tmp_path: Path) -> None:
    out = tmp_path / "public"
    write_site({"index.html": b"previous"}, out)
    before = snapshot(out)
    written = []

    def failing(path: str, data: bytes) -> None:
        if len(written) == 2:
            raise OSError("disk full")
        written.append(path)
        Path(path).write_bytes(data)

    files = {f"p{i}/index.html": b"new" for i in range(5)}
    with pytest.raises(WriteError, match="disk full"):
        write_site(files, out, write_file=failing)
    assert snapshot(out) == before
    assert beside(tmp_path) == ["public"]


def test_killed_build_leftovers_are_cleaned(tmp_path: Path) -> None:
    out = tmp_path / "public"
    write_site({"index.html": b"previous"}, out)
    # What a build killed before its swap leaves: a marked staging tree beside the output.
    leftover = tmp_path / ".public.staging-dead"
    leftover.mkdir()
    (leftover / MARKER).write_text("x")
    (leftover / "half.html").write_text("half")
    unrelated = tmp_path / ".public.staging-not-ours"
    unrelated.mkdir()
    (unrelated / "keep.txt").write_text("keep")
    assert snapshot(out)["index.html"] == b"previous"
    write_site({"index.html": b"next"}, out)
    assert not leftover.exists() and unrelated.exists()


def test_failed_build_leaves_previous_output(tmp_path: Path) -> None:
    content = tmp_path / "content"
    shutil.copytree(SITE_CONTENT, content)
    out = tmp_path / "public"
    assert build_site(content, out).out_dir is not None
    before = snapshot(out)
    (content / "runs" / "bad.json").write_text('{"apiVersion": "kernelindex.dev/v1alpha1"}')
    assert build_site(content, out).out_dir is None
    assert snapshot(out) == before


def test_render_failure_leaves_previous_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "public"
    assert build_site(SITE_CONTENT, out).out_dir is not None
    before = snapshot(out)

    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("bug in a template")

    monkeypatch.setattr("sitegen.pipeline.render_into", explode)
    with pytest.raises(RuntimeError):
        build_site(SITE_CONTENT, out)
    assert snapshot(out) == before


@pytest.mark.parametrize(
    "case",
    ["root", "home", "repository", "content", "inside-content", "holds-content", "foreign", "file"],
)
def test_dangerous_output_paths_refused(tmp_path: Path, case: str) -> None:
    content = tmp_path / "work" / "content"
    content.mkdir(parents=True)
    foreign = tmp_path / "photos"
    foreign.mkdir()
    (foreign / "cat.jpg").write_bytes(b"\xff")
    a_file = tmp_path / "notes.txt"
    a_file.write_text("x")
    out = {
        "root": Path("/"),
        "home": Path.home(),
        "repository": REPOSITORY,
        "content": content,
        "inside-content": content / "public",
        "holds-content": tmp_path / "work",
        "foreign": foreign,
        "file": a_file,
    }[case]
    with pytest.raises(OutputError, match="refusing"):
        check_output_dir(out, content)
    assert (foreign / "cat.jpg").read_bytes() == b"\xff"


def test_cli_refuses_repository_root(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["build", str(SITE_CONTENT), "--out", str(REPOSITORY)]) == 2
    assert "refusing to write" in capsys.readouterr().err


def test_symlinked_output_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "public"
    link.symlink_to(real)
    with pytest.raises(OutputError, match="symbolic link"):
        write_site({"index.html": b"x"}, link)


def test_paths_escaping_the_output_refused(tmp_path: Path) -> None:
    for bad in ("../evil.html", "/etc/x", "a//b", "a/./b", ""):
        with pytest.raises(OutputError):
            write_site({bad: b"x"}, tmp_path / "public")
    assert not (tmp_path / "evil.html").exists()


def test_a_patch_moves_each_changed_file_in_and_deletes_the_gone(tmp_path: Path) -> None:
    out = tmp_path / "public"
    write_site({"a/index.html": b"a", "b/index.html": b"b", "c.json": b"c"}, out)
    with patched(out) as patch:
        patch.write("a/index.html", b"A")
        patch.write("new/index.html", b"n")
        patch.delete("b/index.html")
    assert snapshot(out) == {
        MARKER: (out / MARKER).read_bytes(),
        "a/index.html": b"A",
        "new/index.html": b"n",
        "c.json": b"c",
    }
    assert not (out / "b").exists(), "an emptied folder goes too"
    # A patch that fails leaves the output as it was, and no staging tree beside it.
    with pytest.raises(RuntimeError), patched(out) as patch:
        patch.write("a/index.html", b"half")
        raise RuntimeError("a template failed")
    assert (out / "a/index.html").read_bytes() == b"A"
    assert beside(tmp_path) == ["public"]
    with pytest.raises(OutputError):
        patch.delete("../outside")


def test_a_patch_of_a_process_that_lives_on_leaves_its_staging_tree_to_a_thread(
    tmp_path: Path,
) -> None:
    out = tmp_path / "public"
    big = b"x" * DISCARD_ASIDE_BYTES
    write_site({"export.jsonl": big, "small.json": b"s"}, out)
    before = os.stat(out / "export.jsonl")
    threads: list[threading.Thread] = []
    with patched(out, discard_aside=threads) as patch:
        patch.write("export.jsonl", b"y" * DISCARD_ASIDE_BYTES)
        patch.write("small.json", b"S")
        staging = patch.staging.root
    assert (out / "export.jsonl").read_bytes() == b"y" * DISCARD_ASIDE_BYTES
    assert (out / "small.json").read_bytes() == b"S"
    assert len(threads) == 1
    threads[0].join()
    # The replaced big file had a second name in the staging tree, removed with it.
    assert not staging.exists()
    assert beside(tmp_path) == ["public"]
    # The next patch waits for the last one's removal first; a failed one removes its own.
    threads.append(slow := threading.Thread(target=time.sleep, args=(0.2,)))
    slow.start()
    with pytest.raises(RuntimeError), patched(out, discard_aside=threads) as patch:
        assert not slow.is_alive() and threads == []
        patch.write("small.json", b"half")
        raise RuntimeError("a template failed")
    assert threads == [] and beside(tmp_path) == ["public"]
    assert (out / "small.json").read_bytes() == b"S"
    assert os.stat(out / "export.jsonl").st_ino != before.st_ino


def test_a_staged_folder_replaces_its_old_self_whole_or_not_at_all(tmp_path: Path) -> None:
    out = tmp_path / "public"
    write_site({"index.html": b"home", "pagefind/old.js": b"old"}, out)
    with staged_folder(out, "pagefind") as folder:
        folder.mkdir()
        (folder / "new.js").write_bytes(b"new")
        assert (out / "pagefind" / "old.js").is_file()  # nothing changes until the block ends
    assert sorted(p.name for p in (out / "pagefind").iterdir()) == ["new.js"]
    with pytest.raises(RuntimeError), staged_folder(out, "pagefind") as folder:
        folder.mkdir()
        raise RuntimeError("the index failed")
    assert (out / "pagefind" / "new.js").read_bytes() == b"new"
    with staged_folder(out, "pagefind"):
        pass  # left absent: the old one goes
    assert not (out / "pagefind").exists() and (out / "index.html").read_bytes() == b"home"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".public.sitegen-lock", "public"]
    with pytest.raises(OutputError, match="not a previous sitegen output"):
        staged_folder(tmp_path / "other", "pagefind").__enter__()


# --- a file system that refuses writes: one line, exit 2, the previous site as it was -----------

# As the command line's guard words them (cli/guard.py), after the path.
READ_ONLY = (
    "read-only file system; hint: that file system is read-only: remount it writable, or write "
    "somewhere else (--out)"
)
FULL = (
    "no space left on device; hint: the disk is full: free some space, or write somewhere else "
    "(--out)"
)


@pytest.mark.parametrize("where", ["lock", "staging", "page in a worker", "page"])
def test_a_file_system_that_refuses_writes_is_one_line_and_keeps_the_site(
    where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sitegen.process
    import sitegen.publish.write
    import sitegen.render.render

    out = tmp_path / "public"
    assert build_site(SITE_CONTENT, out).out_dir is not None
    before = snapshot(out)
    read_only = OSError(errno.EROFS, os.strerror(errno.EROFS))
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    if where == "lock":
        real_open = os.open

        def refusing_open(path: Any, *args: Any) -> int:
            if str(path).endswith(".sitegen-lock"):
                raise read_only
            return real_open(path, *args)

        monkeypatch.setattr(os, "open", refusing_open)
        expected = f"{tmp_path}/.public.sitegen-lock: {READ_ONLY}"
    elif where == "staging":
        real_mkdtemp = tempfile.mkdtemp

        def refusing_mkdtemp(*args: Any, **kwargs: Any) -> str:
            if ".staging-" in kwargs.get("prefix", ""):
                raise read_only
            return real_mkdtemp(*args, **kwargs)

        monkeypatch.setattr(tempfile, "mkdtemp", refusing_mkdtemp)
        expected = f"{tmp_path}: {READ_ONLY}"
    else:
        if where == "page in a worker":
            monkeypatch.setattr(sitegen.render.render, "PARALLEL_MIN_PAGES", 0)
            monkeypatch.setattr(sitegen.process, "usable_cpus", lambda: 2)
        written = []
        real_write = sitegen.publish.write._write_all

        def filling(descriptor: int, data: Any) -> None:
            written.append(1)
            if len(written) > 20:
                raise full
            real_write(descriptor, data)

        monkeypatch.setattr(sitegen.publish.write, "_write_all", filling)
        expected = f"{out.resolve()}/PATH: {FULL}"
    assert main(["build", str(SITE_CONTENT), "--out", str(out)]) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("sitegen")]
    pattern = re.escape(f"sitegen build: {expected}").replace("PATH", r"\S+")
    assert len(lines) == 1 and re.fullmatch(pattern, lines[0]), lines
    assert snapshot(out) == before
    assert beside(tmp_path) == ["public"]


def test_a_patch_never_writes_through_a_link_in_the_output(tmp_path: Path) -> None:
    out = tmp_path / "public"
    write_site({"a/index.html": b"a", "b/index.html": b"b"}, out)
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.rmtree(out / "a")
    (out / "a").symlink_to(outside)
    refused = r"public/a: it is not a folder sitegen made"
    with pytest.raises(OutputError, match=refused), patched(out) as patch:
        patch.write("a/index.html", b"through the link")
    with pytest.raises(OutputError, match=refused), patched(out) as patch:
        patch.delete("a/index.html")
    assert list(outside.iterdir()) == []


def test_a_stale_staging_tree_without_its_marker_is_removed_never_through_a_link(
    tmp_path: Path,
) -> None:
    """An older sitegen's removal cut short took the marker first; what is left, as mkdtemp
    made it (this user's, 0700), is ours. A link or an open folder with that name is not."""
    out = tmp_path / "public"
    write_site({"index.html": b"previous"}, out)
    stale = Path(tempfile.mkdtemp(prefix=".public.staging-", dir=tmp_path))
    for folder in range(20):
        (stale / f"runs/{folder}").mkdir(parents=True)
        for page in range(50):
            (stale / f"runs/{folder}/{page}.html").write_bytes(b"x")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.html").write_bytes(b"keep")
    (tmp_path / ".public.staging-linked00").symlink_to(elsewhere)
    (stale / "runs" / "link").symlink_to(elsewhere)
    shared = tmp_path / ".public.staging-shared00"
    shared.mkdir(mode=0o755)
    (shared / "someone.html").write_bytes(b"theirs")
    write_site({"index.html": b"new"}, out)
    assert not stale.exists()
    assert (elsewhere / "keep.html").read_bytes() == b"keep"
    assert beside(tmp_path) == [
        ".public.staging-linked00",
        ".public.staging-shared00",
        "elsewhere",
        "public",
    ]


def test_a_tree_is_removed_with_its_marker_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = tmp_path / "tree"
    for name in ("a", "b", "z"):
        (tree / name).mkdir(parents=True)
        (tree / name / "page.html").write_bytes(b"x")
    (tree / MARKER).write_bytes(b"ours")
    (tree / "top.html").write_bytes(b"x")
    removed: list[str] = []
    real_unlink, real_rmtree = os.unlink, shutil.rmtree

    def unlink(path: Any, *args: Any, **kwargs: Any) -> None:
        if Path(path).parent == tree:
            removed.append(Path(path).name)
        real_unlink(path, *args, **kwargs)

    def rmtree(path: Any, *args: Any, **kwargs: Any) -> None:
        if Path(path).parent in (tree, tmp_path):
            removed.append(Path(path).name)
        real_rmtree(path, *args, **kwargs)

    monkeypatch.setattr("sitegen.publish.write.os.unlink", unlink)
    monkeypatch.setattr("sitegen.publish.write.shutil.rmtree", rmtree)
    remove_tree(tree, MARKER)
    assert not tree.exists()
    assert removed[-2:] == [MARKER, "tree"] and sorted(removed[:-2]) == ["a", "b", "top.html", "z"]
