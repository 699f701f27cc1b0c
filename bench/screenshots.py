"""Screenshots of built pages, as a reader sees them: the top of each page (1280×900) and the
page whole, every chart drawn.

    .venv/bin/python bench/screenshots.py SITE_DIR OUT_DIR NAME=PATH...

Serves the site as the browser tests do (tests/test_browser.py) and writes `OUT_DIR/NAME.png`
(the first screen) and `OUT_DIR/NAME-whole-page.jpg` for each `NAME=PATH` (`PATH` a page's site
path, `kernels/gpumode-amd-fp8-mm/`, optionally with `#fragment`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPOSITORY))

from playwright.sync_api import sync_playwright  # noqa: E402

from bench.first_chart import _draw_every_chart  # noqa: E402
from tests.test_browser import ARGS, CHROMIUM, _serve  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("pages", nargs="+", metavar="NAME=PATH")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    serving = _serve(args.site)
    base = next(serving)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            tab = context.new_page()
            for item in args.pages:
                name, _, path = item.partition("=")
                tab.goto(f"{base}/{path}", wait_until="networkidle")
                _draw_every_chart(tab)
                if "#" in path:
                    tab.evaluate(
                        "location.hash && document.querySelector(location.hash)?.scrollIntoView()"
                    )
                    tab.wait_for_timeout(300)
                tab.screenshot(path=str(args.out / f"{name}.png"))
                tab.screenshot(
                    path=str(args.out / f"{name}-whole-page.jpg"), full_page=True, quality=70
                )
                print(f"{name}: {path}")
            browser.close()
    finally:
        next(serving, None)


if __name__ == "__main__":
    main()
