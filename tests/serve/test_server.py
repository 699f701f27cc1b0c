"""`sitegen serve`: rebuilds through the pipeline, the site's own 404 page, gzip, the live-reload
script added to HTML only, the event stream, the port, and a stop within a second."""

from __future__ import annotations

import gc
import gzip
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.error import HTTPError
from urllib.request import HTTPRedirectHandler, Request, build_opener, urlopen

import pytest

import sitegen.pipeline
import sitegen.process
import sitegen.render.outputs
import sitegen.superseded
from sitegen.cli import main
from sitegen.cli.exit_codes import CommandError
from sitegen.pipeline import build_site
from sitegen.render.assets import TEMPLATES_DIR
from sitegen.serve.server import (
    BuildStatus,
    SiteServer,
    Watcher,
    content_changes,
    read_by_builds,
    rebuild,
    script_tag,
    start_server,
    stop_server,
)
from sitegen.site.records import Page
from sitegen.site.urls import run_path
from tests.analysis.test_regressions import with_commits
from tests.analysis.test_verdicts import set_latency
from tests.conftest import FIXTURES

SITE_CONTENT = FIXTURES / "site" / "content"
SEED_PAGE = "runs/f0cf6dd69e048a9b/index.html"


def tree(root: Path) -> dict[str, bytes]:
    files = (p for p in sorted(root.rglob("*")) if p.is_file())
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in files}


def cold_tree(content: Path, tmp_path: Path) -> dict[str, bytes]:
    """What a cold build of `content` writes: what every rebuild must leave, byte for byte."""
    cold = tmp_path / "cold"
    assert build_site(content, cold).out_dir is not None
    return tree(cold)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SiteServer, Path]]:
    """The fixture site built once, served on a free port."""
    out = tmp_path_factory.mktemp("served") / "site"
    status = BuildStatus()
    assert rebuild(SITE_CONTENT, out, None, status=status).ok
    server = start_server(out, 0, status=status)
    yield server, out
    stop_server(server)


def get(url: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and body, whatever the status; redirects not followed."""

    class Refuse(HTTPRedirectHandler):
        def redirect_request(self, *args: object, **kwargs: object) -> None:
            return None

    try:
        with build_opener(Refuse).open(Request(url, headers=headers), timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_html_gets_the_live_reload_script_and_the_files_stay_as_built(
    served: tuple[SiteServer, Path],
) -> None:
    server, out = served
    on_disk = (out / SEED_PAGE).read_bytes()
    assert b"__sitegen" not in on_disk  # what `build` writes: the script is serve's alone
    status, headers, body = get(f"{server.url}runs/f0cf6dd69e048a9b/")
    assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    tag = script_tag(server.status.now()["build"])
    assert body == on_disk.replace(b"</head>", tag + b"</head>", 1)
    assert body.count(b"__sitegen/live-reload.js") == 1
    status, headers, body = get(f"{server.url}runs/f0cf6dd69e048a9b/index.json")
    assert status == 200 and body == (out / "runs/f0cf6dd69e048a9b/index.json").read_bytes()
    status, headers, script = get(f"{server.url}__sitegen/live-reload.js")
    assert status == 200 and headers["Content-Type"].startswith("text/javascript")
    assert b'new EventSource("/__sitegen/events")' in script


def test_each_page_names_the_build_it_was_read_in(served: tuple[SiteServer, Path]) -> None:
    """A page read before a build went in names the build before, so it reloads on the first
    event it hears (a saved run's page is published ahead of the rest of its build); a page
    compressed once is not served again under a later build's name."""
    _, out = served
    status = BuildStatus()
    status.published()
    server = start_server(out, 0, status=status)
    try:
        for accept in ({}, {"Accept-Encoding": "gzip"}):
            names = []
            for _ in range(2):
                _, headers, body = get(f"{server.url}runs/f0cf6dd69e048a9b/", **accept)
                if headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                assert script_tag(status.now()["build"]) in body
                names.append(status.now()["build"])
                status.published()
            assert names[0] != names[1]
    finally:
        stop_server(server)


def test_a_missing_page_is_the_sites_own_404_with_status_404(
    served: tuple[SiteServer, Path],
) -> None:
    server, out = served
    tag = script_tag(server.status.now()["build"])
    expected = (out / "404.html").read_bytes().replace(b"</head>", tag + b"</head>", 1)
    for path in ("no/such/page/", "runs/0000000000000000/", "../../etc/passwd", ".sitegen-output"):
        status, headers, body = get(server.url + path)
        assert (status, body) == (404, expected), path
        assert headers["Content-Type"] == "text/html; charset=utf-8"


def test_a_folder_without_its_slash_redirects(served: tuple[SiteServer, Path]) -> None:
    server, _ = served
    status, headers, _ = get(f"{server.url}runs/f0cf6dd69e048a9b?x=1")
    assert status == 301 and headers["Location"] == "/runs/f0cf6dd69e048a9b/?x=1"


@pytest.mark.parametrize(
    ("accept", "compressed"),
    [
        ("gzip, deflate, br", True),
        ("br;q=1.0, gzip;q=0.8", True),
        ("*", True),
        ("gzip;q=0", False),
        ("identity", False),
        (None, False),
    ],
)
def test_gzip_only_when_asked(
    served: tuple[SiteServer, Path], accept: str | None, compressed: bool
) -> None:
    server, out = served
    headers = {"Accept-Encoding": accept} if accept is not None else {}
    plotly = next((out / "assets").glob("plotly-*.js"))
    for path, expected in (
        (f"assets/{plotly.name}", plotly.read_bytes()),
        (
            "runs/f0cf6dd69e048a9b/",
            (out / SEED_PAGE)
            .read_bytes()
            .replace(b"</head>", script_tag(server.status.now()["build"]) + b"</head>", 1),
        ),
    ):
        status, got, body = get(server.url + path, **headers)
        assert status == 200 and got["Vary"] == "Accept-Encoding"
        assert got.get("Content-Encoding") == ("gzip" if compressed else None)
        assert int(got["Content-Length"]) == len(body)
        assert (gzip.decompress(body) if compressed else body) == expected


def test_the_event_stream_names_each_build_and_the_last_failure(tmp_path: Path) -> None:
    status = BuildStatus()
    status.published()
    server = start_server(tmp_path, 0, status=status)
    try:
        with urlopen(f"{server.url}__sitegen/events", timeout=10) as stream:
            assert stream.headers["Content-Type"] == "text/event-stream"

            def next_event() -> dict[str, object]:
                while not (line := stream.readline().decode()).startswith("data: "):
                    pass
                return json.loads(line[len("data: ") :])  # type: ignore[no-any-return]

            first = next_event()
            assert first["error"] is None and str(first["build"]).endswith("-1")
            status.failed("content/runs/x.json: 1:2: invalid JSON\n1 error, 0 warnings")
            failed = next_event()
            assert failed == {"build": first["build"], "error": status.now()["error"]}
            status.published()
            assert next_event() == {"build": str(first["build"])[:-1] + "2", "error": None}
    finally:
        stop_server(server)


def test_before_a_first_good_build_every_page_says_so(tmp_path: Path) -> None:
    status = BuildStatus()
    server = start_server(tmp_path / "no-site", 0, status=status)
    try:
        code, _, body = get(server.url)
        assert code == 503 and b"There is no site yet" in body
        assert script_tag(status.now()["build"]) in body
    finally:
        stop_server(server)


def test_serve_rebuilds_and_keeps_the_last_good_site(tmp_path: Path) -> None:
    content = tmp_path / "content"
    shutil.copytree(SITE_CONTENT, content)
    out = tmp_path / "site"
    status = BuildStatus()
    outcome = rebuild(content, out, None, status=status)
    assert outcome.ok and outcome.state.outputs
    server = start_server(out, 0, status=status)
    try:
        url = f"{server.url}runs/f0cf6dd69e048a9b/"
        assert "LayerNorm · liger · backward" in get(url)[2].decode()
        built = status.now()["build"]
        # A broken edit: the rebuild fails, the previous site keeps being served, and every
        # page is told why.
        bad = content / "runs" / "bad.json"
        bad.write_text("{")
        failed = rebuild(content, out, None, outcome, status)
        assert not failed.ok and failed.state is outcome.state
        assert get(url)[0] == 200
        assert status.now() == {
            "build": built,
            "error": "content/runs/bad.json: 1:2: invalid JSON: expecting property name enclosed "
            "in double quotes\n1 error, 0 warnings: 50 resources in 49 files",
        }
        before = tree(out)
        # Then a good run edited while bad.json is still there: still an error.
        run = sorted((content / "runs").glob("liger-layer-norm-*.json"))[0]
        document = json.loads(run.read_text())
        document["metadata"]["title"] += " (edited)"
        run.write_text(json.dumps(document))
        assert not rebuild(content, out, None, failed, status).ok
        assert tree(out) == before
        bad.unlink()
        mended = rebuild(content, out, None, failed, status)
        assert mended.ok and "(edited)" in (out / "index.json").read_text() + "".join(
            p.read_text() for p in (out / "runs").glob("*/index.json")
        )
        assert status.now()["error"] is None and status.now()["build"] != built
    finally:
        stop_server(server)


def test_a_port_in_use_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(CommandError):
            start_server(tmp_path, port)
        assert main(["serve", str(SITE_CONTENT), "--port", str(port)]) == 2
    assert capsys.readouterr().err == (
        f"sitegen serve: 127.0.0.1:{port}: address already in use; hint: another server may be "
        "listening there: stop it, or choose another --port or --host\n"
    )


def _serve(content: Path, tmp_path: Path, *options: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "sitegen", "serve", str(content), "--port", "0", *options]
    return subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "TMPDIR": str(tmp_path)},
        # As from a terminal: a shell's background job (CI, say) would pass SIGINT on ignored.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _until_serving(process: subprocess.Popen[str]) -> tuple[str, list[str]]:
    assert process.stdout is not None
    lines = []
    for line in process.stdout:
        lines.append(line)
        if line.startswith("serving "):
            return line.split()[1], lines
    raise AssertionError(f"serve ended before serving: {lines}")


@pytest.mark.parametrize("stop", ["SIGINT", "SIGTERM"])
def test_serve_stops_within_a_second_and_leaves_nothing(tmp_path: Path, stop: str) -> None:
    """Ctrl-C or a process manager's SIGTERM: `sitegen serve` exits 0 at once, even with a page
    listening to its event stream, and its temporary site is gone soon after (deleted by a
    process of its own, which ends too)."""
    with _serve(SITE_CONTENT, tmp_path, "--host", "127.0.0.1") as process:
        url, lines = _until_serving(process)
        assert url.startswith("http://127.0.0.1:")
        (workspace,) = tmp_path.glob("sitegen-serve-*")
        assert (workspace / "site" / "index.html").is_file(), lines
        listening = threading.Thread(
            target=lambda: urlopen(f"{url}__sitegen/events", timeout=30).read(), daemon=True
        )
        listening.start()
        time.sleep(0.2)
        started = time.perf_counter()
        process.send_signal(getattr(signal, stop))
        assert process.wait(timeout=30) == 0
        took = time.perf_counter() - started
    assert took < 1.0, f"{stop} to exit: {took:.3f} s"

    def remover_running() -> bool:
        found = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
        return str(workspace) in found

    deadline = time.monotonic() + 30
    while (workspace.exists() or remover_running()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not list(tmp_path.glob("sitegen-serve-*"))
    assert not remover_running()  # the process that deleted it has ended


def test_a_rebuild_that_changes_no_file_reloads_no_page(tmp_path: Path) -> None:
    """An editor's save can come as two events, two rebuilds: the second writes nothing, so
    the pages are not reloaded again (a failure's report is dropped all the same)."""
    content = tmp_path / "content"
    shutil.copytree(SITE_CONTENT, content)
    status = BuildStatus()
    outcome = rebuild(content, tmp_path / "site", None, status=status)
    first = status.now()
    outcome = rebuild(content, tmp_path / "site", None, outcome, status)
    assert status.now() == first
    status.failed("a report")
    rebuild(content, tmp_path / "site", None, outcome, status)
    assert status.now() == first


def test_a_page_that_goes_away_mid_response_is_no_error(
    served: tuple[SiteServer, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """A reload aborts the files still downloading: no traceback in the terminal."""
    server, out = served
    plotly = next((out / "assets").glob("plotly-*.js")).name
    for _ in range(3):
        with socket.create_connection(("127.0.0.1", server.server_port)) as connection:
            connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\1\0\0\0\0\0\0\0")
            connection.sendall(f"GET /assets/{plotly} HTTP/1.0\r\n\r\n".encode())
            connection.recv(1)
    time.sleep(0.3)
    assert "Traceback" not in capsys.readouterr().err


def test_a_path_too_long_for_the_file_system_is_a_404(served: tuple[SiteServer, Path]) -> None:
    server, _ = served
    for path in ("a" * 300, f"runs/{'b' * 300}/", f"{'c' * 300}/index.json"):
        status, _, body = get(f"{server.url}{path}")
        assert status == 404 and b"<html" in body, path
    status, _, _ = get(f"{server.url}{'d/' * 40000}")  # past http.server's request line
    assert status == 414


@pytest.mark.parametrize("port", ["70000", "-1", "８０", "http"])
def test_a_port_out_of_range_is_a_usage_error(port: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "sitegen", "serve", str(SITE_CONTENT), "--port", port],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.splitlines()[-1] == (
        f"sitegen serve: error: argument --port: a port is a number from 0 to 65535: {port!r}"
    )


def test_a_second_sigterm_while_stopping_still_removes_the_site(tmp_path: Path) -> None:
    """A process manager that signals the whole group, twice: the temporary site goes."""
    with _serve(SITE_CONTENT, tmp_path) as process:
        _until_serving(process)
        (workspace,) = tmp_path.glob("sitegen-serve-*")
        for _ in range(2):
            process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    deadline = time.monotonic() + 30
    while workspace.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not workspace.exists()


def test_a_host_that_is_no_address_is_a_usage_error_saying_so(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(CommandError) as refused:
        start_server(Path("."), 0, "no such host.invalid")
    assert refused.value.message.startswith("--host 'no such host.invalid': ")
    assert refused.value.hint == (
        "give an address of this machine: 127.0.0.1 (the default), or 0.0.0.0 or :: for every one"
    )
    result = subprocess.run(
        [sys.executable, "-m", "sitegen", "serve", str(SITE_CONTENT), "--host", ""],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.splitlines()[-1] == (
        "sitegen serve: error: argument --host/--bind: an address to listen on, e.g. "
        "127.0.0.1; not empty"
    )


def rendered_paths(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The path of each page rendered from now on, in order."""
    rendered: list[str] = []
    render_html = sitegen.render.outputs.html

    def counted(template: Any, page: Page, chrome: Any) -> bytes:
        rendered.append(page.path)
        return render_html(template, page, chrome)

    monkeypatch.setattr("sitegen.render.render.html", counted)
    return rendered


def test_a_saved_runs_page_is_shown_before_the_rest_of_the_site(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A rebuild publishes the saved run's new page and its kernel's, and tells open pages to
    reload, before it plans the whole site: then no other page shows the run yet (the newest
    of its series: the cohort's run pages rank it), and both pages are already what the whole
    build leaves (and are not rendered again)."""
    content = with_commits(tmp_path, [50_000] * 5 + [65_000] * 4, revisions=True)
    out = tmp_path / "site"
    status = BuildStatus()
    outcome = rebuild(content, out, None, status=status)
    assert "shown first" not in capsys.readouterr().out  # nothing to patch yet
    old_runs = {p.parent.name for p in (out / "runs").glob("*/index.json")}
    published = status.published
    first: list[tuple[dict[str, bytes], set[str], bytes]] = []
    kernel = "kernels/liger-layer-norm/"

    def showing(run: str) -> set[str]:
        pages = out.rglob("index.html")
        return {p.relative_to(out).as_posix() for p in pages if f"runs/{run}/" in p.read_text()}

    def noted(changed: bool = True) -> None:
        runs = {p.parent.name for p in (out / "runs").glob("*/index.json")} - old_runs
        pages = {n: (out / "runs" / n / "index.html").read_bytes() for n in runs}
        chart = (out / kernel / "index.html").read_bytes()
        first.append((pages, set().union(*map(showing, runs)), chart))
        published(changed)

    monkeypatch.setattr(status, "published", noted)
    rendered = rendered_paths(monkeypatch)
    set_latency(content / "runs" / "commit-9.json", 65_010, 64_400, 65_600)
    assert rebuild(content, out, None, outcome, status).ok
    assert len(first) == 2, "published twice: the new run's page, then the whole site"
    (pages, shown_then, chart), (_, shown_after, _) = first
    (new,) = pages
    assert shown_then == {f"runs/{new}/index.html", f"{kernel}index.html"}
    assert len(shown_after) > 5, "then the pages that rank or list it"
    assert pages[new] == (out / "runs" / new / "index.html").read_bytes()
    assert chart == (out / kernel / "index.html").read_bytes()
    assert rendered.count(f"runs/{new}/") == 1 and rendered.count(kernel) == 1
    assert "shown first: the pages of 1 new run and of its kernel, in " in capsys.readouterr().out
    assert tree(out) == cold_tree(content, tmp_path)


def test_a_one_run_change_renders_only_the_pages_that_show_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One of nine commits' runs of a series gets another median: the rebuild renders that
    run's page, the pages that list or chart it, its kernel's, and those of the site's
    summary pages (planned whole every build) whose bytes change, and no other; the site is
    then a cold build's, byte for byte. The cohort's other run pages rank only the newest run
    of each series: not this one, so they are not rendered again."""
    content = with_commits(tmp_path, [50_000] * 5 + [65_000] * 4, revisions=True)
    out = tmp_path / "site"
    status = BuildStatus()
    outcome = rebuild(content, out, None, status=status)
    assert outcome.ok
    old_runs = {p.parent.name for p in (out / "runs").glob("*/index.json")}
    before = tree(out)
    rendered = rendered_paths(monkeypatch)
    set_latency(content / "runs" / "commit-3.json", 50_010, 49_600, 50_400)
    assert rebuild(content, out, None, outcome, status).ok
    after = tree(out)

    (new,) = {p.parent.name for p in (out / "runs").glob("*/index.json")} - old_runs
    showing = {
        page.parent.relative_to(out).as_posix() + "/"
        for page in out.rglob("index.html")
        if f"runs/{new}/" in page.read_text()
    }
    kernel = "kernels/liger-layer-norm/"
    summaries = {"", "compare/", "regressions/", "search/", "sources/"}
    summaries |= {f"{s}/" for s in ("gpus", "implementations", "kernels", "projects")}
    summaries |= {"protocols/", "workloads/", "data-quality/", "methodology/"}
    changed = {
        path
        for path in summaries
        if any(before[path + name] != after[path + name] for name in ("index.html", "index.json"))
    }
    assert changed < summaries  # the others are skipped
    assert sorted(rendered) == sorted(
        showing | changed | {kernel, f"{kernel}history/liger-bench-nvidia-h100-80gb-hbm3/"}
    )
    assert len(list(out.rglob("index.html"))) == 81
    assert after == cold_tree(content, tmp_path)


def test_the_watcher_sees_every_path_a_build_reads(tmp_path: Path) -> None:
    content = tmp_path / "content"
    roots = (content, TEMPLATES_DIR)
    for read in ("node_modules/runs/a.json", "_reports/x.json", "runs/a.json~", "runs/a.json"):
        assert read_by_builds(roots, 2, str(content / read)), read
    for unread in (".git/index", ".venv/x.json", "runs/.a.json.swp", ".DS_Store"):
        assert not read_by_builds(roots, 2, str(content / unread)), unread
    assert read_by_builds(roots, 2, str(TEMPLATES_DIR / "run.html"))
    assert not read_by_builds(roots, 2, str(TEMPLATES_DIR / ".run.html.swp"))


def test_the_watchers_paths_are_handed_on_unless_a_template_changed(tmp_path: Path) -> None:
    saved = str(tmp_path / "content" / "runs" / "a.json")
    assert content_changes([(2, saved)]) == {saved}
    # A template may change every page: the build looks at everything.
    assert content_changes([(2, saved), (2, str(TEMPLATES_DIR / "run.html"))]) is None


# Where the rebuild below asks, with its long loops asking at every item (EVERY = 1): once
# published (1), the manifest's entries (2–5: each stretch of unchanged ones), while planning
# (6–55: the marks of the series 7, each kernel's keys 9–11, each resource whose keys are made
# again 14–17, each resource), once planned (56), each page's key looked up (57–79: the pages
# the first build wrote are skipped on sight, as are the pages made whole that are as they
# were), before each file written (80–89, 103–105, 109, 113–136), the sitemap's lines (90–102:
# each new one, each stretch of unchanged ones), the manifest's (106–108) and the export's
# (110–112) written out.
@pytest.mark.parametrize(
    "stop_at", [1, 2, 4, 6, 7, 10, 15, 30, 55, 56, 70, 85, 95, 104, 107, 111, 125, 136, None]
)
def test_a_rebuild_stops_for_a_newer_change_and_the_next_does_the_rest(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    stop_at: int | None,
) -> None:
    """A file saved again while the site is rebuilt for the last save: the rebuild stops where
    it next asks (once the saved run's page is published, while the manifest, the site and
    each kind of page are planned, once the site is planned, while it picks the pages to
    render, before each file it writes, and while the manifest and the export are written
    out: 136 asks here, asking at every item of the long loops) having published only that
    page and its kernel's, and the rebuild for the newer save leaves a cold build's site, byte
    for byte. Never told, it finishes."""
    monkeypatch.setattr(sitegen.superseded, "EVERY", 1)
    content = with_commits(tmp_path, [50_000] * 5 + [65_000] * 4, revisions=True)
    out = tmp_path / "site"
    status = BuildStatus()
    outcome = rebuild(content, out, None, status=status)
    capsys.readouterr()
    before = tree(out)
    set_latency(content / "runs" / "commit-3.json", 50_010, 49_600, 50_400)
    asked = 0

    def superseded() -> bool:
        nonlocal asked
        asked += 1
        return asked == stop_at

    outcome = rebuild(content, out, None, outcome, status, None, superseded)
    printed = capsys.readouterr().out
    assert outcome.ok
    if stop_at is None:
        assert asked == 136 and "stopped" not in printed  # the last place stopped at above
    else:
        assert asked == stop_at and "for a newer change" in printed and "built " not in printed
        after = tree(out)
        changed = {path for path in after if after[path] != before.get(path)}
        kernel = "kernels/liger-layer-norm/"
        (new,) = {path.split("/")[1] for path in changed if path.startswith("runs/")}
        published = {
            f"{folder}{name}"
            for folder in (f"runs/{new}/", kernel)
            for name in ("index.html", "index.json")
        }
        assert {f"runs/{new}/index.html", f"runs/{new}/index.json"} <= changed <= published
        assert after.keys() >= before.keys()  # the run's old page goes with the whole build
    set_latency(content / "runs" / "commit-4.json", 50_020, 49_600, 50_400)
    assert rebuild(content, out, None, outcome, status, None, lambda: False).ok
    assert tree(out) == cold_tree(content, tmp_path)


@pytest.mark.parametrize("cpus", [1, 2])
def test_a_change_found_unreported_while_a_newer_one_waits_is_left_to_the_next_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cpus: int
) -> None:
    """A build that took the watcher's word finds a file it did not hear of changed: it would
    walk the whole tree again, but when a newer change is reported (here only as the build
    waits for it: the watcher lags a save by ~50 ms) that walk is the next build's, so it
    stops instead (at 100k runs, a save landing right after the saved run's page was
    published would otherwise be shown only after a full walk). The look for unreported
    changes is made by a CPU aside while the site is planned, or here with one CPU."""
    monkeypatch.setattr(sitegen.process, "usable_cpus", lambda *_: cpus)
    content = with_commits(tmp_path, [50_000] * 5 + [65_000] * 4, revisions=True)
    out = tmp_path / "site"
    status = BuildStatus()
    outcome = rebuild(content, out, None, status=status)
    checks = 0
    check_content = sitegen.pipeline.check_content

    def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal checks
        checks += 1
        return check_content(*args, **kwargs)

    monkeypatch.setattr("sitegen.pipeline.check_content", counted)
    set_latency(content / "runs" / "commit-3.json", 50_010, 49_600, 50_400)
    waited = 0

    def superseded() -> bool:
        nonlocal waited
        # Reported on the third look of the wait that follows the change found.
        if sys._getframe(2).f_code.co_name == "stop_if_superseded_within":
            waited += 1
        return waited == 3

    outcome = rebuild(content, out, None, outcome, status, set(), superseded)
    assert (checks, waited) == (1, 3)
    assert rebuild(content, out, None, outcome, status, None).ok
    assert tree(out) == cold_tree(content, tmp_path)


def test_the_watcher_hands_on_every_change_reported_since_the_last_build(tmp_path: Path) -> None:
    """The next build takes every batch the watcher reported while the last one ran; a
    template among them means every page may change (None); the watcher's failure is raised
    to the builds' thread, not lost with its own."""
    saved, again = str(tmp_path / "runs" / "a.json"), str(tmp_path / "runs" / "b.json")
    template = str(TEMPLATES_DIR / "run.html")

    def watcher_of(*reports: Any) -> Watcher:
        reported = threading.Event()

        def watch(*_: Path, watch_filter: Any, stop_event: threading.Event) -> Iterator[Any]:
            for report in reports:
                if isinstance(report, BaseException):
                    raise report
                yield report
            reported.set()  # resumed after the last report was taken in
            stop_event.wait()

        watcher = Watcher(watch, (tmp_path,), stopping)
        if not any(isinstance(report, BaseException) for report in reports):
            assert reported.wait(10)
        return watcher

    stopping = threading.Event()
    try:
        watcher = watcher_of({(2, saved)}, {(2, again)})
        assert watcher.waiting()
        assert watcher.next() == {saved, again}
        assert not watcher.waiting()
        assert watcher_of({(2, saved)}, {(2, template)}, {(2, again)}).next() is None
        with pytest.raises(RuntimeError, match="watch limit"):
            watcher_of(RuntimeError("inotify watch limit reached")).next()
        # The build daemon takes what was reported without waiting; a failed watcher is
        # no one's word any more: every build then walks the tree.
        watcher = watcher_of({(2, saved)}, {(2, again)})
        assert watcher.taken() == {saved, again}
        assert watcher.taken() == set()
        assert watcher_of({(2, saved)}, {(2, template)}).taken() is None
        failed = watcher_of(RuntimeError("inotify watch limit reached"))
        deadline = time.monotonic() + 10
        while not failed.waiting() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert failed.taken() is None
        assert failed.taken() is None
    finally:
        stopping.set()


def test_a_saved_runs_old_page_leads_to_its_new_one(tmp_path: Path) -> None:
    """A saved run is a new digest, so a new URL: the page an author has open on it reloads
    onto the new page (its JSON twin too), for as long as the run stays saved; an edit undone
    serves the old page again, and the page in between leads back to it."""
    content = tmp_path / "content"
    shutil.copytree(SITE_CONTENT, content)
    out = tmp_path / "site"
    status = BuildStatus()
    outcome = rebuild(content, out, None, status=status)
    server = start_server(out, 0, status=status)
    try:
        facts = outcome.state.analysis.facts.values()
        run = next(
            f for f in facts if f.entry.path.endswith(".json") and "timing" in f.entry.raw.decode()
        )
        file = content / run.entry.path.split("/", 1)[1]
        original = file.read_bytes()
        old = f"/{run_path(run.digest)}"
        assert get(f"{server.url}{old[1:]}")[0] == 200

        set_latency(file, 123_456, 120_000, 125_000)
        outcome = rebuild(content, out, None, outcome, status)
        (new_run,) = outcome.state.analysis.fresh
        new = f"/{run_path(new_run.digest)}"
        code, headers, _ = get(f"{server.url}{old[1:]}?from=tab")
        assert (code, headers["Location"]) == (302, f"{new}?from=tab")
        assert get(f"{server.url}{old[1:]}index.json")[1]["Location"] == f"{new}index.json"
        assert "123" in get(f"{server.url}{new[1:]}")[2].decode()

        file.write_bytes(original)  # undone: the old page is the run's again
        outcome = rebuild(content, out, None, outcome, status)
        assert get(f"{server.url}{old[1:]}")[0] == 200
        assert get(f"{server.url}{new[1:]}")[1]["Location"] == old
    finally:
        stop_server(server)


def test_what_a_rebuild_leaves_is_collected_once_the_browser_is_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[str] = []
    published = BuildStatus.published

    def told(status: BuildStatus, changed: bool = True) -> None:
        events.append("published")
        published(status, changed)

    def collected(phase: str, info: dict) -> None:  # type: ignore[type-arg]
        if phase == "start":
            events.append("collected")

    monkeypatch.setattr(BuildStatus, "published", told)
    gc.callbacks.append(collected)
    try:
        assert rebuild(SITE_CONTENT, tmp_path / "site", None, status=BuildStatus()).ok
        left = [[n] for n in range(1000)]  # the young generation, collected now at the latest
    finally:
        gc.callbacks.remove(collected)
    assert left and events[:2] == ["published", "collected"]
    assert gc.get_threshold()[0] != sitegen.process.COLLECT_EVERY
