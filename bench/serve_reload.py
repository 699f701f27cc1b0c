"""How long `sitegen serve` takes to show a one-run change: from the end of the run file's write
to the first answer of the server's page for the run's new version.

    python bench/serve_reload.py CONTENT_DIR [--repeat 3] [--file RUN.json]

Serves a copy of CONTENT_DIR (the original is never written), waits for the first build, then
edits one run file's median latency (+1 ns, then +2 ns, …) and polls the page of the run it
now is (a new median, a new digest, a new page) until it answers with the new value. The time
includes the file watcher's delay and the rebuild, as an author's reload would see it. Each
edit then waits for the server's whole rebuild to end (its `built` line; the run's page is
published ahead of the rest), so that no edit waits on the one before, and that time is
recorded too. Prints a line per edit and one JSON line: the first build and the medians, with
every sample.

`--again-after S`: each edit is followed, S seconds after it was written (once its page shows),
by a second edit of the same file, while the server still rebuilds the rest of the site for
the first: an author who saves again. The second edit is timed the same way.
"""

from __future__ import annotations

import argparse
import functools
import json
import queue
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any
from urllib.error import URLError
from urllib.request import urlopen

from sitegen.content.load import load_files
from sitegen.site.urls import run_path

REPOSITORY = Path(__file__).resolve().parents[1]
POLL_S = 0.01
QUIET_S = 15.0  # longer than a whole rebuild at 100k runs (~6 s)


def first_timed_run(content: Path) -> Path:
    """The first run file, in path order, whose median latency is recorded."""
    for path in sorted(content.rglob("*.json")):
        document = json.loads(path.read_bytes())
        if document.get("kind") == "BenchmarkRun" and "latencyNs" in document["spec"].get(
            "timing", {}
        ):
            return path
    raise SystemExit(f"{content}: no run file with a median latency")


def edited(original: bytes, number: int) -> tuple[bytes, int]:
    """The run's document with its median moved by number + 1 ns, and that median."""
    document = json.loads(original)
    latency = document["spec"]["timing"]["latencyNs"]
    latency["median"] += number + 1
    return (json.dumps(document, indent=2) + "\n").encode(), latency["median"]


def shows(twin_url: str, median: float) -> bool:
    """The run page's JSON twin answers, with the median as edited."""
    try:
        with urlopen(twin_url, timeout=5) as response:
            document = json.loads(response.read())["document"]
    except (URLError, OSError, ValueError, KeyError):
        return False
    return document["spec"]["timing"]["latencyNs"]["median"] == median  # type: ignore[no-any-return]


def measure(
    content: Path, repeat: int, file: Path | None, again_after: float | None = None
) -> dict[str, Any]:
    target = file or first_timed_run(content)
    original = target.read_bytes()
    command = [sys.executable, "-m", "sitegen", "serve", str(content), "--port", "0"]
    started = time.perf_counter()
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=REPOSITORY
    ) as server:
        assert server.stdout is not None
        try:
            first, address = _served(server.stdout, started)
            # Read on, or a rebuild's warnings fill the pipe and the server waits on it.
            built: queue.Queue[float] = queue.Queue()
            threading.Thread(target=_note_builds, args=(server.stdout, built), daemon=True).start()
            time.sleep(2)  # the watcher starts after the first build
            edit: Callable[..., tuple[float, float]] = _edit_until_shown
            if again_after is not None:
                edit = functools.partial(_edit_twice, after=again_after)
            samples = [edit(target, original, n, address, built) for n in range(repeat)]
        finally:
            target.write_bytes(original)
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=1800)
    figures = {
        "file": str(target.relative_to(content)),
        "first_build_s": round(first, 3),
        "reloaded_s": round(statistics.median(shown for shown, _ in samples), 3),
        "reloaded_s_all": [round(shown, 3) for shown, _ in samples],
        "rebuilt_s": round(statistics.median(whole for _, whole in samples), 3),
        "rebuilt_s_all": [round(whole, 3) for _, whole in samples],
    }
    if again_after is not None:
        figures = {"again_after_s": again_after, **figures}
    return figures


def _note_builds(lines: IO[str], built: queue.Queue[float]) -> None:
    """When each of the server's builds ended (its `built` line); a build stopped for a newer
    change is echoed."""
    for line in lines:
        if line.startswith("built "):
            built.put(time.perf_counter())
        elif line.startswith("stopped "):
            print(f"  server: {line.rstrip()}", flush=True)


def _served(lines: IO[str], started: float) -> tuple[float, str]:
    """The first build's time and the address served, read from the server's output."""
    first = 0.0
    for line in lines:
        if line.startswith("built "):
            first = time.perf_counter() - started
        if line.startswith("serving "):
            return first, line.split()[1]
    raise SystemExit("sitegen serve stopped before it served")


def digest_of(data: bytes) -> str:
    """The digest of the run document `data`, read from a file outside the content tree: a file
    made and deleted inside it would start a rebuild of its own, which the edit's then waits
    for (the timings before 2026-12-04 evening included up to one such rebuild)."""
    with tempfile.TemporaryDirectory(prefix="serve-reload-probe-") as folder:
        probe = Path(folder) / "run.json"
        probe.write_bytes(data)
        (run,) = load_files([probe]).resources
        return run.digest


def page_url(address: str, data: bytes) -> str:
    """Where the server shows the run whose document is `data`."""
    return address.rstrip("/") + "/" + run_path(digest_of(data))


def _write_until_shown(target: Path, data: bytes, url: str, median: float) -> tuple[float, float]:
    """`data` written into `target`, then the page at `url` polled until it shows `median`:
    when the write ended, and the seconds from then until it showed."""
    target.write_bytes(data)
    written = time.perf_counter()
    while not shows(url + "index.json", median):
        time.sleep(POLL_S)
    return written, time.perf_counter() - written


def _edit_until_shown(
    target: Path, original: bytes, number: int, address: str, built: queue.Queue[float]
) -> tuple[float, float]:
    """Seconds from the edit to its run's page answering with it, and to its build's end."""
    data, median = edited(original, number)
    url = page_url(address, data)
    while not built.empty():  # builds that ended before this edit
        built.get()
    written, shown = _write_until_shown(target, data, url, median)
    whole = built.get(timeout=1800) - written
    print(f"  edit {number + 1}: shown {shown:.2f} s, built {whole:.2f} s → {url}", flush=True)
    return shown, whole


def _edit_twice(
    target: Path,
    original: bytes,
    number: int,
    address: str,
    built: queue.Queue[float],
    after: float,
) -> tuple[float, float]:
    """An edit, then `after` seconds from its write another of the same file: seconds from
    the second edit to its run's page answering with it, and to the end of the last build."""
    data, median = edited(original, 2 * number)
    url = page_url(address, data)
    again, again_median = edited(original, 2 * number + 1)
    again_url = page_url(address, again)
    while not built.empty():
        built.get()
    written, first = _write_until_shown(target, data, url, median)
    time.sleep(max(0.0, written + after - time.perf_counter()))
    rewritten, shown = _write_until_shown(target, again, again_url, again_median)
    # The builds for both edits end: the last is followed by none for longer than a rebuild.
    while (ended := built.get(timeout=1800)) < rewritten or not _quiet(built, QUIET_S):
        pass
    whole = ended - rewritten
    print(
        f"  edit {number + 1}: first shown {first:.2f} s; saved again {after:.1f} s after it: "
        f"shown {shown:.2f} s, built {whole:.2f} s → {again_url}",
        flush=True,
    )
    return shown, whole


def _quiet(built: queue.Queue[float], seconds: float) -> bool:
    """Whether no build ends within `seconds`."""
    try:
        built.put(built.get(timeout=seconds))
    except queue.Empty:
        return True
    return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("content", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--file", type=Path, help="the run file to edit, inside CONTENT_DIR")
    parser.add_argument(
        "--again-after",
        type=float,
        metavar="S",
        help="save the file again S seconds after each edit, during the rebuild it started",
    )
    args = parser.parse_args()
    # Killed (SIGTERM), it still stops its server and removes its copy (~0.4 GB at 100k, on
    # tmpfs where TMPDIR points there): the `finally` blocks run on SystemExit.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    with tempfile.TemporaryDirectory(prefix="serve-reload-") as folder:
        copy = Path(folder) / "content"
        shutil.copytree(args.content, copy)
        file = copy / args.file.relative_to(args.content) if args.file else None
        print(json.dumps(measure(copy, args.repeat, file, args.again_after)))


if __name__ == "__main__":
    main()
