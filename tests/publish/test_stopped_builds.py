"""Builds that are stopped, however they are stopped, and builds that race: the published tree
is always a whole site, a stopped build's workers end within a second, and its staging tree is
gone (Ctrl-C, SIGTERM) or removed by the next build (`kill -9`).

These run `sitegen build` as a process on kernelindex.dev's part of the real catalog, whose
build renders in forked workers (render/render.py) and is long enough to be stopped in the middle.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sitegen.publish.lock import locked
from tests.conftest import FIXTURES, REPOSITORY, beside
from tests.test_pipeline import tree

# kernelindex.dev's part of the real catalog (7,152 runs): long enough a build to stop in the
# middle, without building the whole catalog (test_real_catalog.py does that) once per case.
CONTENT = REPOSITORY / "content" / "kernelindex"
SITE_CONTENT = FIXTURES / "site" / "content"
BUSY = (
    "sitegen build: {out} is being written by another sitegen command (process {pid}); "
    "run again when it has finished (sitegen build --wait waits for it)\n"
)


def _command(out: Path, *options: str, content: Path = CONTENT) -> list[str]:
    return [sys.executable, "-m", "sitegen", "build", str(content), "--out", str(out), *options]


def _start(out: Path, *options: str, content: Path = CONTENT) -> subprocess.Popen[str]:
    return subprocess.Popen(
        _command(out, *options, content=content),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=out.parent,
        # As from a terminal: a shell's background job (CI, say) would pass SIGINT on ignored.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


@pytest.fixture(scope="module")
def previous(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, bytes]]:
    """A good site of the real catalog, and its files: what every test starts from."""
    out = tmp_path_factory.mktemp("previous") / "public"
    subprocess.run(_command(out), check=True, capture_output=True, cwd=out.parent)
    return out, tree(out)


def _copy(previous: tuple[Path, dict[str, bytes]], tmp_path: Path) -> Path:
    """The previous site, copied to its own folder for one test."""
    source, _ = previous
    out = tmp_path / "public"
    subprocess.run(["cp", "-a", str(source), str(out)], check=True)
    return out


def _workers(pid: int) -> set[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return set()
    return {int(child) for child in text.split()}


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")  # a zombie has ended; only its parent's wait is missing


def _rendering(process: subprocess.Popen[str], out: Path) -> set[int]:
    """Wait until the build renders pages in its workers; their process ids."""
    deadline = time.monotonic() + 120
    seen: set[int] = set()
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        seen |= _workers(process.pid)
        staging = list(out.parent.glob(".public.staging-*/runs"))
        if seen and staging and sum(1 for _ in staging[0].iterdir()) > 50:
            return seen | _workers(process.pid)
        time.sleep(0.01)
    raise AssertionError("the build never got to rendering")


@pytest.mark.parametrize("stop", ["SIGINT", "SIGTERM", "SIGKILL"])
def test_a_stopped_build_leaves_the_previous_site_and_no_worker(
    stop: str, previous: tuple[Path, dict[str, bytes]], tmp_path: Path
) -> None:
    out = _copy(previous, tmp_path)
    process = _start(out)
    workers = _rendering(process, out)
    assert workers, "the real catalog renders in forked workers"
    process.send_signal(getattr(signal, stop))
    process.communicate(timeout=60)
    stopped = time.monotonic()
    while any(_alive(pid) for pid in workers) and time.monotonic() - stopped < 1.0:
        time.sleep(0.01)
    assert not any(_alive(pid) for pid in workers), "a worker outlived its build by a second"
    assert process.returncode != 0
    assert tree(out) == previous[1]
    if stop == "SIGKILL":  # nothing could clean up: the next build does
        assert [n for n in beside(tmp_path) if ".staging-" in n]
        again = subprocess.run(_command(out), capture_output=True, text=True, cwd=tmp_path)
        assert again.returncode == 0, again.stderr
        assert tree(out) == previous[1]
    assert beside(tmp_path) == ["public"]


def test_a_build_into_a_locked_output_is_refused_or_waits(
    previous: tuple[Path, dict[str, bytes]], tmp_path: Path
) -> None:
    out = _copy(previous, tmp_path)
    with locked(out.resolve()):
        refused = subprocess.run(_command(out), capture_output=True, text=True, cwd=tmp_path)
        assert (refused.returncode, refused.stdout) == (2, "")
        assert refused.stderr == BUSY.format(out=out.resolve(), pid=os.getpid())
        assert tree(out) == previous[1]
        waiting = _start(out, "--wait")
        time.sleep(1.0)
        assert waiting.poll() is None, waiting.communicate()
    _, err = waiting.communicate(timeout=120)
    assert waiting.returncode == 0, err
    assert tree(out) == previous[1]


def test_two_builds_at_once_always_leave_a_whole_site(tmp_path: Path) -> None:
    """Started together, ten times: one builds, the other is refused (or, if they did not
    overlap, both build); the site is whole every time and the next build accepts it. (The
    fixture site: its builds are short, and still overlap.)"""
    out = tmp_path / "public"
    subprocess.run(_command(out, content=SITE_CONTENT), check=True, capture_output=True)
    whole = tree(out)
    outcomes = []
    for _ in range(10):
        first, second = (_start(out, content=SITE_CONTENT) for _ in range(2))
        results = [(*p.communicate(timeout=120), p) for p in (first, second)]
        codes = sorted(p.returncode for _, _, p in results)
        assert codes in ([0, 0], [0, 2]), results
        for _, err, process in results:
            if process.returncode == 2:  # the pid read may be a moment old: any pid
                busy = BUSY.format(out=out.resolve(), pid="PID")
                assert re.fullmatch(re.escape(busy).replace("PID", r"\d+"), err), err
        outcomes.append(codes)
        assert tree(out) == whole
        assert beside(tmp_path) == ["public"]
    assert [0, 2] in outcomes, "the builds never overlapped: the test tests nothing"
