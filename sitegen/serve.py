"""`sitegen serve`: build into a temporary directory, serve it on 127.0.0.1, rebuild on change.

Rebuilds are incremental (incremental.py), from the last build held in memory: when only run
files changed, from that build's catalog, analysis and pages (build.py's `rebuild_runs`: 1–1.5 s
at 100,000 runs once its kernel's charts are kept, ~2 s the first time, against ~22 s for an
incremental build), otherwise by an incremental build that reads only changed content again
and renders only changed pages. Each changed file is renamed into place whole. A rebuild whose
content has errors, or whose templates fail, changes nothing: the previous site keeps being
served.
"""

from __future__ import annotations

import functools
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import FrameType

from sitegen.build import BuiltSite, Held, build_site, rebuild_runs
from sitegen.problems import format_report
from sitegen.render import TEMPLATES_DIR, RenderError
from sitegen.urls import UrlError
from sitegen.write import OutputError


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@dataclass(frozen=True)
class Outcome:
    held: Held | None  # the last good build, to start the next one from
    ok: bool  # False: this build failed and the previous site is still served


def rebuild(
    content_dir: Path,
    out_dir: Path,
    base_url: str | None,
    last: Outcome | None = None,
    changed: Iterable[Path] = (),
) -> Outcome:
    """One build after the `last`, `changed` files since; prints its outcome. After a good
    build it patches that build if only runs changed; otherwise, and always after a failed
    build (the broken file need not be among the next change's), it walks the tree."""
    previous = last.held if last is not None else None
    started = time.perf_counter()
    try:
        built: BuiltSite | None = None
        if last is not None and last.ok and previous is not None:
            built = rebuild_runs(previous, changed)
        if built is None:
            built = build_site(
                content_dir, out_dir, base_url=base_url, keep=True, previous=previous
            )
    except (OutputError, UrlError, RenderError) as error:
        print(f"sitegen serve: {error}", file=sys.stderr)
        return Outcome(previous, False)
    if built.out_dir is None:
        checked = built.checked
        print(format_report(checked.problems, checked.resource_count, checked.file_count))
        print("build failed: still serving the previous site", file=sys.stderr)
        return Outcome(previous, False)
    elapsed = time.perf_counter() - started
    print(
        f"built {built.page_count:,} pages ({built.run_count:,} runs) in {elapsed:.2f} s",
        flush=True,
    )
    return Outcome(built.held, True)


def start_server(directory: Path, port: int) -> ThreadingHTTPServer:
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, name="sitegen-serve", daemon=True).start()
    return server


def _interrupt(signal_number: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def serve(content_dir: Path, port: int = 8000, base_url: str | None = None) -> int:
    from watchfiles import watch  # imported here: only `serve` needs it

    workspace = Path(tempfile.mkdtemp(prefix="sitegen-serve-"))
    out_dir = workspace / "site"
    # Stopped by a process manager (SIGTERM) as by Ctrl-C: the site it wrote is removed either
    # way (~200,000 files at 100k runs).
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        outcome = rebuild(content_dir, out_dir, base_url)
        out_dir.mkdir(exist_ok=True)  # serve something even if the first build failed
        server = start_server(out_dir, port)
        try:
            print(f"serving http://127.0.0.1:{server.server_port}/ (Ctrl-C to stop)", flush=True)
            for changes in watch(content_dir, TEMPLATES_DIR):
                changed = [Path(path) for _, path in changes]
                outcome = rebuild(content_dir, out_dir, base_url, outcome, changed)
        finally:
            server.shutdown()
            server.server_close()
    except KeyboardInterrupt:  # at any point, the first build included
        pass
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
    return 0
