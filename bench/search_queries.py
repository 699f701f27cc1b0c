"""What a built site's search finds: each query run through the site's own Pagefind index in
headless Chromium, with the search page's ranking (templates/assets/search.js), counted and its
first results listed. Used to compare two builds' indexes (bench/results/issue-38-search-*.md).

    .venv/bin/python bench/search_queries.py SITE [--before OLD.json] --output NAME

SITE: a folder `sitegen build` wrote (with its search index). `--before`: an earlier output of
this script, whose "after" results become this one's "before" column.
"""

from __future__ import annotations

import argparse
import functools
import json
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

CHROMIUM = "/usr/bin/chromium"
# The two, GPU MODE leaderboards, submission authors, and others a kernel engineer types.
QUERIES = (
    "rmsnorm h100 bf16",
    "cross entropy h200",
    "trimul",
    "amd-moe-mxfp4",
    "Barry_zhang",
    "TTT",
    "layernorm",
    "liger",
    "h100",
    "fused linear cross entropy",
    "submission 32411",
    "b200 gemm",
    "flashinfer",
    "swiglu backward",
    "geglu fp32",
)
TOP = 5
# As search.js configures Pagefind (its `ranking`), so that the order is the search page's.
SEARCH = """async ([queries, top]) => {
  const pagefind = await import("/pagefind/pagefind.js");
  await pagefind.options({
    ranking: {metaWeights: {title: 0.5}, pageLength: 0.2, termSaturation: 2},
  });
  const found = {};
  for (const query of queries) {
    const search = await pagefind.search(query);
    const first = await Promise.all(search.results.slice(0, top).map((r) => r.data()));
    found[query] = {
      count: search.results.length,
      top: first.map((d) => ({url: d.url, title: d.meta.title || ""})),
    };
  }
  return found;
}"""


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """Not a line per fragment fetched."""


def searched(site: Path) -> dict[str, Any]:
    handler = functools.partial(QuietHandler, directory=str(site))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM)
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{server.server_port}/search/")
            found: dict[str, Any] = page.evaluate(SEARCH, [list(QUERIES), TOP])
            browser.close()
    finally:
        server.shutdown()
    return found


def table(before: dict[str, Any] | None, after: dict[str, Any]) -> str:
    lines = [
        "| query | results before | after | top 5 after |",
        "|---|---:|---:|---|",
    ]
    for query in QUERIES:
        was = f"{before[query]['count']:,}" if before and query in before else "—"
        now = after[query]
        top = "<br>".join(hit["url"] for hit in now["top"])
        lines.append(f"| `{query}` | {was} | {now['count']:,} | {top} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path)
    parser.add_argument("--before", type=Path)
    parser.add_argument("--output", type=Path, required=True, help="writes NAME.json, NAME.md")
    args = parser.parse_args()
    before = json.loads(args.before.read_text())["after"] if args.before else None
    after = searched(args.site)
    result = {"before": before, "after": after}
    args.output.with_suffix(".json").write_text(json.dumps(result, indent=1) + "\n")
    args.output.with_suffix(".md").write_text(table(before, after))
    print(table(before, after))


if __name__ == "__main__":
    main()
