"""How long a kernel page takes to show its first chart in a real browser, and what it looks like.

    .venv/bin/python bench/first_chart.py SITE_DIR [--page kernels/liger-layer-norm/] [--repeat 5]
                                          [--screenshot OUT.png]

Serves a built site as the browser tests do (tests/test_browser.py: the headers Netlify would
send), opens the page in Debian's Chromium through Playwright with a fresh cache each time, and
reports the median time from the start of navigation to the first chart drawn (an SVG inside a
`.chart`), and the bytes of JavaScript the page loaded. The page is opened at its first chart
(`#<chart id>-figure`), as a reader following a link to it would: charts below the fold are
drawn only once scrolled to. `--screenshot` saves the whole page, every chart drawn.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPOSITORY))

from playwright.sync_api import Page, sync_playwright  # noqa: E402

from tests.test_browser import ARGS, CHROMIUM, _serve  # noqa: E402

FIRST_CHART = ".chart svg.main-svg"


def measure(site: Path, page: str, repeat: int, screenshot: Path | None) -> dict[str, object]:
    times: list[float] = []
    scripts = 0
    html = (site / page / "index.html").read_text(encoding="utf-8")
    first = re.search(r'class="chart" id="(chart-[0-9a-f]+)"', html)
    if first is None:
        raise SystemExit(f"{page}: no chart")
    fragment = f"#{first.group(1)}-figure"
    serving = _serve(site)
    base = next(serving)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
            for number in range(repeat):
                # The probe below is evaluated script, which the pages' CSP (rightly) forbids.
                context = browser.new_context(
                    viewport={"width": 1280, "height": 900}, bypass_csp=True
                )
                tab = context.new_page()
                tab.goto(f"{base}/{page}{fragment}", wait_until="commit")
                # Polled every animation frame: the time (from navigation) the first chart drew.
                drawn = tab.wait_for_function(
                    f"document.querySelector({FIRST_CHART!r}) && performance.now()",
                    timeout=30_000,
                    polling="raf",
                )
                times.append(float(drawn.json_value()))
                scripts = int(
                    tab.evaluate(
                        "performance.getEntriesByType('resource')"
                        ".filter(e => e.name.endsWith('.js'))"
                        ".reduce((n, e) => n + e.decodedBodySize, 0)"
                    )
                )
                if screenshot is not None and number == repeat - 1:
                    _draw_every_chart(tab)
                    tab.screenshot(path=str(screenshot), full_page=True)
                context.close()
            browser.close()
    finally:
        next(serving, None)
    return {
        "page": page,
        "first_chart_ms": round(statistics.median(times)),
        "all_ms": [round(t) for t in times],
        "javascript_bytes": scripts,
    }


def _draw_every_chart(tab: Page) -> None:
    """Scroll the page through, so that every chart is drawn before the screenshot."""
    height = int(tab.evaluate("document.body.scrollHeight"))
    for top in range(0, height, 600):
        tab.evaluate(f"window.scrollTo(0, {top})")
        tab.wait_for_timeout(30)
    tab.wait_for_timeout(500)
    tab.evaluate("window.scrollTo(0, 0)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path)
    parser.add_argument("--page", default="kernels/liger-layer-norm/")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--screenshot", type=Path)
    args = parser.parse_args()
    print(measure(args.site, args.page, args.repeat, args.screenshot))


if __name__ == "__main__":
    main()
