"""A real browser on the built site: charts draw, nothing errors, links lead to runs.

Uses Debian's Chromium (`apt-get install chromium`) through Playwright. Never skipped: a missing
browser is a failure, so CI cannot pass without having looked at a page.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, sync_playwright

from sitegen.build import build_site
from tests.conftest import FIXTURES

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    out = tmp_path_factory.mktemp("browser") / "public"
    assert build_site(FIXTURES / "site" / "content", out).out_dir is not None
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(out)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()
    thread.join()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert CHROMIUM.exists(), f"{CHROMIUM} is missing: apt-get install -y chromium"
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield launched
        launched.close()


def open_page(browser: Browser, url: str, problems: list[str]) -> Page:
    page = browser.new_page()

    def on_console(message: ConsoleMessage) -> None:
        if message.type in ("error", "warning"):
            problems.append(f"{message.type}: {message.text}")

    page.on("console", on_console)
    page.on("pageerror", lambda error: problems.append(f"pageerror: {error}"))
    page.on("requestfailed", lambda request: problems.append(f"failed: {request.url}"))
    page.goto(url)
    return page


def test_kernel_chart_draws_and_links_to_a_run(browser: Browser, base_url: str) -> None:
    problems: list[str] = []
    page = open_page(browser, f"{base_url}/kernels/liger-layer-norm/", problems)
    page.wait_for_selector(".chart .main-svg", timeout=20_000)
    charts = page.locator(".chart-block")
    assert charts.count() == 4  # forward on two GPUs, backward on H100, memory on H100
    assert page.locator(".chart .main-svg").count() >= 4
    backward = page.locator("section#backward")
    legend = backward.locator(".legendtext").all_text_contents()
    assert sorted(legend) == ["huggingface (baseline)", "liger"]
    assert backward.locator(".chart .scatterlayer .trace").count() == 2
    assert page.locator(".chart-fallback").count() == 0  # replaced by the drawing

    link = backward.locator("table.ranking a[href^='/runs/']").first
    href = link.get_attribute("href")
    link.click()
    page.wait_for_url(f"{base_url}{href}")
    assert page.locator("h1").inner_text().startswith("LayerNorm · ")
    assert page.locator("code.digest").inner_text().startswith("sha256:")
    assert problems == []


def test_chart_click_opens_the_run(browser: Browser, base_url: str) -> None:
    problems: list[str] = []
    page = open_page(browser, f"{base_url}/kernels/liger-layer-norm/", problems)
    page.wait_for_selector("section#backward .main-svg", timeout=20_000)
    chart_id = page.locator("section#backward .chart").first.get_attribute("id")
    # Plotly's own click event, as a user clicking the liger point at hidden = 16384 raises it.
    page.evaluate(
        """(id) => {
            const chart = document.getElementById(id);
            const trace = chart.data.findIndex((t) => t.name === "liger");
            chart.emit("plotly_click", {points: [{customdata: chart.data[trace].customdata[2]}]});
        }""",
        chart_id,
    )
    page.wait_for_url(f"{base_url}/runs/f0cf6dd69e048a9b/")
    assert page.locator("h1").inner_text() == "LayerNorm · liger · backward"
    assert "0.578 ms" in page.locator(".headline").inner_text()
    assert problems == []


def test_run_page_without_errors(browser: Browser, base_url: str) -> None:
    problems: list[str] = []
    page = open_page(browser, f"{base_url}/runs/f0cf6dd69e048a9b/", problems)
    page.wait_for_load_state("load")
    assert page.locator("button.copy").is_visible()  # the script un-hid it
    assert page.locator("a[href='/protocols/liger-bench-do-bench-backward/']").count() >= 1
    assert problems == []
