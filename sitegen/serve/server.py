"""`sitegen serve`: build into a temporary directory, serve it, rebuild on change, and reload
the browser after each rebuild.

Every rebuild is the pipeline's incremental build (pipeline.py), with the last good build's
state held in memory: only changed content is read again and only changed pages are rendered,
and each changed file is renamed into place whole. A rebuild whose content has errors, or
whose templates fail, changes nothing: the previous site keeps being served, and its report
is printed and shown in the browser.

The files on disk are exactly what `sitegen build` writes. The server adds, to each HTML
response only, a script of its own (`/__sitegen/live-reload.js`, same origin, which the pages'
Content-Security-Policy allows) that listens to `/__sitegen/events` (server-sent events: the
build served and the last failure) and reloads the page after each rebuild.
"""

from __future__ import annotations

import functools
import gzip
import json
import os
import queue
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from html import escape
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, cast
from urllib.parse import unquote, urlsplit

from sitegen import process
from sitegen.analysis.kernels import HeldAnalysis
from sitegen.cli.exit_codes import CommandError
from sitegen.cli.guard import os_reason
from sitegen.model.problems import format_report, printable
from sitegen.model.wording import counted
from sitegen.pipeline import build_site
from sitegen.publish.incremental import State
from sitegen.publish.write import OutputError
from sitegen.render.assets import TEMPLATES_DIR
from sitegen.render.errors import RenderError
from sitegen.site.urls import UrlError, run_path
from sitegen.superseded import Superseded

LIVE_RELOAD = "/__sitegen/live-reload.js"
EVENTS = "/__sitegen/events"


def script_tag(build: str) -> bytes:
    """The live-reload tag each HTML response gets, naming the build it was read from: a page
    loaded while a later build went in reloads as soon as it hears of it."""
    return f'<script defer src="{LIVE_RELOAD}" data-build="{escape(build)}"></script>'.encode()


LIVE_RELOAD_JS = (Path(__file__).parent / "live-reload.js").read_bytes()
# A quiet stream is still written to this often, so a closed tab's thread learns it and ends.
KEEP_ALIVE_S = 15.0
# How often the serving thread looks for a request to stop: the exit waits at most this long.
POLL_S = 0.05

TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".json": "application/json",
    ".jsonl": "application/x-ndjson",
    ".xml": "application/xml; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".svg": "image/svg+xml",
}
# Worth compressing: every type the site writes is text.
COMPRESSIBLE = frozenset(TYPES.values())
SMALLEST_COMPRESSED = 512
GZIP_KEPT = 256  # compressed files kept, by version


class BuildStatus:
    """What each open page is told: which build is served, and the last failure's report.

    A build is named by this server's session and a count, so a page from an earlier server
    (reconnecting after a restart) reloads too.
    """

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._session = secrets.token_hex(4)
        self._count = 0
        self._error: str | None = None
        self._closed = False
        # A saved run's old page → its new one (a new digest is a new URL): the tab an author
        # has open on the run reloads onto its new value, not onto the page before or a 404.
        self.moved: dict[str, str] = {}

    def published(self, changed: bool = True) -> None:
        """A build is in place: every page reloads if it `changed` any file, and drops the
        last failure's report either way (a file saved twice rebuilds twice, to one site)."""
        with self._changed:
            self._count += changed
            self._error = None
            self._changed.notify_all()

    def failed(self, report: str) -> None:
        """A build failed: the site is unchanged, every page shows `report`."""
        with self._changed:
            self._error = report
            self._changed.notify_all()

    def close(self) -> None:
        """The server stops: every stream ends."""
        with self._changed:
            self._closed = True
            self._changed.notify_all()

    @property
    def built(self) -> bool:
        return self._count > 0

    def now(self) -> dict[str, Any]:
        return {"build": f"{self._session}-{self._count}", "error": self._error}

    def next(self, seen: dict[str, Any] | None, timeout: float) -> dict[str, Any] | None:
        """The state once it differs from `seen` (at once if it does), `seen` again after
        `timeout`, None once closed."""
        with self._changed:
            self._changed.wait_for(lambda: self._closed or self.now() != seen, timeout)
            return None if self._closed else self.now()


@dataclass(frozen=True)
class Outcome:
    state: State  # what the builds so far saw and wrote, for the next one
    ok: bool  # False: this build failed and the previous site is still served


# What a rebuild leaves in the young generation is collected once the browser is told to
# reload, not before (~0.16 s at 100k runs: the build's collection as it ends).
@process.collecting_less()
def rebuild(
    content_dir: Path,
    out_dir: Path,
    base_url: str | None,
    last: Outcome | None = None,
    status: BuildStatus | None = None,
    changed: Collection[str] | None = None,
    superseded: Callable[[], bool] | None = None,
) -> Outcome:
    """One build after the `last`; prints its outcome and tells `status`. The state stays true
    after a failed build: it records what the content holds now, and the output as it still
    is. `changed`: the paths the file watcher saw change since the last build; `superseded`:
    whether a newer change is waiting, which stops the build once the saved run's page is
    published (pipeline.py's `build_site`)."""
    status = status or BuildStatus()
    state = last.state if last is not None else State()
    before = state.outputs
    started = time.perf_counter()

    def shown_first(runs: int) -> None:
        elapsed = time.perf_counter() - started
        kernels = "its kernel" if runs == 1 else "their kernels"
        shown = f"the pages of {counted(runs, 'new run')} and of {kernels}"
        print(f"shown first: {shown}, in {elapsed:.2f} s", flush=True)
        status.moved = moved_runs(state.analysis, status.moved)
        status.published()

    try:
        built = build_site(
            content_dir,
            out_dir,
            base_url=base_url,
            state=state,
            shown_first=shown_first,
            changed=changed,
            superseded=superseded,
        )
    except Superseded:
        elapsed = time.perf_counter() - started
        print(f"stopped after {elapsed:.2f} s for a newer change", flush=True)
        return Outcome(state, last.ok if last is not None else True)
    except (OutputError, UrlError, RenderError, OSError) as error:
        message = printable(f"sitegen serve: {error}")
        print(message, file=sys.stderr, flush=True)
        status.failed(message)
        return Outcome(state, False)
    checked = built.checked
    if built.out_dir is None:
        report = format_report(checked.problems, checked.resource_count, checked.file_count)
        print(report, flush=True)
        print("build failed: still serving the previous site", file=sys.stderr, flush=True)
        status.failed(report)
        return Outcome(state, False)
    for problem in checked.problems:  # warnings only: errors stop the build above
        print(problem.line(), file=sys.stderr)
    elapsed = time.perf_counter() - started
    pages, runs = counted(built.page_count, "page"), counted(built.run_count, "run")
    print(f"built {pages} ({runs}) in {elapsed:.2f} s", flush=True)
    status.moved = moved_runs(state.analysis, status.moved)
    status.published(changed=state.outputs != before or not status.built)
    return Outcome(state, True)


def moved_runs(held: HeldAnalysis, moved: dict[str, str]) -> dict[str, str]:
    """`moved` (old run page → new run page, as URL paths) after a build whose analysis is
    `held`: each run gone since the build before points to the new run in its place (the same
    file and place in it: the run saved), earlier entries follow it on, and no page of a run
    the build has is redirected (an edit undone)."""
    if not held.gone and not moved:
        return moved
    new = {(run.entry.path, run.entry.where): run.digest for run in held.fresh}
    replaced = {
        f"/{run_path(run.digest)}": f"/{run_path(new[place])}"
        for run in held.gone
        if (place := (run.entry.path, run.entry.where)) in new
    }
    shown = {f"/{run_path(run.digest)}" for run in held.fresh}
    found = {old: replaced.get(page, page) for old, page in moved.items()}
    found.update(replaced)
    return {old: page for old, page in found.items() if old not in shown and old != page}


def _moved_to(moved: dict[str, str], path: str) -> str | None:
    """Where a path into a moved run's folder goes now (its page, its JSON twin), if it moved."""
    for folder in (path, path.rpartition("/")[0] + "/"):
        page = moved.get(folder)
        if page is not None:
            return page + path[len(folder) :]
    return None


class SiteServer(ThreadingHTTPServer):
    """The built site at `root` by path (a swapped-in tree is served at once), and `status`."""

    daemon_threads = True  # an open event stream never holds up the exit

    def __init__(self, address: tuple[str, int], root: Path, status: BuildStatus) -> None:
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.root = root
        self.status = status
        super().__init__(address, SiteHandler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # a page closed or reloaded while its files were sent: nothing is wrong
        super().handle_error(request, client_address)

    @property
    def url(self) -> str:
        host, port = str(self.server_address[0]), int(self.server_address[1])
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}/"


class SiteHandler(BaseHTTPRequestHandler):
    """GET and HEAD of the built site: its own 404 page, gzip when asked, the live-reload
    script added to HTML; and the script and the event stream themselves."""

    server_version = "sitegen"

    def do_GET(self) -> None:
        self._respond(body=True)

    def do_HEAD(self) -> None:
        self._respond(body=False)

    def log_message(self, format: str, *args: object) -> None:
        pass

    @property
    def _site(self) -> SiteServer:
        return cast(SiteServer, self.server)

    def _respond(self, body: bool) -> None:
        url = urlsplit(self.path)
        # Asked before the file is read: a build going in meanwhile makes the page reload.
        build = self._site.status.now()["build"]
        if url.path == EVENTS and body:
            self._stream_events()
            return
        if url.path == LIVE_RELOAD:
            self._send(HTTPStatus.OK, TYPES[".js"], LIVE_RELOAD_JS, body)
            return
        query = f"?{url.query}" if url.query else ""
        moved = _moved_to(self._site.status.moved, url.path)
        if moved is not None:  # a saved run's new page: for now, so never cached
            self._redirect(HTTPStatus.FOUND, moved + query)
            return
        file, redirect = self._find(url.path)
        if redirect:
            self._redirect(HTTPStatus.MOVED_PERMANENTLY, url.path + "/" + query)
            return
        status = HTTPStatus.OK
        if file is None:
            status = HTTPStatus.NOT_FOUND
            file = self._site.root / "404.html"
        try:
            data, key = _read(file)
        except OSError:  # no site yet (the first build failed or runs), or a file just replaced
            waiting = not self._site.status.built
            code = HTTPStatus.SERVICE_UNAVAILABLE if waiting else status
            self._send(code, TYPES[".html"], _no_site_page(waiting), body, build=build)
            return
        content_type = TYPES.get(file.suffix, "application/octet-stream")
        self._send(status, content_type, data, body, key, build)

    def _redirect(self, status: HTTPStatus, location: str) -> None:
        self.send_response(status)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        if status is HTTPStatus.FOUND:
            self.send_header("Cache-Control", "no-store")
        self.end_headers()

    def _find(self, path: str) -> tuple[Path | None, bool]:
        """The file a URL path names (None if none), and whether it names a folder without its
        trailing slash (a redirect)."""
        parts = [p for p in unquote(path).split("/") if p not in ("", ".")]
        # `..` never leaves the site; dot-files (the output's marker) are not pages.
        if any(p.startswith(".") or "\\" in p or "\0" in p for p in parts):
            return None, False
        found = self._site.root.joinpath(*parts)
        try:
            if found.is_dir():
                if not path.endswith("/"):
                    return None, True
                found = found / "index.html"
            return (found if found.is_file() else None), False
        except OSError:  # a name too long for the file system, say: no such page
            return None, False

    def _send(
        self,
        status: HTTPStatus,
        content_type: str,
        data: bytes,
        body: bool,
        key: tuple[str, int, int, int] | None = None,
        build: str = "",
    ) -> None:
        if content_type == TYPES[".html"]:
            data = _with_live_reload(data, build)
            if key is not None:  # one version of the file, served as read in one build
                key = (f"{key[0]}\0{build}", key[1], key[2], key[3])
        compressible = content_type in COMPRESSIBLE and len(data) >= SMALLEST_COMPRESSED
        compressed = compressible and _accepts_gzip(self.headers.get("Accept-Encoding"))
        if compressed:
            data = _GZIPPED.compress(key, data)
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        if compressed:
            self.send_header("Content-Encoding", "gzip")
        if compressible:
            self.send_header("Vary", "Accept-Encoding")
        # Content-hashed assets never change under one name; everything else may, any moment.
        immutable = self.path.startswith("/assets/") and status is HTTPStatus.OK
        self.send_header(
            "Cache-Control", "max-age=31536000, immutable" if immutable else "no-cache"
        )
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        if body:
            self.wfile.write(data)

    def _stream_events(self) -> None:
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        seen: dict[str, Any] | None = None
        try:
            self.wfile.write(b"retry: 500\n\n")  # how soon a page asks again after a restart
            while (state := self._site.status.next(seen, KEEP_ALIVE_S)) is not None:
                if state == seen:
                    self.wfile.write(b": still here\n\n")
                else:
                    data = json.dumps(state, ensure_ascii=True)  # one line: newlines escaped
                    self.wfile.write(f"event: build\ndata: {data}\n\n".encode())
                    seen = state
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the page was closed or reloaded


def _read(file: Path) -> tuple[bytes, tuple[str, int, int, int]]:
    """A file's bytes, and what identifies this version of it (for the gzip cache)."""
    with file.open("rb") as handle:
        facts = os.fstat(handle.fileno())
        data = handle.read()
    return data, (str(file), facts.st_ino, facts.st_mtime_ns, facts.st_size)


def _with_live_reload(html: bytes, build: str) -> bytes:
    tag = script_tag(build)
    head, found, rest = html.partition(b"</head>")
    return head + tag + found + rest if found else html + tag


class GzipCache:
    """Each version of a file compressed once (plotly.js is megabytes, asked for on every
    reload), the last GZIP_KEPT kept."""

    def __init__(self) -> None:
        self._kept: OrderedDict[tuple[str, int, int, int], bytes] = OrderedDict()
        self._lock = threading.Lock()

    def compress(self, key: tuple[str, int, int, int] | None, data: bytes) -> bytes:
        if key is None:
            return gzip.compress(data, 6, mtime=0)
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
                return found
        compressed = gzip.compress(data, 6, mtime=0)
        with self._lock:
            self._kept[key] = compressed
            while len(self._kept) > GZIP_KEPT:
                self._kept.popitem(last=False)
        return compressed


_GZIPPED = GzipCache()


def _accepts_gzip(header: str | None) -> bool:
    """Whether an Accept-Encoding header allows gzip (`gzip`, `*`, not with `q=0`)."""
    for item in (header or "").split(","):
        name, _, parameters = item.partition(";")
        if name.strip().lower() not in ("gzip", "x-gzip", "*"):
            continue
        for parameter in parameters.split(";"):
            field, _, value = parameter.partition("=")
            if field.strip().lower() == "q":
                try:
                    return float(value) > 0
                except ValueError:
                    return False
        return True
    return False


def _no_site_page(waiting: bool) -> bytes:
    """What is served where the site has no page to give: before a first good build, or a
    moment in which a file was being replaced."""
    text = (
        "There is no site yet: the first build is running, or failed (its report is below "
        "and in the terminal). This page reloads when a build succeeds."
        if waiting
        else "Not found."
    )
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        "<title>sitegen serve</title></head>"
        f"<body><h1>sitegen serve</h1><p>{text}</p></body></html>\n"
    ).encode()


def start_server(
    directory: Path, port: int, host: str = "127.0.0.1", status: BuildStatus | None = None
) -> SiteServer:
    """Serve `directory` on `host:port` (0: any free port) from a thread; `stop_server` ends it."""
    try:
        server = SiteServer((host, port), directory, status or BuildStatus())
    except socket.gaierror as error:  # no such address: not a name or an IP of this machine
        raise CommandError(
            f"--host {host!r}: {os_reason(error)}",
            "give an address of this machine: 127.0.0.1 (the default), or 0.0.0.0 or :: for "
            "every one",
        ) from error
    except OSError as error:
        raise CommandError(
            f"{host}:{port}: {os_reason(error)}",
            "another server may be listening there: stop it, or choose another --port or --host",
        ) from error
    thread = threading.Thread(
        target=server.serve_forever, args=(POLL_S,), name="sitegen-serve", daemon=True
    )
    thread.start()
    return server


def stop_server(server: SiteServer) -> None:
    server.status.close()
    server.shutdown()
    server.server_close()


def serve(
    content_dir: Path, host: str = "127.0.0.1", port: int = 8000, base_url: str | None = None
) -> int:
    """Until Ctrl-C or SIGTERM (a KeyboardInterrupt, under the command line's guard): exit 0,
    the temporary site removed by a process of its own."""
    from watchfiles import watch  # imported here: only `serve` needs it

    workspace = None
    server = None
    stopping = threading.Event()
    try:
        workspace = Path(tempfile.mkdtemp(prefix="sitegen-serve-"))
        out_dir = workspace / "site"
        status = BuildStatus()
        # Bound before the first build: a port in use fails at once, not after a build.
        server = start_server(out_dir, port, host, status)
        outcome = rebuild(content_dir, out_dir, base_url, status=status)
        print(f"serving {server.url} (Ctrl-C to stop)", flush=True)
        watched = (content_dir, TEMPLATES_DIR)
        watcher = Watcher(watch, watched, stopping)
        while True:
            changed = watcher.next()
            outcome = rebuild(
                content_dir, out_dir, base_url, outcome, status, changed, watcher.waiting
            )
    except KeyboardInterrupt:  # at any point, the first build included
        pass
    finally:
        # A second signal (a process manager signals the whole group) waits: the temporary
        # site is removed whatever arrives while it is.
        with process.interrupts_deferred():
            stopping.set()
            if workspace is not None:
                remove_in_background(workspace)
            if server is not None:
                stop_server(server)
    return 0


class Watcher:
    """The file watcher's reports, taken by a thread of their own while the builds run, so a
    build can ask whether a newer change is `waiting` (then it stops, its saved run's page
    published) and the next build takes every change reported since (`next`)."""

    def __init__(
        self,
        watch: Callable[..., Iterable[Collection[tuple[object, str]]]],
        watched: tuple[Path, ...],
        stopping: threading.Event,
    ) -> None:
        self._reports: queue.SimpleQueue[set[str] | BaseException | None] = queue.SimpleQueue()
        self._watch = watch
        self._watched = watched
        self._stopping = stopping
        self._failed = False
        threading.Thread(target=self._run, name="sitegen-watcher", daemon=True).start()

    def _run(self) -> None:
        try:
            for changes in self._watch(
                *self._watched,
                watch_filter=functools.partial(read_by_builds, self._watched),
                stop_event=self._stopping,
            ):
                self._reports.put(content_changes(changes))
        except BaseException as error:  # told to the builds' thread, which raises it
            self._reports.put(error)

    def waiting(self) -> bool:
        return not self._reports.empty()

    def next(self) -> set[str] | None:
        """Every change reported since the last call, waiting for one: the paths, or None
        where a template changed (every page may)."""
        reports = [self._reports.get()]
        while not self._reports.empty():
            reports.append(self._reports.get())
        return _merged(reports)

    def taken(self) -> set[str] | None:
        """Every change reported since the last call, without waiting (the build daemon):
        the paths, or None where a template changed or the watcher failed (a build then
        walks the tree, and does so from then on)."""
        reports: list[set[str] | BaseException | None] = []
        while not self._reports.empty():
            reports.append(self._reports.get())
        try:
            changed = None if self._failed else _merged(reports)
        except Exception:  # the watcher's own failure (a watch limit reached, say)
            changed = None
            self._failed = True
        return changed


def _merged(reports: list[set[str] | BaseException | None]) -> set[str] | None:
    changed: set[str] | None = set()
    for report in reports:
        if isinstance(report, BaseException):
            raise report
        changed = None if report is None or changed is None else changed | report
    return changed


def read_by_builds(roots: Iterable[Path], change: object, path: str) -> bool:
    """Whether a build may read `path` (a watchfiles filter): anything but a dot-file or what
    is inside a dot-folder of a watched folder, as the content's walk skips them. Watchfiles'
    default filter also passed over `node_modules` folders, which the walk reads, and `~`
    backups, which it reports, so a save there went unbuilt."""
    for root in roots:
        relative = os.path.relpath(path, root)
        if relative != os.pardir and not relative.startswith(os.pardir + os.sep):
            return not any(part.startswith(".") for part in relative.split(os.sep))
    return True


def content_changes(changes: Iterable[tuple[object, str]]) -> set[str] | None:
    """The paths the watcher saw change; None where a template changed (every page may)."""
    templates = os.path.realpath(TEMPLATES_DIR)
    paths = {path for _, path in changes}
    if any(os.path.realpath(path).startswith(templates + os.sep) for path in paths):
        return None
    return paths


def remove_in_background(folder: Path) -> None:
    """Delete `folder` from a process of its own, in a session of its own, so the exit waits
    for none of its files (a big site's are tens of thousands); inline if none can start."""
    code = "import shutil, sys; shutil.rmtree(sys.argv[1], ignore_errors=True)"
    try:
        remover = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", code, str(folder)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)
        return
    _REMOVERS.append(remover)  # left running on purpose: held, so nothing warns that it is


_REMOVERS: list[subprocess.Popen[bytes]] = []
