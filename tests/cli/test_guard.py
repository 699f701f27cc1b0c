"""The guard every command runs under: one line per failure, naming the path and what to do, the
exit status of exit_codes.py, no traceback without --debug; interrupts that leave the previous
site as it was, and say so truthfully."""

from __future__ import annotations

import errno
import os
import shutil
import signal
import types
from pathlib import Path
from typing import Any

import pytest

import sitegen.pipeline
import sitegen.publish.write
import sitegen.render.render
from sitegen.cli import main
from tests.conftest import FIXTURES

SITE_CONTENT = FIXTURES / "site" / "content"


def tree(root: Path) -> dict[str, bytes]:
    files = (p for p in sorted(root.rglob("*")) if p.is_file())
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in files}


def leftovers(out: Path) -> list[str]:
    """What a build left beside `out`, but the lock file that stays (publish/lock.py)."""
    beside = out.parent.iterdir()
    return sorted(
        p.name
        for p in beside
        if p.name.startswith(f".{out.name}.") and p.name != f".{out.name}.sitegen-lock"
    )


@pytest.fixture
def built(tmp_path: Path) -> Path:
    """A previous site at tmp/public, which a failed build must leave as it is."""
    out = tmp_path / "public"
    assert main(["build", str(SITE_CONTENT), "--out", str(out)]) == 0
    return out


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_a_build_interrupted_while_rendering_keeps_the_previous_site(
    built: Path,
    stop: signal.Signals,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    """Ctrl-C or SIGTERM, a real signal to this process, halfway through the pages: the staged
    tree is removed, the previous site is byte for byte the same, and the line says so."""
    before = tree(built)
    render_page = sitegen.render.render._render_page
    count = 0

    def render_then_stop(*args: Any) -> None:
        nonlocal count
        count += 1
        if count == 20:
            os.kill(os.getpid(), stop)
        render_page(*args)

    monkeypatch.setattr(sitegen.render.render, "_render_page", render_then_stop)
    # A background job (`cmd &` in a script) inherits SIGINT ignored, which sitegen respects:
    # give this process Python's own Ctrl-C, as a terminal's would have.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    request.addfinalizer(lambda: signal.signal(signal.SIGINT, previous))
    handlers = [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)]
    capsys.readouterr()
    assert main(["build", str(SITE_CONTENT), "--out", str(built)]) == 2
    assert count == 20  # stopped at the signal, not after every page
    assert capsys.readouterr().err.splitlines()[-1] == (
        "sitegen build: interrupted; the previous site is intact"
    )
    assert tree(built) == before
    assert leftovers(built) == []
    assert [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)] == handlers


def test_an_interrupt_during_the_swap_waits_for_it(
    built: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGTERM between the two renames of the swap: they both happen, then the interrupt; the
    line says the new site is in place, which it is."""
    content = built.parent / "content"
    shutil.copytree(SITE_CONTENT, content)
    (content / "runs" / next((content / "runs").iterdir()).name).unlink()
    rename = os.rename
    renames = []

    def rename_then_stop(source: Any, target: Any) -> None:
        # Only the swap's renames, beside the output: the search index is renamed inside staging.
        if Path(target).parent == built.parent:
            renames.append(target)
            if len(renames) == 1:
                os.kill(os.getpid(), signal.SIGTERM)
        rename(source, target)

    monkeypatch.setattr(sitegen.publish.write.os, "rename", rename_then_stop)
    capsys.readouterr()
    assert main(["build", str(content), "--out", str(built)]) == 2
    monkeypatch.undo()
    assert len(renames) == 2  # the old site aside, the new one in
    assert capsys.readouterr().err.splitlines()[-1] == (
        "sitegen build: interrupted; the new site is in place; the next build removes what is "
        "left of the old one"
    )
    fresh = built.parent / "fresh"
    assert main(["build", str(content), "--out", str(fresh)]) == 0
    assert tree(built) == tree(fresh)


def test_a_full_disk_names_the_file_and_removes_the_staged_tree(
    built: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    before = tree(built)
    write_all = sitegen.publish.write._write_all
    writes = 0

    def fill_up(descriptor: int, data: Any) -> None:
        nonlocal writes
        writes += 1
        if writes == 10:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # as os.write raises it
        write_all(descriptor, data)

    monkeypatch.setattr(sitegen.publish.write, "_write_all", fill_up)
    capsys.readouterr()
    assert main(["build", str(SITE_CONTENT), "--out", str(built)]) == 2
    (line,) = [x for x in capsys.readouterr().err.splitlines() if x.startswith("sitegen")]
    named, rest = line.removeprefix("sitegen build: ").split(": ", 1)
    # The file as it would have been published (publish/errors.py WriteError), not its staged copy.
    assert Path(named).relative_to(built.resolve()).parts
    assert rest == (
        "no space left on device; hint: the disk is full: free some space, or write somewhere "
        "else (--out)"
    )
    assert tree(built) == before and leftovers(built) == []


def test_a_full_disk_in_a_render_worker_is_the_same_failure(
    built: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A forked worker's OSError reaches the parent as itself: the environment's (exit 2), not
    a template's (exit 1)."""
    import sitegen.process

    monkeypatch.setattr(sitegen.process, "usable_cpus", lambda: 2)
    monkeypatch.setattr(sitegen.render.render, "PARALLEL_MIN_PAGES", 0)
    monkeypatch.setattr(sitegen.render.render, "CHUNK_PAGES", 7)

    def full(descriptor: int, data: Any) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(sitegen.publish.write, "_write_all", full)
    before = tree(built)
    capsys.readouterr()
    assert main(["build", str(SITE_CONTENT), "--out", str(built)]) == 2
    assert "no space left on device; hint: the disk is full" in capsys.readouterr().err
    assert tree(built) == before and leftovers(built) == []


def test_a_read_only_output_parent_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """mkdtemp's error names a random file that never existed: the line names the folder."""

    def read_only(prefix: str, dir: str) -> str:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.path.join(dir, prefix + "x1y2"))

    fake = types.SimpleNamespace(mkdtemp=read_only)
    monkeypatch.setattr(sitegen.publish.write, "tempfile", fake)
    assert main(["build", str(SITE_CONTENT), "--out", str(tmp_path / "public")]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"sitegen build: {tmp_path}: read-only file system; hint: that file system is "
        "read-only: remount it writable, or write somewhere else (--out)"
    )


def test_sitegens_own_bug_is_one_line_and_a_traceback_only_with_debug(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(sitegen.pipeline, "check_content", broken)  # imported by the handler
    line = (
        "sitegen check: internal error: ZeroDivisionError: division by zero; hint: this is "
        "sitegen's bug, not a problem of the content: run it again with --debug for the "
        "traceback, and report it\n"
    )
    assert main(["check", str(SITE_CONTENT)]) == 2
    assert capsys.readouterr().err == line
    assert main(["--debug", "check", str(SITE_CONTENT)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):\n") and err.endswith(line)
    assert 'raise ZeroDivisionError("division by zero")' in err


def test_a_failure_line_is_printable_whatever_the_path_holds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A content directory named with a newline and a terminal escape cannot forge a line."""
    missing = tmp_path / "x\n::error file=a::forged\x1b[2J"
    assert main(["check", str(missing)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "\x1b" not in err
    assert err == (
        f"sitegen check: {tmp_path}/x\\n::error file=a::forged\\x1b[2J: no such directory; "
        "hint: name the content directory: sitegen check CONTENT_DIR (default: content/ here)\n"
    )
