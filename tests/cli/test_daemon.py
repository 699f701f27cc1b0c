"""The build daemon (`sitegen build --daemon`): it runs the next `--incremental` builds with
the state held, each byte for byte a cold build; it takes no build from other code or another
user's shape of request; a client's Ctrl-C or going away interrupts its build; its state is
kept when it ends."""

from __future__ import annotations

import contextlib
import gc
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

import sitegen.cli.daemon
from sitegen import process
from sitegen.cli import main
from sitegen.cli.daemon import (
    REQUEST_LIMIT,
    WATCH_THREAD,
    Daemon,
    _read_request,
    _Watch,
    daemon_paths,
    peer_credentials,
)
from sitegen.cli.exit_codes import EXIT_OK
from sitegen.publish.incremental import read_state
from sitegen.publish.lock import locked
from tests.publish.test_incremental import cold, edit, run_files, site_content
from tests.test_pipeline import tree

DAEMON_LINE = re.compile(r"run by the build daemon \(process (\d+)\)")


@pytest.fixture
def daemons() -> Iterator[list[int]]:
    """The daemons a test started, by process id: ended (SIGTERM) after it if still there."""
    started: list[int] = []
    yield started
    for pid in started:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        assert _gone(pid)


def _gone(pid: int, within: float = 30.0) -> bool:
    """Whether the daemon `pid` has ended within `within` seconds (this process reaps it: a
    test's client started it; a command's client exits, and it is reparented)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return True
        except ChildProcessError:  # reaped by subprocess's own clean-up, or not a child
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return True
        time.sleep(0.05)
    return False


def _build(
    capsys: pytest.CaptureFixture[str], content: Path, out: Path, *options: str
) -> tuple[int, int | None, str]:
    """A `sitegen build` run in this process: its exit status, the daemon that ran it if one
    did, and what it printed on stderr."""
    code = main(["build", str(content), "--out", str(out), "--no-search", *options])
    err = capsys.readouterr().err
    found = DAEMON_LINE.search(err)
    return code, int(found[1]) if found else None, err


def _started(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], daemons: list[int]
) -> tuple[Path, Path, int]:
    """A copy of the site's content built with `--daemon`: the content, the output and the
    daemon that built it (ended after the test)."""
    content, out = site_content(tmp_path), tmp_path / "public"
    code, pid, _ = _build(capsys, content, out, "--daemon")
    assert code == 0 and pid is not None and pid != os.getpid()
    daemons.append(pid)
    return content, out, pid


def _raise_median(document: dict) -> None:  # type: ignore[type-arg]
    document["spec"]["timing"]["latencyNs"]["median"] += 1000


def test_the_daemon_runs_the_next_incremental_builds_as_cold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], daemons: list[int]
) -> None:
    content, out, pid = _started(tmp_path, capsys, daemons)
    assert tree(out) == cold(content, tmp_path, "first")
    first = run_files(content)[0]
    edit(first, _raise_median)
    code, by, _ = _build(capsys, content, out, "--incremental")
    assert (code, by) == (0, pid)
    assert tree(out) == cold(content, tmp_path, "edited")
    # A file it does not check clean: exit 1 and the report, the site as it was, still held.
    before = tree(out)
    (content / "broken.json").write_text('{"apiVersion": ')
    assert main(["build", str(content), "--out", str(out), "--incremental", "--no-search"]) == 1
    printed = capsys.readouterr()
    assert "content/broken.json: 1:16: invalid JSON" in printed.out
    assert "build failed: nothing was written" in printed.err
    assert tree(out) == before
    (content / "broken.json").unlink()
    edit(first, _raise_median)
    assert _build(capsys, content, out, "--incremental")[:2] == (0, pid)
    assert tree(out) == cold(content, tmp_path, "again")
    # An output changed between builds is rebuilt whole, as by `build --incremental` on disk.
    (out / "index.html").write_text("defaced")
    assert _build(capsys, content, out, "--incremental")[:2] == (0, pid)
    assert tree(out) == cold(content, tmp_path, "again")
    # Ended between builds, it keeps the state: the next build, in this process, starts from it.
    os.kill(pid, signal.SIGTERM)
    assert _gone(pid)
    daemons.remove(pid)
    assert read_state(out, content) is not None
    edit(first, _raise_median)
    code, by, _ = _build(capsys, content, out, "--incremental")
    assert (code, by) == (0, None)
    assert tree(out) == cold(content, tmp_path, "after")


def test_a_command_the_daemon_runs_never_imports_the_pipeline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], daemons: list[int]
) -> None:
    """`sitegen build --incremental` handed to the daemon imports none of the build's stages
    (pydantic's models among them: ~0.4 s a command at 100k runs' daemon, doing nothing)."""
    content, out, pid = _started(tmp_path, capsys, daemons)
    edit(run_files(content)[0], _raise_median)
    command = [sys.executable, "-X", "importtime", "-m", "sitegen", "build", str(content)]
    command += ["--out", str(out), "--incremental", "--no-search"]
    client = subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)
    assert client.returncode == 0, client.stderr[-2000:]
    assert f"run by the build daemon (process {pid})" in client.stderr
    imported = {line.rsplit("|", 1)[-1].strip() for line in client.stderr.splitlines()}
    assert "sitegen.cli.daemon" in imported
    assert not imported & {"sitegen.pipeline", "sitegen.content.load", "pydantic"}
    assert tree(out) == cold(content, tmp_path, "edited")


def test_stop_daemon_ends_it_keeping_its_state(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    daemons: list[int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`build --stop-daemon` builds nothing: the daemon writes its state, answers and ends, from
    a client of any code; asked again, none runs; the next build starts from the state."""
    content, out, pid = _started(tmp_path, capsys, daemons)
    edit(run_files(content)[0], _raise_median)
    assert _build(capsys, content, out, "--incremental")[:2] == (0, pid)
    before = tree(out)
    monkeypatch.setattr(sitegen.cli.daemon, "code_hash", lambda: "other code")
    assert main(["build", str(content), "--out", str(out), "--stop-daemon"]) == 0
    said = f"stopped the build daemon (process {pid}); its state is kept for the next"
    assert said in capsys.readouterr().out
    assert _gone(pid)
    daemons.remove(pid)
    assert tree(out) == before and read_state(out, content) is not None
    assert main(["build", str(content), "--out", str(out), "--stop-daemon"]) == 0
    assert "no build daemon runs for this content and output" in capsys.readouterr().out
    monkeypatch.undo()
    edit(run_files(content)[0], _raise_median)
    code, by, err = _build(capsys, content, out, "--incremental")
    assert (code, by) == (0, None) and "full build" not in err
    assert tree(out) == cold(content, tmp_path, "after")


def test_a_daemon_that_does_not_answer_the_stop_is_said_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A listener that closes the request unanswered (a daemon mid-build would answer only
    after it): exit 2 and what to do, no traceback."""
    content, out = tmp_path / "content", tmp_path / "public"
    paths = daemon_paths(out, content, make=True)
    assert paths is not None
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(os.fspath(paths[0]))
    listener.listen(1)

    def close_unanswered() -> None:
        connection, _ = listener.accept()
        connection.recv(100)
        connection.close()

    thread = threading.Thread(target=close_unanswered)
    thread.start()
    try:
        assert main(["build", str(content), "--out", str(out), "--stop-daemon"]) == 2
    finally:
        thread.join()
        listener.close()
        os.unlink(paths[0])
    err = capsys.readouterr().err
    assert "the build daemon did not answer the request to stop" in err
    assert "Traceback" not in err


def test_a_daemon_of_other_code_refuses_and_ends(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    daemons: list[int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    content, out, pid = _started(tmp_path, capsys, daemons)
    # As a client after an edit of sitegen's code: the daemon runs the code it started with.
    monkeypatch.setattr(sitegen.cli.daemon, "code_hash", lambda: "other code")
    edit(run_files(content)[0], _raise_median)
    code, by, err = _build(capsys, content, out, "--incremental")
    assert (code, by) == (0, None)
    assert "the build daemon did not take this build (it runs other sitegen code)" in err
    assert tree(out) == cold(content, tmp_path, "edited")
    assert _gone(pid)
    daemons.remove(pid)


def test_an_output_being_written_is_refused_and_the_daemon_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], daemons: list[int]
) -> None:
    content, out, pid = _started(tmp_path, capsys, daemons)
    edit(run_files(content)[0], _raise_median)
    with locked(out.resolve()):  # another command writing the output
        code, by, err = _build(capsys, content, out, "--incremental")
    assert (code, by) == (2, None)
    assert f"{out.resolve()} is being written by another sitegen command" in err
    assert _build(capsys, content, out, "--incremental")[:2] == (0, pid)
    assert tree(out) == cold(content, tmp_path, "edited")


def test_what_json_cannot_carry_is_built_here_and_the_daemon_goes_on(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    daemons: list[int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    content, out, pid = _started(tmp_path, capsys, daemons)
    edit(run_files(content)[0], _raise_median)
    # A variable of bytes that are not UTF-8 (os.environ holds them surrogate-escaped).
    monkeypatch.setenv("SITEGEN_TEST_BYTES", os.fsdecode(b"caf\xe9"))
    code, by, err = _build(capsys, content, out, "--incremental")
    assert (code, by) == (0, None)
    assert "(a path or an environment variable is not UTF-8): built in this process" in err
    monkeypatch.delenv("SITEGEN_TEST_BYTES")
    monkeypatch.setenv("SITEGEN_TEST_BIG", "x" * REQUEST_LIMIT)
    code, by, err = _build(capsys, content, out, "--incremental")
    assert (code, by) == (0, None)
    assert "(the options and environment take over 1 MiB)" in err
    monkeypatch.delenv("SITEGEN_TEST_BIG")
    edit(run_files(content)[0], _raise_median)
    assert _build(capsys, content, out, "--incremental")[:2] == (0, pid)
    assert tree(out) == cold(content, tmp_path, "edited")


def test_without_a_daemon_an_incremental_build_is_built_here(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    content, out = site_content(tmp_path), tmp_path / "public"
    assert _build(capsys, content, out, "--incremental")[:2] == (0, None)
    # A cache folder whose path leaves no room for a socket's name: no daemon, said so.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / ("c" * 120)))
    code, by, err = _build(capsys, content, out, "--daemon")
    assert (code, by) == (0, None)
    assert "warning: no private cache folder for a build daemon: built in this process" in err
    assert daemon_paths(out, content, make=False) is None


@pytest.fixture
def sigint_handled() -> Iterator[None]:
    """SIGINT handled, as the daemon's process handles it between builds (cli/daemon.py): a
    test run as a shell's background job inherits SIGINT ignored, which `stopped_by_signals`
    leaves ignored, so no interrupt would reach the build there."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.usefixtures("sigint_handled")
def test_a_client_that_asks_or_goes_away_interrupts_the_build() -> None:
    for ending in ("interrupt", "close"):
        ours, theirs = socket.socketpair()
        interrupted = False
        with ours, theirs, process.stopped_by_signals():  # closed whatever the test finds
            try:
                with _Watch(ours):
                    if ending == "interrupt":
                        theirs.sendall(b"interrupt\n")
                    else:
                        theirs.close()
                    deadline = time.monotonic() + 10
                    while time.monotonic() < deadline:  # a build, working
                        time.sleep(0.01)
            except KeyboardInterrupt:
                interrupted = True
        assert interrupted, ending


@pytest.mark.usefixtures("sigint_handled")
def test_no_interrupt_reaches_past_the_build() -> None:
    """A client that goes away once its build has ended interrupts nothing (a stray SIGINT
    would raise KeyboardInterrupt here, outside any build)."""
    ours, theirs = socket.socketpair()
    with process.stopped_by_signals(), _Watch(ours):
        pass
    theirs.close()
    for thread in threading.enumerate():
        if thread.name == WATCH_THREAD:
            thread.join(5)
            assert not thread.is_alive()
    ours.close()


def test_what_a_build_leaves_is_collected_once_its_client_has_the_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    content, out = tmp_path / "content", tmp_path / "public"
    content.mkdir()
    daemon = Daemon(out, content)
    events: list[str] = []
    left: list[object] = []

    def build(connection: socket.socket, request: dict) -> int:  # type: ignore[type-arg]
        assert gc.get_threshold()[0] == process.COLLECT_EVERY  # the pipeline's, held
        left.append([[n] for n in range(5000)])  # young objects, as a build leaves them
        events.append("built")
        return EXIT_OK

    def send(connection: socket.socket, reply: dict) -> bool:  # type: ignore[type-arg]
        events.append(f"sent {sorted(reply)}")
        return sent(connection, reply)

    def collected(phase: str, info: dict) -> None:  # type: ignore[type-arg]
        if phase == "start":
            events.append("collected")

    sent = sitegen.cli.daemon._send
    monkeypatch.setattr(daemon, "build", build)
    monkeypatch.setattr(sitegen.cli.daemon, "_send", send)
    options = {"content_dir": str(content), "out": str(out)}
    request = {"code": daemon.code, "options": options, "folder": str(tmp_path)}
    request |= {"environment": {}, "terminal": False}
    ours, theirs = socket.socketpair()
    gc.callbacks.append(collected)
    try:
        with ours, theirs:
            theirs.sendall(orjson.dumps(request) + b"\n")
            assert daemon.answer(ours)
            assert orjson.loads(theirs.recv(1024)) == {"exit": EXIT_OK}
    finally:
        gc.callbacks.remove(collected)
    assert events[:3] == ["built", "sent ['exit']", "collected"]
    assert gc.get_threshold()[0] != process.COLLECT_EVERY


def test_a_peers_credentials_are_its_process_user_and_group() -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        assert peer_credentials(ours) == (os.getpid(), os.getuid(), os.getgid())


def _asked(data: bytes) -> dict | None:  # type: ignore[type-arg]
    ours, theirs = socket.socketpair()

    def send() -> None:  # beside the read: more than a socket's buffer would block it
        with contextlib.suppress(OSError):
            theirs.sendall(data)
        theirs.shutdown(socket.SHUT_WR)

    with ours, theirs:
        sending = threading.Thread(target=send)
        sending.start()
        found = _read_request(ours)
        ours.close()
        sending.join(10)
        return found


def test_a_request_not_of_the_clients_shape_is_not_taken() -> None:
    good = {
        "code": "c",
        "options": {"content_dir": "/c", "out": "/o", "search": False},
        "folder": "/",
        "environment": {"HOME": "/root"},
        "terminal": False,
    }
    assert _asked(orjson.dumps(good) + b"\n") == good
    refused = [
        b"",
        orjson.dumps(good),  # cut short: no end of line
        b"{not json\n",
        b"[]\n",
        orjson.dumps({**good, "eval": "__import__('os')"}) + b"\n",
        orjson.dumps({**good, "options": {**good["options"], "out": ["/o"]}}) + b"\n",
        orjson.dumps({**good, "options": {"out": "/o"}}) + b"\n",
        orjson.dumps({**good, "environment": {"HOME": 1}}) + b"\n",
        orjson.dumps({**good, "terminal": "yes"}) + b"\n",
        b'{"code": "' + b"x" * REQUEST_LIMIT + b'"}\n',
    ]
    for data in refused:
        assert _asked(data) is None, data[:80]
