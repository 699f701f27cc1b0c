"""`sitegen build --daemon`: a background process, the build daemon, that keeps an incremental
build's state in memory between builds of one content folder into one output folder, as
`sitegen serve` keeps its own. The next `sitegen build --incremental` of that content into that
output is run by it: the one pipeline, given what the last build made (the loads, the
analysis, the keys of every page), where a fresh process reads, verifies and makes all of it
again (docs/performance.md, *Incremental builds*: the build daemon).

- **Found where only this user can look.** One daemon per output and content folder, on a Unix
  socket in the user's private cache folder (user_cache.py: 0700, this user's own):
  `daemons/<hash of the two folders>.sock`, beside `<hash>.lock`, which the daemon holds
  (`flock`) while it lives, so two never serve one pair of folders. It answers only processes
  of its own user (`SO_PEERCRED`) and reads at most REQUEST_LIMIT bytes of a request.
- **The same command, run there.** A client sends the `build` command's options (its folders
  made absolute), its working folder, its environment, whether its stderr is a terminal and a
  hash of its sitegen code. The daemon runs the same handler under the same guard in that
  folder and environment, streams what it prints back, then the exit status; the client prints
  it as its own and exits with that status. Options are taken only where `build` has them,
  and only as strings, numbers, booleans or nothing: nothing from a request is evaluated.
- **Only its own code.** A client whose sitegen code differs (an edit, a checkout) is refused,
  the daemon exits, and the client builds in its own process.
- **An incremental build as on disk.** The output is checked against what the last build left
  (pipeline.py: `incremental` with a state held), so an output changed in between is rebuilt
  whole, never patched.
- **Ctrl-C** in the client interrupts the build in the daemon (the previous site stays as it
  was); so does a client that goes away. A build that ends in anything but success or a
  content problem (an interrupt, a refused output, sitegen's bug) ends the daemon without
  keeping its state, as a killed build leaves none: the next build is a full one.
- **Its state kept when it ends.** After IDLE_S without a build, on SIGTERM between builds, or
  when `sitegen build --stop-daemon` asks it to (a request of its own: `STOP`), it writes the
  state where `build --incremental` keeps it (publish/incremental.py), so the next build, in a
  daemon or not, starts from it.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import io
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from sitegen.cli.exit_codes import EXIT_CONTENT, EXIT_OK, CommandError
from sitegen.cli.guard import guarded, os_reason
from sitegen.code_hash import package_hash
from sitegen.user_cache import private_cache_folder

if TYPE_CHECKING:  # watchfiles with it: imported by the daemon, never by a client
    from sitegen.serve.server import Watcher

DAEMON_FOLDER = "daemons"  # in the user's cache folder
IDLE_S = 30 * 60  # a daemon ends after this long without a build
REQUEST_LIMIT = 1 << 20  # bytes: options, folder and environment, far below
START_S = 60.0  # how long a client waits for a daemon it started to listen
SOCKET_PATH_MAX = 100  # bytes: Linux's sun_path holds 108, with its NUL
# The options a request may not set: what the daemon decides itself.
NOT_SENT = frozenset({"handler", "interrupted", "command", "held_state", "held_changed"})
DAEMON_MAIN = "import sys; from sitegen.cli.daemon import main; main(*sys.argv[1:])"
WATCH_THREAD = "sitegen-daemon-watch"
STOP = {"stop": True}  # the request `sitegen build --stop-daemon` sends
PACKAGE_PARENT = Path(__file__).resolve().parent.parent.parent


def daemon_paths(out_dir: Path, content_dir: Path, make: bool) -> tuple[Path, Path] | None:
    """The socket and lock of the daemon building `content_dir` into `out_dir`; None where
    there is no private cache folder (made if `make`) or its path is too long for a socket."""
    folder = private_cache_folder(DAEMON_FOLDER, make=make)
    if folder is None:
        return None
    folders = f"{os.path.realpath(out_dir)}\0{os.path.realpath(content_dir)}"
    name = hashlib.sha256(folders.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    socket_path = folder / f"{name}.sock"
    if len(os.fsencode(socket_path)) > SOCKET_PATH_MAX:
        return None
    return socket_path, folder / f"{name}.lock"


def code_hash() -> str:
    """Which sitegen code this process runs: a daemon runs builds only for its own."""
    return package_hash()


# ---- the client: `sitegen build --incremental` (and `--daemon`) ----


def build_by_daemon(args: argparse.Namespace) -> int | None:
    """The exit status of the build `args` asks for, run by the daemon of its output and
    content folders (one started first with `--daemon`); None where none runs it (there is
    none, it runs other code, or one could not be started): build in this process then."""
    paths = daemon_paths(args.out, args.content_dir, make=args.daemon)
    if paths is None:
        if args.daemon:
            _warn("no private cache folder for a build daemon: built in this process")
        return None
    connection = _connect(paths[0])
    if connection is None and args.daemon:
        if _start(args.out, args.content_dir):
            connection = _connect(paths[0])
        if connection is None:
            _warn("the build daemon could not be started: built in this process")
    if connection is None:
        return None
    with connection:
        if not args.wait:
            _refuse_if_busy(args.out)
        answer = _run_there(connection, args)
    if isinstance(answer, str):
        _warn(f"the build daemon did not take this build ({answer}): built in this process")
        return None
    return answer


def stop_daemon(out_dir: Path, content_dir: Path) -> str:
    """Ask the daemon of the two folders to end, keeping its state (it writes it first, then
    answers): what became of it, in words. Raises CommandError where it did not answer."""
    paths = daemon_paths(out_dir, content_dir, make=False)
    connection = _connect(paths[0]) if paths is not None else None
    if connection is None:
        return "no build daemon runs for this content and output"
    with connection:
        try:
            connection.sendall(_line(STOP))
            line = connection.makefile("rb").readline()
        except OSError:
            line = b""
    try:
        process = int(json.loads(line)["stopped"]) if line else None
    except (KeyError, TypeError, ValueError):  # json's decode error is a ValueError
        process = None
    if process is None:
        raise CommandError(
            "the build daemon did not answer the request to stop",
            "it may be building: run this again once that build ends",
        )
    return (
        f"stopped the build daemon (process {process}); its state is kept for the next "
        "--incremental build"
    )


def _refuse_if_busy(out_dir: Path) -> None:
    """OutputBusy, as a build in this process would raise, if another command is writing
    `out_dir` (the daemon would wait for its turn; a refused build would end it)."""
    from sitegen.publish.lock import lock_path, locked

    target = Path(os.path.abspath(out_dir)).resolve()
    if os.path.lexists(lock_path(target)):
        with locked(target):
            pass


def _connect(path: Path) -> socket.socket | None:
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(os.fspath(path))
    except OSError:  # none listening (none started, or a stale socket left by a killed one)
        connection.close()
        return None
    return connection


def _start(out_dir: Path, content_dir: Path) -> bool:
    """Start a daemon for the two folders, detached from this terminal and session; whether
    one is listening (it, or one another client started first)."""
    folders = [os.path.abspath(out_dir), os.path.abspath(content_dir)]
    environment = dict(os.environ)
    # From / (a folder the daemon outlives may be deleted), finding this very sitegen.
    found = [str(PACKAGE_PARENT), environment.get("PYTHONPATH", "")]
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, found))
    try:
        started = subprocess.Popen(
            [sys.executable, "-c", DAEMON_MAIN, *folders],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd="/",
            env=environment,
            start_new_session=True,  # the terminal's Ctrl-C is the client's to pass on
        )
    except OSError:
        return False
    assert started.stdout is not None
    with started.stdout:
        ready, _, _ = select.select([started.stdout], [], [], START_S)
        listening = bool(ready) and started.stdout.readline() == b"listening\n"
    started.wait()  # it forked the daemon and ended (`main`): no child of this process is left
    return listening


def _request(args: argparse.Namespace) -> bytes:
    options: dict[str, Any] = {}
    for name, value in vars(args).items():
        if name in NOT_SENT:
            continue
        if isinstance(value, Path):
            value = os.path.abspath(value)  # the daemon runs in the client's folder anyway
        options[name] = value
    request = {
        "code": code_hash(),
        "options": options,
        "folder": os.getcwd(),
        "environment": dict(os.environ),
        "terminal": sys.stderr.isatty(),
    }
    return _line(request)


def _line(message: dict[str, Any]) -> bytes:
    """A message as one line of JSON. The client's messages are made by json, not orjson:
    importing orjson took ~10 ms of each command sent to the daemon. UnicodeEncodeError for a
    string that is not UTF-8 (a surrogate-escaped byte)."""
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.encode() + b"\n"


def _run_there(connection: socket.socket, args: argparse.Namespace) -> int | str:
    """Send the build, print what the daemon prints; its exit status, or why it refused (or
    why it was not sent: a path or variable that is not UTF-8, a request over the limit)."""
    try:
        request = _request(args)
    except UnicodeEncodeError:  # a surrogate-escaped byte: JSON holds no such string
        return "a path or an environment variable is not UTF-8"
    if len(request) > REQUEST_LIMIT:
        return f"the options and environment take over {REQUEST_LIMIT // 2**20} MiB"
    try:
        connection.sendall(request)
    except OSError as error:
        return os_reason(error)
    replies = connection.makefile("rb")
    interrupted = False
    while True:
        try:
            line = replies.readline()
        except KeyboardInterrupt:
            if interrupted:
                raise  # a second Ctrl-C: stop waiting for the daemon to clean up
            interrupted = True
            with contextlib.suppress(OSError):
                connection.sendall(b"interrupt\n")
            continue
        except OSError:
            line = b""
        if not line:
            raise CommandError(
                "the build daemon stopped before the build ended",
                "run the build again: the previous site is as it was or the new one is whole",
            )
        reply = json.loads(line)
        if "refused" in reply:
            return str(reply["refused"])
        if "exit" in reply:
            return int(reply["exit"])
        stream = sys.stdout if "out" in reply else sys.stderr
        stream.write(reply.get("out", reply.get("err", "")))
        stream.flush()


def _warn(text: str) -> None:
    print(f"warning: {text}", file=sys.stderr)


# ---- the daemon ----


def main(out_folder: str, content_folder: str) -> None:
    """The daemon (DAEMON_MAIN): listen, then build when asked, until IDLE_S pass without a
    build, a client runs other code or a build fails."""
    out_dir, content_dir = Path(out_folder), Path(content_folder)
    if os.fork():
        os._exit(0)  # the daemon is its child, which no client has to wait for
    paths = daemon_paths(out_dir, content_dir, make=True)
    if paths is None:
        return
    socket_path, lock_path = paths
    lock = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # another daemon serves these folders: the client finds it listening
        _listening()
        return
    with contextlib.suppress(FileNotFoundError):
        os.unlink(socket_path)  # left by a daemon that was killed
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(os.fspath(socket_path))
    listener.listen(8)
    _listening()
    _detach()
    try:
        Daemon(out_dir, content_dir).serve(listener)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(socket_path)
        listener.close()
        os.close(lock)


def _listening() -> None:
    sys.stdout.buffer.write(b"listening\n")
    sys.stdout.flush()


def _detach() -> None:
    """Nothing of the client's terminal is kept: stdin, stdout and stderr go to /dev/null."""
    devnull = os.open(os.devnull, os.O_RDWR)
    for descriptor in (0, 1, 2):
        os.dup2(devnull, descriptor)
    os.close(devnull)


class _Ended(Exception):
    """SIGTERM between builds: end, keeping the state."""


class Daemon:
    """The state of the builds of one content folder into one output folder, and their loop."""

    def __init__(self, out_dir: Path, content_dir: Path) -> None:
        from sitegen.publish.incremental import State, read_state

        self.out_dir = out_dir
        self.content_dir = content_dir
        self.code = code_hash()
        # The state `build --incremental` left, if any: the first build here is incremental.
        self.state: State = read_state(out_dir, content_dir) or State()
        self.kept = True  # the state is true to the output: it may be written when this ends
        self.watcher: Watcher | None = None

    def serve(self, listener: socket.socket) -> None:
        def ended(number: int, frame: FrameType | None) -> None:
            raise _Ended

        from watchfiles import watch

        from sitegen.serve.server import Watcher

        signal.signal(signal.SIGTERM, ended)
        # Between builds a stray Ctrl-C does nothing; during one, the guard makes it stop it.
        signal.signal(signal.SIGINT, lambda number, frame: None)
        listener.settimeout(IDLE_S)
        stopping = threading.Event()
        # What changed in the content since the last build, as `sitegen serve` hears it: a
        # build looks at those files, the rest of the tree walked by a worker beside it.
        self.watcher = Watcher(watch, (self.content_dir,), stopping)
        try:
            while True:
                try:
                    connection, _ = listener.accept()
                except TimeoutError:
                    break
                with connection:
                    if not self.answer(connection):
                        break
        except _Ended:
            pass
        finally:
            stopping.set()
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            self.keep()

    def keep(self) -> None:
        from sitegen.publish.incremental import write_state

        if self.kept:
            write_state(self.out_dir, self.content_dir, self.state)

    def answer(self, connection: socket.socket) -> bool:
        """Run the build `connection` asks for; whether to go on serving."""
        connection.settimeout(None)
        peer = peer_credentials(connection)
        if peer is None or peer[1] != os.getuid():
            return True
        request = _read_request(connection)
        if request is None:
            return True
        if request == STOP:  # from any sitegen code: its user wants it gone
            self.keep()
            self.kept = False  # kept already: not written again as it ends
            _send(connection, {"stopped": os.getpid()})
            return False
        if request["code"] != self.code:
            self.kept = False  # other code would not take this state: end without writing it
            _send(connection, {"refused": "it runs other sitegen code"})
            return False
        options = request["options"]
        if not self.serves(options["out"], options["content_dir"], request["folder"]):
            _send(connection, {"refused": "it builds other folders"})
            return True
        from sitegen.process import collecting_less

        # What the build left in the young generation is collected once the client has its
        # answer, not before it (~0.16 s at 100k runs: the build's collection as it ends).
        with collecting_less():
            code = self.build(connection, request)
            if code not in (EXIT_OK, EXIT_CONTENT):
                self.kept = False  # interrupted or refused partway: trust nothing of it
            _send(connection, {"exit": code})
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)  # ends the watch's wait for the client
        return self.kept

    def serves(self, out_dir: str, content_dir: str, folder: str) -> bool:
        """Whether a build of `content_dir` into `out_dir` from `folder` is this daemon's (the
        socket's name says so, unless a link on the way changed since it was found)."""
        same = os.path.realpath(out_dir) == os.path.realpath(self.out_dir)
        same = same and os.path.realpath(content_dir) == os.path.realpath(self.content_dir)
        return same and os.path.isdir(folder)

    def build(self, connection: socket.socket, request: dict[str, Any]) -> int:
        from sitegen.cli import build_parser

        args = build_parser().parse_args(["build"])
        for name, value in request["options"].items():
            if hasattr(args, name) and name not in NOT_SENT:
                setattr(args, name, value)
        args.content_dir, args.out = Path(args.content_dir), Path(args.out)
        args.held_state = self.state
        args.held_changed = self.watcher.taken() if self.watcher is not None else None
        terminal = request["terminal"]
        with (
            _environment(request["environment"]),
            _working_folder(request["folder"]),
            contextlib.redirect_stdout(_Replies(connection, "out", terminal)),
            contextlib.redirect_stderr(_Replies(connection, "err", terminal)),
            _Watch(connection),
        ):
            return guarded(args)


def peer_credentials(connection: socket.socket) -> tuple[int, int, int] | None:
    """The process id, user id and group id of the process at the other end of a Unix
    socket (Linux's SO_PEERCRED); None if they cannot be read."""
    try:
        credentials = connection.getsockopt(
            socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")
        )
    except OSError:
        return None
    pid, uid, gid = struct.unpack("3i", credentials)
    return int(pid), int(uid), int(gid)


def _read_request(connection: socket.socket) -> dict[str, Any] | None:
    """A request as `_request` makes it, or None: too long, cut short, or not of that shape."""
    data = b""
    while not data.endswith(b"\n"):
        try:
            chunk = connection.recv(65536)
        except OSError:
            return None
        if not chunk or len(data) + len(chunk) > REQUEST_LIMIT:
            return None
        data += chunk
    import orjson  # the daemon's: loaded with the pipeline anyway

    try:
        request = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    if request == STOP:
        return STOP
    shapes = {"code": str, "options": dict, "folder": str, "environment": dict, "terminal": bool}
    if not isinstance(request, dict) or request.keys() != shapes.keys():
        return None
    if not all(isinstance(request[name], shape) for name, shape in shapes.items()):
        return None
    options, environment = request["options"], request["environment"]
    if not all(isinstance(v, str | int | float | bool | None) for v in options.values()):
        return None
    if not all(isinstance(v, str) for v in environment.values()):
        return None
    if not all(isinstance(options.get(name), str) for name in ("content_dir", "out")):
        return None
    return request


def _send(connection: socket.socket, reply: dict[str, Any]) -> bool:
    import orjson  # the daemon's: loaded with the pipeline anyway

    try:
        connection.sendall(orjson.dumps(reply) + b"\n")
    except OSError:
        return False
    return True


class _Replies(io.TextIOBase):
    """What the build prints, sent to the client as it is printed (a line of JSON a write)."""

    def __init__(self, connection: socket.socket, kind: str, terminal: bool) -> None:
        self.connection = connection
        self.kind = kind
        self.terminal = terminal

    def write(self, text: str) -> int:
        _send(self.connection, {self.kind: text})  # a client gone is told by _Watch
        return len(text)

    def isatty(self) -> bool:  # the progress the client's stderr would show
        return self.terminal


class _Watch:
    """While a build runs, a client that asks to interrupt it (its Ctrl-C) or goes away
    interrupts it, as Ctrl-C does a build in a terminal."""

    def __init__(self, connection: socket.socket) -> None:
        self.connection = connection
        self.building = threading.Event()
        self.main = threading.main_thread().ident

    def __enter__(self) -> None:
        self.building.set()
        threading.Thread(target=self.watch, name=WATCH_THREAD, daemon=True).start()

    def __exit__(self, *exc: object) -> None:
        self.building.clear()

    def watch(self) -> None:
        with contextlib.suppress(OSError):
            self.connection.recv(64)  # b"interrupt\n", or b"" when the client is gone
        if self.building.is_set() and self.main is not None:
            signal.pthread_kill(self.main, signal.SIGINT)


@contextlib.contextmanager
def _environment(environment: dict[str, str]) -> Iterator[None]:
    before = dict(os.environ)
    os.environ.clear()
    os.environ.update(environment)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(before)


@contextlib.contextmanager
def _working_folder(folder: str) -> Iterator[None]:
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)
