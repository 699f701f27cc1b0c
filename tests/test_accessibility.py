"""axe-core in a real browser over each kind of page, light and dark: zero violations.

axe-core comes from npm (tests/axe/package.json: `npm ci` there by `.ci/run`, or here when
missing); it is injected into each page after its charts are drawn, so what it checks is what a
reader gets. The page's own Content-Security-Policy forbids the injected script, so the context
bypasses it for axe alone (tests/test_browser.py proves the pages work under it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser

from tests.conftest import npm_installed
from tests.test_browser import (  # noqa: F401
    SEED_COMPETITOR,
    base_url,
    browser,
    draw_all,
    history_url,
    preview_url,
    rich_url,
)

AXE = Path(__file__).parent / "axe" / "node_modules" / "axe-core" / "axe.min.js"
SEED_RUN = "runs/f0cf6dd69e048a9b/"  # LayerNorm · liger · backward at hidden 16384 on the H100


@pytest.fixture(scope="module", autouse=True)
def axe_installed() -> None:
    npm_installed(AXE.parents[2], AXE)


def violations(
    browser: Browser,  # noqa: F811
    url: str,
    scheme: str,
    ready: str = "",
) -> list[dict[str, Any]]:
    """`ready`: what the page's script shows once it is done (compare, search), waited for."""
    context = browser.new_context(bypass_csp=True, color_scheme=scheme)  # type: ignore[arg-type]
    try:
        page = context.new_page()
        page.goto(url)
        if ready:
            page.locator(ready).first.wait_for(timeout=20_000)
        draw_all(page)
        for details in page.locator("details").all():  # what opens is checked too
            details.evaluate("d => { d.open = true; }")
        page.add_script_tag(path=str(AXE))
        found: list[dict[str, Any]] = page.evaluate(
            "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
        )
        return [
            {
                "id": v["id"],
                "impact": v["impact"],
                "help": v["help"],
                "nodes": [n["target"] for n in v["nodes"]][:5],
            }
            for v in found
        ]
    finally:
        context.close()


PAGES = {
    "home": "",
    "kernel": "kernels/liger-layer-norm/",
    "run": SEED_RUN,
    "gpu": "gpus/liger-bench-nvidia-h100-80gb-hbm3/",
    "kernels": "kernels/",
    "methodology": "methodology/",
    "data-quality": "data-quality/",
}


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("name", sorted(PAGES))
def test_no_axe_violations(
    browser: Browser,  # noqa: F811
    rich_url: str,  # noqa: F811
    name: str,
    scheme: str,
) -> None:
    found = violations(browser, f"{rich_url}/{PAGES[name]}", scheme)
    assert found == [], json.dumps(found, indent=1)


HISTORY_PAGES = {
    "regressions": "regressions/",
    "history of a GPU": "kernels/liger-layer-norm/history/liger-bench-nvidia-h100-80gb-hbm3/",
}


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("name", sorted(HISTORY_PAGES))
def test_no_axe_violations_on_the_history_pages(
    browser: Browser,  # noqa: F811
    history_url: str,  # noqa: F811
    name: str,
    scheme: str,
) -> None:
    found = violations(browser, f"{history_url}/{HISTORY_PAGES[name]}", scheme)
    assert found == [], json.dumps(found, indent=1)


def test_no_axe_violations_on_a_history_chart(
    browser: Browser,  # noqa: F811
    history_url: str,  # noqa: F811
) -> None:
    """The shape's page, reached from the GPU's (its path carries the shape's digest tag)."""
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{history_url}/{HISTORY_PAGES['history of a GPU']}")
        href = page.locator("a[href*='hidden4096']").first.get_attribute("href")
    finally:
        context.close()
    assert href
    for scheme in ("light", "dark"):
        found = violations(browser, f"{history_url}{href}", scheme)
        assert found == [], json.dumps(found, indent=1)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_axe_violations_on_the_changes_page(
    browser: Browser,  # noqa: F811
    preview_url: str,  # noqa: F811
    scheme: str,
) -> None:
    found = violations(browser, f"{preview_url}/changes/", scheme)
    assert found == [], json.dumps(found, indent=1)


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize(
    ("query", "ready"),
    [
        (f"?runs={SEED_RUN[5:-1]},{SEED_COMPETITOR}", "#compare-table tbody"),  # comparable
        (f"?runs={SEED_RUN[5:-1]},72c2ce1064436af8", "#compare-table tbody"),  # across GPUs
        ("?runs=nonsense", "#compare-status p"),  # refused
    ],
    ids=["comparable", "not-comparable", "refused"],
)
def test_no_axe_violations_on_the_compare_page(
    browser: Browser,  # noqa: F811
    rich_url: str,  # noqa: F811
    query: str,
    ready: str,
    scheme: str,
) -> None:
    found = violations(browser, f"{rich_url}/compare/{query}", scheme, ready)
    assert found == [], json.dumps(found, indent=1)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_axe_violations_on_the_search_page(
    browser: Browser,  # noqa: F811
    base_url: str,  # noqa: F811
    scheme: str,
) -> None:
    found = violations(browser, f"{base_url}/search/?q=layernorm", scheme, ".pagefind-ui__result")
    assert found == [], json.dumps(found, indent=1)
