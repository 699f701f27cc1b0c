"""`sitegen serve`: build into a temporary directory, serve it on 127.0.0.1, rebuild on change.

Every rebuild is the pipeline's incremental build (pipeline.py), with the last good build's
state held in memory: only changed content is read again and only changed pages are rendered,
and each changed file is renamed into place whole. A rebuild whose content has errors, or
whose templates fail, changes nothing: the previous site keeps being served.
"""

from __future__ import annotations

import functools
import shutil
import signal
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import FrameType

from sitegen.model.problems import format_report
from sitegen.pipeline import build_site
from sitegen.publish.incremental import State
from sitegen.publish.write import OutputError
from sitegen.render.assets import TEMPLATES_DIR
from sitegen.render.errors import RenderError
from sitegen.site.urls import UrlError


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@dataclass(frozen=True)
class Outcome:
    state: State  # what the builds so far saw and wrote, for the next one
    ok: bool  # False: this build failed and the previous site is still served


def rebuild(
    content_dir: Path, out_dir: Path, base_url: str | None, last: Outcome | None = None
) -> Outcome:
    """One build after the `last`; prints its outcome. The state stays true after a failed
    build: it records what the content holds now, and the output as it still is."""
    state = last.state if last is not None else State()
    started = time.perf_counter()
    try:
        built = build_site(content_dir, out_dir, base_url=base_url, state=state)
    except (OutputError, UrlError, RenderError) as error:
        print(f"sitegen serve: {error}", file=sys.stderr)
        return Outcome(state, False)
    if built.out_dir is None:
        checked = built.checked
        print(format_report(checked.problems, checked.resource_count, checked.file_count))
        print("build failed: still serving the previous site", file=sys.stderr)
        return Outcome(state, False)
    elapsed = time.perf_counter() - started
    print(
        f"built {built.page_count:,} pages ({built.run_count:,} runs) in {elapsed:.2f} s",
        flush=True,
    )
    return Outcome(state, True)


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
    # way.
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        outcome = rebuild(content_dir, out_dir, base_url)
        out_dir.mkdir(exist_ok=True)  # serve something even if the first build failed
        server = start_server(out_dir, port)
        try:
            print(f"serving http://127.0.0.1:{server.server_port}/ (Ctrl-C to stop)", flush=True)
            for _ in watch(content_dir, TEMPLATES_DIR):
                outcome = rebuild(content_dir, out_dir, base_url, outcome)
        finally:
            server.shutdown()
            server.server_close()
    except KeyboardInterrupt:  # at any point, the first build included
        pass
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
    return 0
