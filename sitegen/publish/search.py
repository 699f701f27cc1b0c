"""The search index: Pagefind's, made from the built pages before they are published.

Pagefind is the binary of the `pagefind-bin` wheel (the `search` extra, its version pinned):
its command line, run over trees of hard links to the site's pages (the pages only: no previous
index, no work folder), one tree per part of at most PART_PAGES pages in path order. Pagefind's
memory grows with the number of pages one run indexes, hardly with their size, so parts indexed
one after another bound it; `pagefind_format.merge_parts` joins them into the one index the
search page loads, as one run over every page would have made it, and in the same pass makes
its bytes follow the pages alone: Pagefind numbers the pages in the order it walks them, the
file system's listing order (`walk_for_files` in its src/lib.rs, 1.5.2), and orders filters by
a seeded hash map. Which pages are indexed, and with which filters, the pages say
(`data-pagefind-body`, `data-pagefind-filter`: templates/_base.html; a run page only its title
and what was measured, and a replaced run's page nothing: run.html); only those are handed to
Pagefind, which would spend a parse on each of the others.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from importlib import metadata
from pathlib import Path
from typing import Any, NamedTuple

from sitegen.publish.pagefind_format import ENTRY, merge_parts
from sitegen.publish.write import Data
from sitegen.render.render import Output
from sitegen.site.records import LazyPage, Page

FOLDER = "pagefind"  # the index's folder in the site: /pagefind/
# What the index leaves out of the pages' text (selectors of templates/*.html): numbers, chart
# summaries, the contents list, digests and their canonical JSON, other pages' run tables, and
# on a run page its values, its competitors and its protocol's and environment's facts (their
# own pages are indexed): what would match every search, and what made indexing slow.
# The pass and GPU headings of kernel pages are left out too: a sub-result runs from one
# heading with an id to the next, so a GPU's heading would count for the chart above it; each
# chart's own heading names its kernel, GPU and pass.
EXCLUDED = (
    "thead",  # column names: every table's
    "td.num",
    ".chart",
    "noscript",
    "nav.toc",
    ".kicker",
    ".identity",
    "table.runs",
    "section.pass > h2",
    "section.gpu > h3",
    'h2[id$="-heading"]',
    ".headline",
    ".ranking-here",
    ".columns > div",
)
# Pages per index part: Pagefind holds every page of a part in memory at once (docs/performance.md).
PART_PAGES = 16_000
# Pagefind reads its configuration from these too: never from the environment of the build.
_CONFIG_FILES = ("pagefind.toml", "pagefind.yml", "pagefind.yaml", "pagefind.json")


class SearchIndex(NamedTuple):
    pages: int  # pages indexed
    files: int  # files of the index
    size: int  # their bytes
    seconds: float  # what indexing took


class SearchError(Exception):
    """Pagefind is installed but could not index the site."""

    def __str__(self) -> str:
        return f"search index: {self.args[0]}; hint: --no-search builds the site without it"


def pagefind_binary() -> Path | None:
    """The binary of the installed `pagefind-bin` wheel; None when it is not installed."""
    try:
        from pagefind_bin import get_executable  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        return None
    try:
        found: Path = get_executable()
    except FileNotFoundError:
        return None
    return found


def pagefind_version() -> str | None:
    try:
        return metadata.version("pagefind-bin")
    except metadata.PackageNotFoundError:
        return None


def index_search(
    site: Path, into: Path, work: Path, binary: Path, marked: list[str] | None = None
) -> SearchIndex:
    """Index the HTML pages under `site` into the folder `into`. `work` is a folder that does
    not exist yet, on the file system of `site` (the pages' links go there); it is removed.
    `marked`: the pages carrying the body marker in path order, as `MarkedPages` noted them
    while they were written; None: found by reading every page (`indexed_pages`)."""
    started = time.perf_counter()
    found = indexed_pages(site, marked)
    parts = [found[at : at + PART_PAGES] for at in range(0, len(found), PART_PAGES)] or [[]]
    outputs = [work / f"index-{number}" for number in range(len(parts))]
    try:
        for number, (part, output) in enumerate(zip(parts, outputs, strict=True)):
            pages = work / f"site-{number}"
            link_pages(site, pages, part)
            _run_pagefind(binary, pages, output, work)
            shutil.rmtree(pages, ignore_errors=True)
        try:
            # One part or many: its bytes made to follow the pages, not the listing order.
            merge_parts(outputs, into)
        except (OSError, ValueError, KeyError, TypeError, IndexError) as error:
            raise SearchError(f"the index pagefind wrote: {error}") from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    sizes = [
        os.lstat(os.path.join(root, name)).st_size
        for root, _, names in os.walk(into)
        for name in names
    ]
    return SearchIndex(_page_count(into), len(sizes), sum(sizes), time.perf_counter() - started)


def _run_pagefind(binary: Path, pages: Path, output: Path, work: Path) -> None:
    command = [
        str(binary),
        "--site",
        str(pages),
        "--output-path",
        str(output),
        "--silent",
        *(part for selector in EXCLUDED for part in ("--exclude-selectors", selector)),
    ]
    # Run from the work folder, with no PAGEFIND_ variable: nothing of the machine's.
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PAGEFIND_")}
    for name in _CONFIG_FILES:
        if (work / name).exists():
            raise SearchError(f"{work / name}: a Pagefind configuration file in the way")
    result = subprocess.run(
        command, cwd=work, env=environment, capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        said = (result.stderr or result.stdout).strip().splitlines()[-3:]
        raise SearchError(f"pagefind exited {result.returncode}: " + " / ".join(said))


def html_pages(site: Path) -> list[str]:
    """Every `.html` file under `site`, relative, in path order: not a previous index, nor work
    folders (`.…`), which are never pages."""
    found: list[str] = []
    for root, folders, files in os.walk(site):
        relative = os.path.relpath(root, site)
        folders[:] = [f for f in folders if not f.startswith(".")]
        if relative == ".":
            folders[:] = [f for f in folders if f != FOLDER]
        prefix = "" if relative == "." else relative + "/"
        found.extend(prefix + name for name in files if name.endswith(".html"))
    return sorted(found)


# Pagefind's own marker: once one page carries it, a page without it is not indexed.
BODY_MARKER = b"data-pagefind-body"


def indexed_pages(site: Path, marked: list[str] | None = None) -> list[str]:
    """The pages Pagefind would index (`html_pages` with the marker; `marked`, when the render
    noted them), so that it is handed only those: a page it would skip still costs it a parse
    (a kernel's history pages, a replaced run's page). As Pagefind does, every page when none
    has the marker."""
    if marked is None:
        found = html_pages(site)
        return [path for path in found if BODY_MARKER in (site / path).read_bytes()] or found
    return marked or html_pages(site)


class MarkedPages(Output):
    """Another output, noting the HTML files that carry BODY_MARKER as their bytes pass on
    their way to the writer, in whichever process renders them: the pages `indexed_pages`
    would find, without reading ~100,000 pages back (3.4 s of the real catalog's build)."""

    def __init__(self, inner: Output) -> None:
        self._inner = inner
        self._noted: list[str] = []
        self.marked: list[str] = []

    def skip(self, page: Page | LazyPage) -> bool:
        return self._inner.skip(page)

    def write(self, path: str, data: Data, key: str | None = None) -> None:
        if path.endswith(".html") and BODY_MARKER in data:
            self._noted.append(path)
        self._inner.write(path, data, key)

    def records(self) -> list[Any]:
        noted, self._noted = self._noted, []
        return [noted, self._inner.records()]

    def absorb(self, records: list[Any]) -> None:
        noted, inner = records
        self.marked += noted
        self._inner.absorb(inner)

    def finish(self) -> list[str]:
        """Every page noted, in path order, once rendering is over (this process's own too)."""
        self.absorb(self.records())
        return sorted(self.marked)


def link_pages(site: Path, pages: Path, paths: list[str]) -> int:
    """Put each of `paths` (relative, in path order) under `site` into `pages`, folders and
    files in that order, as what Pagefind reads of it: its `index_copy` where it has one, else
    a hard link (a copy where the file system has no hard links); how many."""
    made: set[str] = set()
    for path in paths:
        folder = os.path.dirname(path)
        if folder not in made:
            os.makedirs(pages / folder, exist_ok=True)
            made.add(folder)
        with open(site / path, "rb") as file:
            trimmed = index_copy(file.read())
        if trimmed is not None:
            (pages / path).write_bytes(trimmed)
            continue
        try:
            os.link(site / path, pages / path)
        except OSError:
            shutil.copyfile(site / path, pages / path)
    os.makedirs(pages, exist_ok=True)  # a part of no pages: Pagefind still writes its bundle
    return len(paths)


_ATTRIBUTE = b"data-pagefind"
_TAG_NAME = re.compile(rb"<([a-zA-Z][a-zA-Z0-9]*)")
# Elements with no end tag: one carrying a Pagefind attribute is not cut around.
_VOID = frozenset(b"area base br col embed hr img input link meta source track wbr".split())


def index_copy(page: bytes) -> bytes | None:
    """The page as Pagefind reads it, when that is provably less: its head verbatim, then, in
    order, only the body's elements that carry a Pagefind attribute (`data-pagefind-body`, the
    hidden block of filters and meta), each whole. Pagefind parses every byte of a page, ~40 %
    of its time on a run page (11 KB, of which it indexes ~3), yet takes nothing from the rest
    once a page has a body marker: the same words, locations, filters and fragments (the
    index is byte-identical either way, on the real catalog as docs/performance.md measured
    it and on the fixture site as tests/publish/test_search.py checks it).
    None, for the page as it is, where the body has no marker, an element holding the
    attribute cannot be cut out surely (a void element, an element of its own name nested in
    it, an attribute-like text outside a tag) or no image may be left out (Pagefind's default
    image meta is a page's first `<img>`)."""
    body = page.find(b"<body")
    opened = page.find(b">", body)
    if body < 0 or opened < 0 or page.find(BODY_MARKER, body) < 0:
        return None
    kept = [page[: opened + 1]]  # doctype, head and the <body> tag
    position = body + 1
    while (found := page.find(_ATTRIBUTE, position)) >= 0:
        start = page.rfind(b"<", position, found)
        if start < 0 or b">" in page[start:found]:
            return None  # the words outside a tag: not an attribute
        name = _TAG_NAME.match(page, start)
        if name is None or name.group(1).lower() in _VOID:
            return None
        tag = name.group(1)
        end = page.find(b"</" + tag + b">", found)
        if end < 0:
            return None
        end += len(tag) + 3
        element = page[start:end]
        if (
            re.search(rb"<" + tag + rb"[\s>/]", element[1:])
            or page.find(b"<img", position, start) >= 0
        ):
            return None  # nested: its end is not the first one found; an image left out
        kept.append(element)
        position = end
    if page.find(b"<img", position) >= 0:
        return None
    kept.append(b"</body></html>")
    return b"\n".join(kept)


def _page_count(into: Path) -> int:
    try:
        entry = json.loads((into / ENTRY).read_text(encoding="utf-8"))
        return sum(int(language["page_count"]) for language in entry["languages"].values())
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise SearchError(f"pagefind wrote no readable {ENTRY}: {error}") from None
