"""A real browser on the built site: charts draw, nothing errors, links lead to runs, search
finds charts, the compare page aligns runs; and on `sitegen serve`: a page reloads by itself
after a rebuild, a failed build shows its report, a missing page is the site's own 404.

Uses Debian's Chromium (`apt-get install chromium`) through Playwright. Never skipped: a missing
browser is a failure, so CI cannot pass without having looked at a page. The server sends the
headers Netlify would (netlify.toml's `[[headers]]` and the site's `_headers`), so the charts are
proven to draw under the production Content-Security-Policy.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from http.server import SimpleHTTPRequestHandler
from pathlib import Path
from typing import ClassVar
from urllib.request import urlopen

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, Route, expect, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeout

import sitegen.publish.search
from sitegen.pipeline import build_site, manifest_of_content
from sitegen.publish.compare import Baseline
from sitegen.publish.deploy import Deployment
from tests.conftest import FIXTURES, REPOSITORY, http_served
from tests.netlify_headers import headers_for, site_rules
from tests.pull_request import make_pull_request

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


class _AsNetlify(SimpleHTTPRequestHandler):
    """Serves a built site with the headers Netlify would add to each path."""

    rules: ClassVar[list[tuple[str, dict[str, str]]]] = []

    def end_headers(self) -> None:
        for name, value in headers_for(self.rules, self.path.split("?")[0]).items():
            self.send_header(name, value)
        super().end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


def _serve(out: Path) -> Iterator[str]:
    handler = type("Handler", (_AsNetlify,), {"rules": site_rules(out)})
    with http_served(functools.partial(handler, directory=str(out))) as url:
        yield url


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    out = tmp_path_factory.mktemp("browser") / "public"
    assert build_site(FIXTURES / "site" / "content", out, search=True).search is not None
    yield from _serve(out)


@pytest.fixture(scope="module")
def bare_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The fixture site built without a search index."""
    out = tmp_path_factory.mktemp("bare") / "public"
    assert build_site(FIXTURES / "site" / "content", out).out_dir is not None
    yield from _serve(out)


@pytest.fixture(scope="module")
def parted_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The fixture site with its search index made in parts of 10 pages, merged."""
    out = tmp_path_factory.mktemp("parted") / "public"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sitegen.publish.search, "PART_PAGES", 10)
        assert build_site(FIXTURES / "site" / "content", out, search=True).search is not None
    yield from _serve(out)


@pytest.fixture(scope="module")
def catalog_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The real catalog (content/) with its search index."""
    out = tmp_path_factory.mktemp("catalog") / "public"
    assert build_site(REPOSITORY / "content", out, search=True).search is not None
    yield from _serve(out)


@pytest.fixture(scope="module")
def preview_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The fixture pull request as a deploy preview, compared with the fixture content."""
    root = tmp_path_factory.mktemp("preview")
    content = make_pull_request(root / "content")
    baseline = Baseline("main", manifest_of_content(FIXTURES / "site" / "content").manifest)
    deployment = Deployment(context="deploy-preview", review_id="3", commit="0123456789abcdef")
    out = root / "public"
    assert build_site(content, out, deployment=deployment, baseline=baseline).out_dir
    yield from _serve(out)


@pytest.fixture(scope="module")
def rich_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The fixture with everything a kernel page can show: a full pass's speed against
    memory, and a cell measured under several releases."""
    from tests.analysis.test_frontier import with_full_latency
    from tests.analysis.test_releases import add_earlier_releases
    from tests.site.test_frontier import MEDIANS

    root = tmp_path_factory.mktemp("rich")
    content = with_full_latency(root, MEDIANS)
    add_earlier_releases(content)
    out = root / "public"
    assert build_site(content, out).out_dir is not None
    yield from _serve(out)


# Markup, Markdown and a spreadsheet formula in titles, as a pull request could write them.
HOSTILE_KERNEL = '<img src=x onerror="window.injected=1"><a href="https://evil.example/a">a</a>'
HOSTILE_IMPLEMENTATION = (
    '=HYPERLINK("https://evil.example") ![p](https://evil.example/pixel.png) '
    "[l](https://evil.example/l) <b>b</b> `c` | d"
)


@pytest.fixture(scope="module")
def hostile_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The fixture with LayerNorm and its Liger implementation retitled with markup."""
    root = tmp_path_factory.mktemp("hostile")
    content = root / "content"
    shutil.copytree(FIXTURES / "site" / "content", content)
    for path, title in (
        (content / "operations" / "liger-layer-norm.json", HOSTILE_KERNEL),
        (content / "implementations" / "liger-bench-layer-norm-liger.json", HOSTILE_IMPLEMENTATION),
    ):
        document = json.loads(path.read_text())
        document["metadata"]["title"] = title
        path.write_text(json.dumps(document))
    out = root / "public"
    assert build_site(content, out, search=True).search is not None
    yield from _serve(out)


@pytest.fixture(scope="module")
def kernelindex_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A slice of kernelindex.dev's export imported and built: a leaderboard on an AMD GPU,
    FlashInfer traces with failed runs, a record history. The site's URL and folder."""
    from sitegen.importers.kernelindex.importing import main as import_export
    from tests.importers.kernelindex.test_importing import FIXTURE

    root = tmp_path_factory.mktemp("kernelindex")
    (root / "content").mkdir()
    with contextlib.redirect_stdout(io.StringIO()):
        assert import_export(FIXTURE, root / "content" / "kernelindex", []) == 0
    out = root / "public"
    assert build_site(root / "content", out).out_dir is not None
    for url in _serve(out):
        yield url, out


@pytest.fixture(scope="module")
def history_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """LayerNorm's Liger forward on the H100 at nine commits, a 1.3× step between the fifth
    and the sixth (tests/analysis/test_regressions.py `with_commits`)."""
    from tests.analysis.test_regressions import with_commits

    root = tmp_path_factory.mktemp("history")
    content = with_commits(root, [50_000] * 5 + [65_000] * 4, revisions=True)
    out = root / "public"
    assert build_site(content, out).out_dir is not None
    yield from _serve(out)


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
    page.on(
        "requestfailed",
        lambda request: problems.append(f"failed: {request.url} {request.failure}"),
    )
    page.goto(url)
    return page


def wait_until(page: Page, expression: str, timeout: float = 10.0) -> None:
    """Poll `expression` until it is true (`wait_for_function` evaluates a string, which the
    pages' CSP forbids)."""
    poll(page, lambda: bool(page.evaluate(expression)), expression, timeout)


def poll(page: Page, condition: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
    """Check `condition` every 50 ms, the page's events handled between checks, until it holds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"still false after {timeout} s: {what}"
        page.wait_for_timeout(50)


def draw_all(page: Page) -> None:
    """Scroll every chart into view: a chart is drawn only once it comes near the screen."""
    for chart in page.locator(".chart").all():
        chart.scroll_into_view_if_needed()
        chart.locator(".main-svg").first.wait_for(timeout=20_000)


def test_kernel_chart_reads_its_series_and_ticks_and_leads_to_a_run_and_back(
    browser: Browser, base_url: str
) -> None:
    problems: list[str] = []
    page = open_page(browser, f"{base_url}/kernels/liger-layer-norm/", problems)
    with urlopen(f"{base_url}/kernels/liger-layer-norm/") as response:  # netlify.toml's policy
        assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"]
    charts = page.locator(".chart-block")
    assert charts.count() == 4  # forward on two GPUs, backward on H100, memory on H100
    # Below the fold, nothing is drawn until it is scrolled to.
    last = page.locator(".chart").last
    assert last.locator(".main-svg").count() == 0
    draw_all(page)
    assert page.locator(".chart .main-svg").count() >= 4
    assert page.locator(".chart-fallback").count() == 0  # replaced by the drawing
    backward = page.locator("section#backward")
    legend = backward.locator(".legendtext").all_text_contents()
    assert sorted(legend) == ["Liger", "Transformers (baseline)"]
    assert backward.locator(".chart .scatterlayer .trace").count() == 2
    ticks = backward.locator(".ytick text").all_text_contents()
    assert ticks and all(t.endswith(" µs") for t in ticks), ticks  # the unit on every tick
    assert any(t.replace(",", "").split()[0].isdigit() for t in ticks)
    # A ranking row leads to its run; the run page leads back to that row, in its chart.
    row = backward.locator("table.ranking tr[id^='run-']").first
    row_id = row.get_attribute("id")
    link = row.locator("a[href^='/runs/']").first
    href = link.get_attribute("href")
    link.click()
    page.wait_for_url(f"{base_url}{href}")
    assert page.locator("h1").inner_text().startswith("LayerNorm · ")
    assert page.locator("code.digest").inner_text().startswith("sha256:")
    assert "Is this the fastest here?" in page.locator("#rank-heading").inner_text()
    page.locator(".ranking-here a", has_text="See it on the kernel page").click()
    page.wait_for_url(f"{base_url}/kernels/liger-layer-norm/#{row_id}")
    target = page.locator(f"#{row_id}")
    assert target.is_visible() and target.evaluate("e => e.matches(':target')")
    chart = target.locator("xpath=ancestor::figure[1]").locator(".chart")
    chart.locator(".main-svg").first.wait_for(timeout=20_000)  # its chart, drawn on arrival
    assert problems == []


def _first_run_page(out: Path, marker: str) -> str:
    """The site path of the first run page (by path) whose HTML holds `marker`."""
    for path in sorted((out / "runs").glob("*/index.html")):
        if marker in path.read_text(encoding="utf-8"):
            return f"runs/{path.parent.name}/"
    raise AssertionError(f"no run page holds {marker!r}")


def test_the_kernelindex_catalog_pages_open_and_draw(
    browser: Browser, kernelindex_site: tuple[str, Path]
) -> None:
    """A leaderboard, a FlashInfer trace operation, an AMD GPU, a failed run and a run with
    its record history: each opens without an error, and shows what it is for."""
    url, out = kernelindex_site
    problems: list[str] = []
    board = open_page(browser, f"{url}/kernels/gpumode-amd-fp8-mm/", problems)
    assert board.locator("section.board h2").first.inner_text().startswith("Mean latency on AMD")
    draw_all(board)
    assert board.locator(".chart .main-svg").count() >= 1
    first = board.locator("table.ranking").first
    assert first.locator("tbody tr").count() == 10  # the best ten; the rest one click away
    rest = board.locator("details.rest").first
    rest.locator("summary").click()
    assert rest.locator("tbody tr").first.is_visible()
    history = board.locator("details.records").first
    history.locator("summary").click()
    assert "first record" in history.inner_text()
    trace = open_page(browser, f"{url}/kernels/gemm-n4096-k4096/", problems)
    draw_all(trace)
    assert "Mean latency" in trace.locator(".chart-block h4").first.inner_text()
    gpu = open_page(browser, f"{url}/gpus/gpumode-kernelbot-amd-instinct-mi300x/", problems)
    assert "Leaderboards on this GPU" in gpu.locator("#leaders-heading").inner_text()
    failed = open_page(browser, f"{url}/{_first_run_page(out, 'status-compile_error')}", problems)
    assert "never ranked" in failed.locator("p.note").first.inner_text()
    record = open_page(browser, f"{url}/{_first_run_page(out, 'records-heading')}", problems)
    assert record.locator("section.records tr.this-run").count() >= 1
    assert problems == []


def test_chart_click_opens_the_run(browser: Browser, base_url: str) -> None:
    problems: list[str] = []
    page = open_page(browser, f"{base_url}/kernels/liger-layer-norm/", problems)
    chart = page.locator("section#backward .chart").first
    chart.scroll_into_view_if_needed()
    page.wait_for_selector("section#backward .main-svg", timeout=20_000)
    chart_id = chart.get_attribute("id")
    # Plotly's own click event, as a user clicking the Liger point at hidden = 16384 raises it.
    page.evaluate(
        """(id) => {
            const chart = document.getElementById(id);
            const trace = chart.data.findIndex((t) => t.name === "Liger");
            chart.emit("plotly_click", {points: [{customdata: chart.data[trace].customdata[2]}]});
        }""",
        chart_id,
    )
    page.wait_for_url(f"{base_url}/runs/f0cf6dd69e048a9b/")
    assert page.locator("h1").inner_text() == "LayerNorm · liger · backward"
    assert "578 µs" in page.locator(".headline").inner_text()
    assert problems == []


def test_run_page_without_errors(browser: Browser, base_url: str) -> None:
    problems: list[str] = []
    page = open_page(browser, f"{base_url}/runs/f0cf6dd69e048a9b/", problems)
    page.wait_for_load_state("load")
    assert page.locator("button.copy").is_visible()  # the script un-hid it
    assert page.locator("a[href='/protocols/liger-bench-do-bench-backward/']").count() >= 1
    assert problems == []


def test_dark_mode_restyles_pages_and_charts(browser: Browser, base_url: str) -> None:
    """Under the production CSP, a reader whose system is dark gets a dark page and charts."""
    context = browser.new_context(color_scheme="dark")
    problems: list[str] = []
    page = context.new_page()
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.goto(f"{base_url}/kernels/liger-layer-norm/")
    draw_all(page)
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(13, 17, 23)"
    first = page.locator(".chart").first.get_attribute("id")
    layout = page.evaluate(f"document.getElementById({first!r})._fullLayout.paper_bgcolor")
    assert layout == "#0d1117"
    # Back to light without a reload: the drawn charts follow.
    page.emulate_media(color_scheme="light")
    wait_until(page, f"document.getElementById({first!r})._fullLayout.paper_bgcolor === '#ffffff'")
    assert problems == []
    context.close()


def test_speed_against_memory_draws_the_shape_picked(browser: Browser, rich_url: str) -> None:
    problems: list[str] = []
    page = open_page(browser, f"{rich_url}/kernels/liger-layer-norm/", problems)
    figure = page.locator("figure.frontier")
    figure.scroll_into_view_if_needed()
    chart = figure.locator(".chart")
    chart.locator(".main-svg").first.wait_for()
    target = chart.get_attribute("id")
    picker = figure.locator("select.frontier-shape")
    assert picker.is_visible() and picker.input_value() == "1"  # the largest shape first
    names = f"document.getElementById({target!r}).data.map(t => t.name).join(',')"
    assert page.evaluate(names) == "frontier,Liger,Transformers"
    picker.select_option(label="hidden = 4,096")
    wait_until(page, f"{names} === 'Liger,Transformers'")
    summary = figure.locator(f"#{target}-summary")
    assert summary.inner_text() == (
        "At hidden = 4,096, on the frontier: Liger. Beaten on both by one of them: Transformers."
    )
    # The releases chart of the same page is drawn too, and a click leads to a run.
    releases = page.locator(".releases .chart").first
    releases.scroll_into_view_if_needed()
    releases.locator(".main-svg").first.wait_for()
    assert problems == []


def test_preview_banner_and_changes_page(browser: Browser, preview_url: str) -> None:
    problems: list[str] = []
    page = open_page(browser, f"{preview_url}/kernels/liger-layer-norm/", problems)
    draw_all(page)
    banner = page.locator(".preview-banner")
    assert banner.inner_text().strip() == (
        "Deploy preview for pull request #3 · commit 0123456 · see what it changes →"
    )
    banner.locator("a", has_text="see what it changes").click()
    page.wait_for_url(f"{preview_url}/changes/")
    assert page.locator("h1").inner_text() == "What pull request #3 changes"
    assert page.locator("table.run-changes td.change").inner_text() == "+0.0166 ms (+10.0%)"
    assert page.locator("meta[name=robots]").get_attribute("content") == "noindex"
    page.locator("table.run-changes a", has_text="LayerNorm · liger · backward").click()
    page.wait_for_url(f"{preview_url}/runs/**")
    assert "183 µs" in page.locator(".headline").inner_text()
    assert problems == []


# --- search -------------------------------------------------------------------------------------


def search(browser: Browser, url: str, problems: list[str]) -> Page:
    page = open_page(browser, url, problems)
    page.locator(".pagefind-ui__result").first.wait_for(timeout=20_000)
    return page


def test_a_search_for_rmsnorm_h100_bf16_finds_the_rmsnorm_h100_chart(
    browser: Browser, catalog_url: str
) -> None:
    """The issue's question, on the real catalog (no plain RMSNorm was measured on an H100:
    its Megatron-layout variant was): the kernel page first, its H100 bf16 charts as the
    result's sub-results, and one click lands on the chart."""
    problems: list[str] = []
    page = search(browser, f"{catalog_url}/search/?q=rmsnorm+h100+bf16", problems)
    first = page.locator(".pagefind-ui__result").first
    title = first.locator(".pagefind-ui__result-title > a").first
    assert title.inner_text() == "RMSNorm, Megatron layout"
    assert title.get_attribute("href") == "/kernels/liger-megatron-rms-norm/"
    chart = first.locator(".pagefind-ui__result-nested a").first
    href = chart.get_attribute("href") or ""
    assert href.startswith("/kernels/liger-megatron-rms-norm/#chart-rmsnorm-megatron-layout-")
    assert "-nvidia-h100-80gb-hbm3-" in href and href.endswith("-bf16")
    assert "NVIDIA H100 80GB HBM3" in chart.inner_text() and "bf16" in chart.inner_text()
    # Plain RMSNorm's charts under it: its H100 ones, not the A100 chart that says "RMSNorm"
    # and "bf16" more often.
    plain = page.locator(".pagefind-ui__result").filter(
        has=page.locator('.pagefind-ui__result-title > a[href="/kernels/liger-rms-norm/"]')
    )
    shown = plain.locator(".pagefind-ui__result-nested a").all_inner_texts()
    assert shown and all("H100" in text for text in shown), shown
    chart.click()
    page.wait_for_url(f"{catalog_url}{href}")
    heading = page.locator(f"h4#{href.split('#')[1]}")
    assert heading.evaluate("e => e.matches(':target')") and heading.is_visible()
    assert heading.evaluate("e => e.getBoundingClientRect().top") < 400  # scrolled to it
    figure = heading.locator("xpath=ancestor::figure[1]")
    figure.locator(".main-svg").first.wait_for(timeout=20_000)  # its chart, drawn
    assert "hidden = 4,096" in figure.locator("table.ranking").inner_text()
    assert problems == []


@pytest.mark.parametrize("site", ["base_url", "parted_url"])
def test_search_filters_by_kernel_gpu_pass_and_implementation(
    browser: Browser, site: str, request: pytest.FixtureRequest
) -> None:
    """On an index made at once and on one made in parts and merged: the same filters, the
    same results."""
    base_url = request.getfixturevalue(site)
    problems: list[str] = []
    page = search(browser, f"{base_url}/search/?q=layernorm", problems)
    # Pagefind UI draws the filter groups as their chunks arrive, after the first results
    expect(page.locator(".pagefind-ui__filter-name")).to_have_count(5, timeout=10_000)
    names = page.locator(".pagefind-ui__filter-name").all_inner_texts()
    assert names == ["GPU", "Implementation", "Kernel", "Page", "Pass"]
    page.locator(".pagefind-ui__filter-name", has_text="GPU").click()
    page.locator("label", has_text="NVIDIA A100 SXM4-80GB").click()
    page.locator(".pagefind-ui__filter-name", has_text="Page").click()
    page.locator("label", has_text="Run").click()
    page.locator(".pagefind-ui__message", has_text="6 results").wait_for(timeout=10_000)
    page.locator(".pagefind-ui__result-title > a").nth(4).wait_for()  # the first page of five
    titles = page.locator(".pagefind-ui__result-title > a").all_inner_texts()
    assert len(titles) == 5 and all("NVIDIA A100 SXM4-80GB" in t for t in titles), titles
    assert "q=layernorm" in page.url  # the words stay in the address
    assert problems == []


@pytest.mark.parametrize("typed", [False, True])
def test_search_lists_every_filter_group_when_a_filter_file_comes_late(
    browser: Browser, base_url: str, typed: bool
) -> None:
    """Pagefind's interface keeps the filter groups of the first results it gets: one filter
    file held back until a search could have been answered, every group is still listed, for
    a search from the address and for one typed."""
    problems: list[str] = []
    page = browser.new_page()
    page.on("pageerror", lambda error: problems.append(f"pageerror: {error}"))
    held: list[Route] = []

    def hold_first(route: Route) -> None:
        if held:
            route.continue_()
        else:
            held.append(route)

    page.route("**/*.pf_filter", hold_first)
    if typed:
        page.goto(f"{base_url}/search/")
        page.locator("#search-input").fill("layernorm")
    else:
        page.goto(f"{base_url}/search/?q=layernorm")
    poll(page, lambda: bool(held), "a filter file asked for", timeout=20)
    # Time for a search that did not wait for the filters to be answered and drawn
    with contextlib.suppress(PlaywrightTimeout):
        page.locator(".pagefind-ui__result").first.wait_for(timeout=3_000)
    held[0].continue_()
    page.locator(".pagefind-ui__result").first.wait_for(timeout=20_000)
    expect(page.locator(".pagefind-ui__filter-name")).to_have_count(5, timeout=10_000)
    assert problems == []


def test_search_filters_show_markup_in_names_as_text(browser: Browser, hostile_url: str) -> None:
    """Pagefind's filter list puts a value in as HTML: a kernel's title holding elements is
    shown as its characters, never as an element."""
    problems: list[str] = []
    page = search(browser, f"{hostile_url}/search/?q=layernorm", problems)
    page.locator(".pagefind-ui__filter-name", has_text="Kernel").click()
    labels = page.locator(".pagefind-ui__filter-label").all_inner_texts()
    assert any(label.startswith(HOSTILE_KERNEL + " (") for label in labels), labels
    assert page.locator("#search img, #search b, .pagefind-ui__filter-label a").count() == 0
    assert page.evaluate("window.injected") is None
    assert problems == []


def test_the_search_page_of_a_site_without_an_index_says_so(
    browser: Browser, bare_url: str
) -> None:
    problems: list[str] = []
    page = open_page(browser, f"{bare_url}/search/?q=layernorm", problems)
    note = page.locator("#search-unavailable")
    note.wait_for(state="visible", timeout=10_000)
    assert note.inner_text().startswith("Search is not available on this build of the site")
    assert page.locator("#search").is_hidden()
    # Only the index's entry was asked for and missing (the browser logs its 404).
    assert len(problems) == 1 and "404" in problems[0], problems


# --- compare ------------------------------------------------------------------------------------

SEED = "f0cf6dd69e048a9b"  # the published example run: LayerNorm, Liger, backward, H100
SEED_COMPETITOR = "567351cb8062f81d"  # Transformers, same workload, protocol and GPU
LIGER_H100 = "cfa9516de06547bf"  # LayerNorm forward at hidden 1024 on the H100 …
LIGER_A100 = "72c2ce1064436af8"  # … and the same workload and protocol on the A100


def compared(browser: Browser, url: str, problems: list[str]) -> Page:
    page = open_page(browser, url, problems)
    page.locator("#compare-result").wait_for(state="visible", timeout=10_000)
    return page


def row(page: Page, section: str, field: str) -> list[str]:
    name = re.compile(rf"^{re.escape(field)}( differs)?$")
    line = page.locator(f"tbody[data-section='{section}'] tr").filter(
        has=page.locator("th[scope=row]", has_text=name)
    )
    return [line.locator("th").inner_text(), *line.locator("td").all_inner_texts()]


def test_a_compare_of_the_seed_run_with_its_transformers_competitor_shows_the_ratio(
    browser: Browser, base_url: str
) -> None:
    problems: list[str] = []
    page = open_page(browser, f"{base_url}/runs/{SEED}/", problems)
    page.locator(".ranking-here a", has_text="compare").click()  # from the run page
    page.wait_for_url(f"{base_url}/compare/?runs={SEED},{SEED_COMPETITOR}")
    page.locator("#compare-result").wait_for(state="visible", timeout=10_000)
    verdict = page.locator("#compare-verdict").inner_text()
    assert verdict.startswith("Comparable: the same workload, protocol and environment.")
    assert "run 2 (Transformers) is 1.11× slower than run 1 (beyond the noise" in verdict
    assert row(page, "Result", "Value") == ["Value", "578 µs", "642 µs"]
    assert row(page, "Result", "Compared with run 1") == [
        "Compared with run 1",
        "reference",
        "1.11× slower than run 1",
    ]
    # What differs is marked in words, not colour alone; what is the same is not.
    assert row(page, "Kernel", "Implementation") == [
        "Implementation differs",
        "Liger",
        "Transformers",
    ]
    assert row(page, "Kernel", "GPU")[0] == "GPU"
    assert row(page, "Protocol", "Digest")[0] == "Digest"
    assert page.locator("tr.differs").count() > 3
    assert problems == []


def test_a_comparison_across_gpus_says_not_comparable(browser: Browser, base_url: str) -> None:
    problems: list[str] = []
    page = compared(browser, f"{base_url}/compare/?runs={LIGER_H100},{LIGER_A100}", problems)
    verdict = page.locator("#compare-verdict").inner_text()
    assert verdict.startswith("Not comparable: GPU differs.")
    assert row(page, "Result", "Compared with run 1")[2] == "not comparable: GPU differs"
    assert "×" not in page.locator("tbody[data-section='Result']").inner_text()
    assert row(page, "Kernel", "GPU") == [
        "GPU differs",
        "NVIDIA H100 80GB HBM3",
        "NVIDIA A100 SXM4-80GB",
    ]
    assert row(page, "Workload", "Digest")[0] == "Digest"  # the same workload and protocol
    page.locator("#compare-only-differs").check()
    assert page.locator("tbody[data-section='Workload']").is_hidden()
    assert page.locator("tbody[data-section='Environment'] tr.differs").first.is_visible()
    assert problems == []


@pytest.mark.parametrize(
    ("runs", "said"),
    [
        ("", "Give 2 to 8 runs to compare."),
        (SEED, "Only one run: give at least 2 to compare."),
        ("not-a-run", "“not-a-run” is not a run: give the 16 hex digits of a run's address"),
        (f"{SEED},{SEED}", f"Run {SEED} is listed twice."),
        (",".join(f"{n:016x}" for n in range(9)), "9 runs: at most 8 can be compared at once."),
        (f"{SEED},00000000000000ff", "No run 00000000000000ff in this catalog."),
        (f"{SEED},https://example.org/x", "“https://example.org/x” is not a run"),
    ],
)
def test_bad_runs_get_a_clear_message_never_a_broken_page(
    browser: Browser, base_url: str, runs: str, said: str
) -> None:
    problems: list[str] = []
    page = open_page(browser, f"{base_url}/compare/?runs={runs}", problems)
    # Waited for, not read once: "Reading 2 runs…" comes first while the twins are fetched.
    expect(page.locator("#compare-status")).to_contain_text(said, timeout=10_000)
    assert page.locator("#compare-result").is_hidden()
    assert page.locator("#compare-runs").is_visible()  # the form, to try again
    if "No run" in said:  # the browser logs the twin's 404
        problems = [p for p in problems if "404" not in p]
    assert problems == []


def test_the_comparison_copies_as_markdown_and_csv(browser: Browser, base_url: str) -> None:
    problems: list[str] = []
    context = browser.new_context()
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base_url)
    page = context.new_page()
    page.on("pageerror", lambda error: problems.append(f"pageerror: {error}"))
    page.goto(f"{base_url}/compare/?runs={SEED},{SEED_COMPETITOR}")
    page.locator("#compare-result").wait_for(state="visible", timeout=10_000)
    page.locator("button", has_text="Copy as Markdown").click()
    page.locator("#compare-status", has_text="Copied the table as Markdown.").wait_for()
    markdown = page.evaluate("navigator.clipboard.readText()").splitlines()
    assert markdown[0] == (
        f"| Section | Field | Run 1 \\({SEED}, Liger\\) "
        f"| Run 2 \\({SEED_COMPETITOR}, Transformers\\) | Differs |"
    )
    assert markdown[1] == "| --- | --- | --- | --- | --- |"
    assert "| Result | Compared with run 1 | reference | 1.11× slower than run 1 |  |" in markdown
    assert "| Kernel | Implementation | Liger | Transformers | differs |" in markdown
    page.locator("#compare-only-differs").check()
    page.locator("button", has_text="Copy as CSV").click()
    page.locator("#compare-status", has_text="Copied the table as CSV.").wait_for()
    csv = page.evaluate("navigator.clipboard.readText()").split("\r\n")
    assert csv[0].startswith("Section,Field,")
    assert "Kernel,Implementation,Liger,Transformers,differs" in csv
    assert not any(line.startswith("Workload,") for line in csv)  # the same: left out
    context.close()
    assert problems == []


def test_copies_of_the_comparison_carry_no_markup_and_no_formula(
    browser: Browser, hostile_url: str
) -> None:
    """Titles holding Markdown, HTML and a formula: the Markdown copy renders to a table of
    text alone, and the CSV copy's cell starts with a quote, not `=`."""
    from tests.model.test_markdown import tags

    context = browser.new_context()
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=hostile_url)
    page = context.new_page()
    page.goto(f"{hostile_url}/compare/?runs={SEED},{SEED_COMPETITOR}")
    page.locator("#compare-result").wait_for(state="visible", timeout=10_000)
    page.locator("button", has_text="Copy as Markdown").click()
    page.locator("#compare-status", has_text="Copied the table as Markdown.").wait_for()
    markdown = page.evaluate("navigator.clipboard.readText()")
    assert "pixel.png" in markdown and tags(markdown) == []
    page.locator("button", has_text="Copy as CSV").click()
    page.locator("#compare-status", has_text="Copied the table as CSV.").wait_for()
    cells = page.evaluate("navigator.clipboard.readText()").split(",")
    hostile = [cell for cell in cells if "HYPERLINK" in cell]
    assert hostile and all(cell.startswith(("\"'=HYPERLINK", "'=HYPERLINK")) for cell in hostile)
    context.close()


def test_serve_reloads_the_page_after_a_rebuild(browser: Browser, tmp_path: Path) -> None:
    """Edit a run while its kernel page is open: the page reloads with the new value, nobody
    pressing anything; a broken file shows its report over the page, escaped, and mending it
    takes the report away; a missing path is the site's 404 page with status 404."""
    content = tmp_path / "content"
    shutil.copytree(FIXTURES / "site" / "content", content)
    run = next((content / "runs").glob("liger-layer-norm-backward-huggingface-*hidden16384-*"))
    command = [sys.executable, "-m", "sitegen", "serve", str(content), "--port", "0"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as (
        server
    ):
        assert server.stdout is not None
        url = next(line.split()[1] for line in server.stdout if line.startswith("serving "))
        try:
            problems: list[str] = []
            page = open_page(browser, f"{url}kernels/liger-layer-norm/", problems)
            backward = page.locator("section#backward table.ranking")
            # 642 µs; once edited, 4.32 ms (the table's unit follows its largest value)
            assert "642" in backward.inner_text() and "4.32" not in backward.inner_text()
            page.evaluate("window.sitegenBefore = true")  # gone once the page reloads

            document = json.loads(run.read_text())
            document["spec"]["timing"]["latencyNs"]["median"] = 4_321_000
            run.write_text(json.dumps(document, indent=2))
            page.locator("section#backward table.ranking", has_text="4.32").wait_for()
            # The run's page goes in first, then the whole site: a page read between the two
            # reloads once more. Settled once it takes the build it was read in as served.
            page.locator("html[data-sitegen-build]").wait_for(state="attached")
            assert page.evaluate("window.sitegenBefore") is None
            # The rest of the site is rebuilt after that: a file saved before it ends stops it,
            # and the build that follows the mend below finishes it, a changed site (a reload).
            next(line for line in server.stdout if line.startswith("built "))

            hostile = content / "runs" / "zz <img src=x onerror=alert(1)>.json"
            hostile.write_text("{")
            report = page.locator("#sitegen-build-error")
            report.wait_for()
            assert report.locator("img").count() == 0
            assert "zz <img src=x onerror=alert(1)>.json: 1:2: invalid JSON" in report.inner_text()
            assert "4.32" in backward.inner_text()  # the last good site, still shown
            page.evaluate("window.sitegenBefore = true")
            hostile.unlink()  # mended: the same site as before it, so the report goes, no reload
            report.wait_for(state="detached")
            assert page.evaluate("window.sitegenBefore") is True
            # Each reload ends the page's event stream mid-request, and a reload asked for
            # while the last one loads (the run's page, then the whole build) ends that one:
            # neither is a failure.
            kernel = f"failed: {url}kernels/liger-layer-norm/ net::ERR_ABORTED"
            assert [p for p in problems if "/__sitegen/events" not in p and p != kernel] == []

            missing = browser.new_page()
            response = missing.goto(f"{url}no/such/page/")
            assert response is not None and response.status == 404
            assert missing.locator("h1").inner_text() == "Page not found"
        finally:
            server.send_signal(signal.SIGTERM)
            assert server.wait(timeout=30) == 0


def test_the_regressions_page_filters_and_leads_to_a_history_chart_of_every_commit(
    browser: Browser, history_url: str
) -> None:
    problems: list[str] = []
    page = open_page(browser, f"{history_url}/regressions/", problems)
    steps = page.locator("table.steps-table tbody tr")
    expect(page.locator("output.step-count")).to_have_text("1 of 1 shown")
    assert steps.first.get_attribute("data-kind") == "regression"
    assert "1.30× slower" in steps.first.inner_text()
    page.select_option("select[data-filter=kind]", "improvement")
    expect(page.locator("output.step-count")).to_have_text("0 of 1 shown")
    expect(steps.first).to_be_hidden()
    page.select_option("select[data-filter=kind]", "")
    steps.first.get_by_role("link").last.click()  # its chart
    page.wait_for_url(re.compile(r"/history/[^/]+/[^/]*hidden4096"))
    draw_all(page)
    figure = page.locator(".chart-block").first
    assert "Liger" in figure.locator(".legendtext").all_text_contents()
    # Every commit's run drawn: the Liger trace holds nine points, the regression one.
    points = page.evaluate(
        "() => Object.fromEntries(document.querySelector('.js-plotly-plot').data"
        ".filter(t => t.name).map(t => [t.name, t.x.length]))"
    )
    assert points["Liger"] == 9 and points["regression"] == 1, points
    assert "1.30× slower (regression)" in figure.locator("ul.steps").inner_text()
    table = figure.locator("details", has_text="Liger:")
    table.locator("summary").click()
    assert table.locator("tbody tr").count() == 9
    assert problems == []
