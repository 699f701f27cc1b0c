"""`sitegen serve`: build into a temporary directory, serve it on 127.0.0.1, rebuild on change.

Rebuilds are incremental (incremental.py): only changed content is read again, only changed
pages rendered, and each changed file is renamed into place whole. A rebuild whose content has
errors, or whose templates fail, changes nothing: the previous site keeps being served.
"""

from __future__ import annotations

import functools
import shutil
import sys
import tempfile
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from sitegen.build import build_site
from sitegen.problems import format_report
from sitegen.render import TEMPLATES_DIR, RenderError
from sitegen.urls import UrlError
from sitegen.write import OutputError


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def rebuild(content_dir: Path, out_dir: Path, base_url: str | None) -> bool:
    """One build; prints its outcome. False when the content has errors (old site kept)."""
    started = time.perf_counter()
    try:
        built = build_site(content_dir, out_dir, base_url=base_url, incremental=True)
    except (OutputError, UrlError, RenderError) as error:
        print(f"sitegen serve: {error}", file=sys.stderr)
        return False
    if built.out_dir is None:
        checked = built.checked
        print(format_report(checked.problems, checked.resource_count, checked.file_count))
        print("build failed: still serving the previous site", file=sys.stderr)
        return False
    elapsed = time.perf_counter() - started
    print(f"built {built.page_count:,} pages ({built.run_count:,} runs) in {elapsed:.1f} s")
    return True


def start_server(directory: Path, port: int) -> ThreadingHTTPServer:
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, name="sitegen-serve", daemon=True).start()
    return server


def serve(content_dir: Path, port: int = 8000, base_url: str | None = None) -> int:
    from watchfiles import watch  # imported here: only `serve` needs it

    workspace = Path(tempfile.mkdtemp(prefix="sitegen-serve-"))
    out_dir = workspace / "site"
    try:
        rebuild(content_dir, out_dir, base_url)
        out_dir.mkdir(exist_ok=True)  # serve something even if the first build failed
        server = start_server(out_dir, port)
        print(f"serving http://127.0.0.1:{server.server_port}/ (Ctrl-C to stop)")
        try:
            for _ in watch(content_dir, TEMPLATES_DIR):
                rebuild(content_dir, out_dir, base_url)
        except KeyboardInterrupt:
            pass
        finally:
            server.shutdown()
            server.server_close()
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
    return 0
