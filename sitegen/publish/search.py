"""The search index: Pagefind's, made from the built pages before they are published.

Pagefind is the binary of the `pagefind-bin` wheel (the `search` extra, its version pinned):
its command line, run over trees of the pages it indexes (each page's `index_copy`: no
previous index, no work folder), one tree per part of at most PART_PAGES pages. A full build
hands the pages over as they are rendered (`IndexedAsRendered`): a part is indexed while the
rest render, one part at a time. Pagefind's memory grows with the number of pages one run
indexes, hardly with their size, so parts bound it; `pagefind_format.merge_parts` joins them
into the one index the search page loads, as one run over every page would have made it, and
in the same pass makes its bytes follow the pages alone, however they were cut into parts:
Pagefind numbers the pages in the order it walks them, the file system's listing order
(`walk_for_files` in its src/lib.rs, 1.5.2), and orders filters by a seeded hash map. Which
pages are indexed, and with which filters, the pages say (`data-pagefind-body`,
`data-pagefind-filter`: templates/_base.html; a run page only its title and what was
measured, and a replaced run's page nothing: run.html); only those are handed to Pagefind,
which would spend a parse on each of the others. `index_search` indexes a built tree (an
incremental build's patched site) the same way, its parts in path order.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Collection, Iterator, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any, NamedTuple

from sitegen.content.walk import StatKey
from sitegen.publish.errors import WriteError
from sitegen.publish.pagefind_format import (
    ENTRY,
    PageKey,
    fragment_keys,
    merge_parts,
    splice_index,
)
from sitegen.publish.write import Data
from sitegen.render.render import Output
from sitegen.site.records import LazyPage, Page

FOLDER = "pagefind"  # the index's folder in the site: /pagefind/
WORK = ".search-pages"  # the work folder beside it while the index is made: never published
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
# Pages per index part: Pagefind holds every page of a part in memory at once, and a full build
# indexes a part while pages render, so its memory adds to theirs (docs/performance.md).
PART_PAGES = 8_000
# Pagefind reads its configuration from these too: never from the environment of the build.
_CONFIG_FILES = ("pagefind.toml", "pagefind.yml", "pagefind.yaml", "pagefind.json")


# What the merge of an index Pagefind wrote may raise: the index not as expected (read or
# written by one of its processes), a file system that refuses, a merge process that died.
MERGE_ERRORS = (OSError, ValueError, KeyError, TypeError, IndexError, RuntimeError)


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


def index_search(site: Path, into: Path, work: Path, binary: Path) -> SearchIndex:
    """Index the HTML pages under `site` into the folder `into`, the pages to index found by
    reading every page (`indexed_pages`). `work` is a folder that does not exist yet, on the
    file system of `site` (the pages' links go there); it is removed."""
    started = time.perf_counter()
    found = indexed_pages(site)
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
        except MERGE_ERRORS as error:
            raise SearchError(f"the index pagefind wrote: {error}") from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return indexed_now(into, time.perf_counter() - started)


def indexed_now(into: Path, seconds: float, held: HeldIndexSizes | None = None) -> SearchIndex:
    """What the index in the folder `into` holds, made in `seconds`; its files' sizes `held`
    where they are (else the folder is walked)."""
    sizes = _sizes(into) if held is None else (held.files, held.size)
    return SearchIndex(_page_count(into), *sizes, seconds)


class HeldIndexSizes(NamedTuple):
    """The index's files in a held output tree (`output_tree`'s entries, of a site whose index
    is its FOLDER): how many, their bytes, and the tree they were summed from, which is
    patched in place (`patched_tree`) as these are (`patched`)."""

    tree: Mapping[str, StatKey]
    files: int
    size: int

    @classmethod
    def of(cls, tree: Mapping[str, StatKey]) -> HeldIndexSizes:
        sizes = [key[1] for path, key in tree.items() if path.startswith(f"{FOLDER}/")]
        return cls(tree, len(sizes), sum(sizes))

    def patched(self, before: list[StatKey | None], after: list[StatKey | None]) -> HeldIndexSizes:
        """These sizes once the index's files whose entries were `before` are `after`."""
        files = self.files + sum(k is not None for k in after) - sum(k is not None for k in before)
        size = self.size + sum(k[1] for k in after if k) - sum(k[1] for k in before if k)
        return HeldIndexSizes(self.tree, files, size)


def _run_pagefind(binary: Path, pages: Path, output: Path, work: Path) -> None:
    running = _start_pagefind(binary, pages, output, work, 0)
    code = running.wait()
    if code != 0:
        raise SearchError(_pagefind_failure(code, work / "pagefind-0.log"))
    (work / "pagefind-0.log").unlink()


def _start_pagefind(
    binary: Path, pages: Path, output: Path, work: Path, number: int
) -> subprocess.Popen[bytes]:
    """Pagefind indexing the tree `pages` into `output`, started; what it says goes to
    `work`/pagefind-`number`.log."""
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
    with open(work / f"pagefind-{number}.log", "wb") as log:
        return subprocess.Popen(
            command, cwd=work, env=environment, stdin=subprocess.DEVNULL, stdout=log, stderr=log
        )


def _pagefind_failure(code: int, log: Path) -> str:
    """What a Pagefind that exited `code` said last, in one line."""
    try:
        said = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-3:]
    except OSError:
        said = []
    return f"pagefind exited {code}: " + " / ".join(said)


def _sizes(into: Path) -> tuple[int, int]:
    """The index's files: how many, and their bytes."""
    sizes = [
        os.lstat(os.path.join(root, name)).st_size
        for root, _, names in os.walk(into)
        for name in names
    ]
    return len(sizes), sum(sizes)


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


def indexed_pages(site: Path) -> list[str]:
    """The pages Pagefind would index (`html_pages` with the marker), so that it is handed
    only those: a page it would skip still costs it a parse (a kernel's history pages, a
    replaced run's page). As Pagefind does, every page when none has the marker."""
    found = html_pages(site)
    return [path for path in found if BODY_MARKER in (site / path).read_bytes()] or found


class IndexedAsRendered(Output):
    """Another output, handing Pagefind the pages it indexes while the rest still render:
    each HTML file carrying BODY_MARKER is noted on its way to the writer, in whichever
    process renders it, and its `index_copy` written into the work folder; once PART_PAGES
    of them are noted, the parent moves them into a part's tree and starts Pagefind on it,
    one part at a time, beside the render (Pagefind keeps only ~1.5 of the 2 cores busy, and
    the render's own last chunks leave one idle). `finish` indexes what is left and merges
    the parts; parts in the order pages were rendered, not path order, give the same bytes:
    the merge numbers pages by URL. A context manager: leaving it stops a Pagefind still
    running and removes the work folder."""

    def __init__(self, inner: Output, site: Path, binary: Path) -> None:
        self._inner = inner
        self._site = site
        self._binary = binary
        self._work = site / WORK
        self._copies = self._work / "copies"  # flat: each page's copy named `_flat(path)`
        self._noted: list[str] = []  # this process's marked pages since `records`
        self._pending: list[str] = []  # the parent's: noted, not yet in a part
        self._parts: list[Path] = []  # the parent's: each started part's index folder
        self._running: subprocess.Popen[bytes] | None = None
        self._failure: str | None = None
        self._keys: dict[str, PageKey] = {}  # the parent's: `fragment_keys` of parts ended
        self.marked: list[str] = []  # every page noted, once `finish` has run

    def __enter__(self) -> IndexedAsRendered:
        self._copies.mkdir(parents=True)
        return self

    def __exit__(self, *_: object) -> None:
        if self._running is not None and self._running.poll() is None:
            self._running.kill()
            self._running.wait()
        self._running = None
        shutil.rmtree(self._work, ignore_errors=True)

    def skip(self, page: Page | LazyPage) -> bool:
        return self._inner.skip(page)

    def write(self, path: str, data: Data, key: str | None = None) -> None:
        self._inner.write(path, data, key)
        if path.endswith(".html"):
            read = what_pagefind_reads(bytes(data))  # the page's bytes object: not copied
            if read is not None:
                self._copy(path, read)
                self._noted.append(path)

    def _copy(self, path: str, read: bytes) -> None:
        target = self._copies / _flat(path)
        try:
            with open(target, "xb") as file:
                file.write(read)
        except OSError as error:
            raise WriteError.of(error, target) from None

    def records(self) -> list[Any]:
        noted, self._noted = self._noted, []
        return [noted, self._inner.records()]

    def absorb(self, records: list[Any]) -> None:
        """In the parent: a worker's pages, and this process's own so far; a part started
        when enough are waiting and Pagefind is not busy."""
        noted, inner = records
        self._inner.absorb(inner)
        self._pending += noted
        self._pending += self._noted
        self.marked += noted + self._noted
        self._noted = []
        if self._idle() and self._failure is None and len(self._pending) >= PART_PAGES:
            self._start_next()

    def rendered(self) -> None:
        """Every page is written: what is left starts now if Pagefind is free, beside the
        files that are not pages."""
        self.absorb([[], []])
        if self._idle() and self._failure is None and self._pending:
            self._start_next()

    def _idle(self) -> bool:
        """Whether no part is being indexed; a part that failed is remembered."""
        if self._running is None:
            return True
        if self._running.poll() is None:
            return False
        self._ended(self._running)
        return True

    def _start_next(self) -> None:
        """The next PART_PAGES pages waiting, indexed from now on."""
        self._start(self._pending[:PART_PAGES])
        del self._pending[:PART_PAGES]

    def _start(self, pages: list[str]) -> None:
        number = len(self._parts)
        tree = self._work / f"site-{number}"
        for path in _with_folders(tree, pages):
            os.rename(self._copies / _flat(path), tree / path)
        os.makedirs(tree, exist_ok=True)
        output = self._work / f"index-{number}"
        self._parts.append(output)
        self._running = _start_pagefind(self._binary, tree, output, self._work, number)

    def _ended(self, running: subprocess.Popen[bytes]) -> None:
        self._running = None
        code = running.wait()
        number = len(self._parts) - 1
        shutil.rmtree(self._work / f"site-{number}", ignore_errors=True)
        if code != 0 and self._failure is None:
            self._failure = _pagefind_failure(code, self._work / f"pagefind-{number}.log")
        elif code == 0:
            # Read now, beside the render, not by the merge after it (~0.8 s at 25k pages).
            with contextlib.suppress(*MERGE_ERRORS):  # the merge reads it again, and says why
                self._keys.update(fragment_keys(self._parts[number]))

    def finish(self, into: Path) -> SearchIndex:
        """Index the pages not yet indexed, each part after the one before, then merge every
        part into the folder `into`: the site's index, as `index_search` makes it."""
        started = time.perf_counter()
        self.absorb([[], []])
        self.marked.sort()
        if not self.marked:  # no page carries the marker: Pagefind indexes every page
            self.__exit__()
            return index_search(self._site, into, self._work, self._binary)
        while self._pending or self._running is not None:
            if self._running is not None:
                self._ended(self._running)
            if self._pending and self._failure is None:
                self._start_next()
            elif self._running is None:
                break
        if self._failure is not None:
            raise SearchError(self._failure)
        try:
            merge_parts(self._parts, into, self._keys)
        except MERGE_ERRORS as error:
            raise SearchError(f"the index pagefind wrote: {error}") from None
        return indexed_now(into, time.perf_counter() - started)


def spliced_index(
    site: Path, staged: Path, deleted: Collection[str], binary: Path
) -> list[str] | None:
    """The search index of an incremental build, changed rather than made again: `site` is
    the output as the last build left it, `staged` the tree of the files this build changes
    (to be moved over it) and `deleted` the paths it removes. Pagefind indexes only the pages
    whose indexed copy changed (~10 a changed run, not ~25,000), in two trees at once: their
    new versions, and their published ones (which pages and words of the index they were);
    `splice_index` puts the ones in place of the others; its new files are staged under
    `staged`/FOLDER. The paths (relative to `site`) of the index files to delete, or None
    where the index is to be made again whole: none yet, or one this cannot change
    (`splice_index`), or a site whose pages do not carry BODY_MARKER (then Pagefind indexes
    every page), or where more than PART_PAGES pages changed (a template's change), which the
    whole index's parts bound Pagefind's memory for; or where the index could not be read or
    changed (made again whole, what is wrong is said then). The index is not changed, and
    nothing is staged, where no indexed page changed. `IndexSplice` in one step."""
    with IndexSplice(site, staged, binary) as splice:
        return splice.finished(deleted)


class IndexSplice:
    """`spliced_index` in two steps, so that Pagefind indexes the changed pages beside the
    rest of an incremental build (~0.1 s of its ~1 s on the real catalog): `start` once the
    pages are staged and the paths deleted known, which starts Pagefind on the pages whose
    indexed copy changed; `finished` at the end. Where the pages staged or deleted are not
    those started with, all of it is done again. A context manager: leaving it stops a
    Pagefind still running and removes the work folder."""

    def __init__(self, site: Path, staged: Path, binary: Path) -> None:
        self._site, self._staged, self._binary = site, staged, binary
        self._work = staged / WORK
        self._running: dict[int, subprocess.Popen[bytes]] = {}  # by the number of its log
        self._pages: tuple[list[str], list[str]] | None = None  # staged and deleted, started
        self._marked_before = False
        self._put_in: list[tuple[str, bytes]] = []  # their new versions, as Pagefind reads them
        self._taken_out: list[tuple[str, bytes]] = []  # and their published ones
        self._whole = False  # the index is to be made again whole (answer None)

    def __enter__(self) -> IndexSplice:
        return self

    def __exit__(self, *_: object) -> None:
        self._stop()
        shutil.rmtree(self._work, ignore_errors=True)

    def start(self, deleted: Collection[str]) -> None:
        """Pagefind started on the pages staged, and those of `deleted`, whose indexed copy
        changed."""
        self._stop()
        shutil.rmtree(self._work, ignore_errors=True)
        self._pages = html_pages(self._staged), sorted(p for p in deleted if p.endswith(".html"))
        self._whole = not self._compared(*self._pages)
        if not self._whole and self._marked_before and (self._put_in or self._taken_out):
            for number, (tree, copies, output) in enumerate(self._trees()):
                if copies:
                    pages = _tree(self._work / tree, copies)
                    self._running[number] = _start_pagefind(
                        self._binary, pages, output, self._work, number
                    )

    def _compared(self, staged: list[str], deleted: list[str]) -> bool:
        """The pages' staged copies compared with their published ones, each that differs
        noted; False where the index cannot be spliced: no index yet, too many pages staged,
        or a published page that is not a file."""
        self._marked_before = False
        self._put_in, self._taken_out = [], []
        if not (self._site / FOLDER / ENTRY).is_file() or len(staged) > PART_PAGES:
            return False
        for path in [*staged, *deleted]:
            new = _indexed_copy(self._staged / path)
            try:
                old = _indexed_copy(self._site / path)
            except OSError:  # not a file, or a link: the patch refuses it, in one line
                return False
            self._marked_before |= old is not None
            if old == new:
                continue
            if new is not None:
                self._put_in.append((path, new))
            if old is not None:
                self._taken_out.append((path, old))
        return True

    def _trees(self) -> list[tuple[str, list[tuple[str, bytes]], Path]]:
        """The two trees Pagefind indexes: the new versions, and the published ones, indexed
        again beside them: which page of the index each was, and its words (those chunks are
        the ones to make again), Pagefind says."""
        return [
            ("site", self._put_in, self._work / "index"),
            ("site-published", self._taken_out, self._work / "index-published"),
        ]

    def _stop(self) -> None:
        for running in self._running.values():
            if running.poll() is None:
                running.kill()
            running.wait()
        self._running = {}

    def finished(self, deleted: Collection[str]) -> list[str] | None:
        """`spliced_index`'s answer, `deleted` the paths the build removes."""
        now = html_pages(self._staged), sorted(p for p in deleted if p.endswith(".html"))
        if now != self._pages:  # not started, or a page staged or deleted since
            self.start(deleted)
        if self._whole:
            return None
        if not self._put_in and not self._taken_out:
            return []
        if not self._marked_before:  # the old site may be one whose every page was indexed
            return None
        codes = {number: running.wait() for number, running in self._running.items()}
        for number, code in codes.items():
            if code != 0:
                raise SearchError(_pagefind_failure(code, self._work / f"pagefind-{number}.log"))
        (_, _, part), (_, _, old_part) = self._trees()
        try:
            gone = splice_index(
                self._site / FOLDER,
                part if self._put_in else None,
                old_part if self._taken_out else None,
                self._staged / FOLDER,
            )
        except MERGE_ERRORS:  # IndexFormatError among them
            shutil.rmtree(self._staged / FOLDER, ignore_errors=True)
            return None
        return [f"{FOLDER}/{path}" for path in gone]


def _tree(tree: Path, copies: list[tuple[str, bytes]]) -> Path:
    """The folder `tree`, the `copies` (path, bytes) written under it."""
    for path, copy in copies:
        try:
            (tree / path).parent.mkdir(parents=True, exist_ok=True)
            (tree / path).write_bytes(copy)
        except OSError as error:
            raise WriteError.of(error, tree / path) from None
    return tree


def _indexed_copy(path: Path) -> bytes | None:
    """`what_pagefind_reads` of the page at `path`; None for no page."""
    try:
        # Never through a link: the output is the last build's, and so are its pages.
        with open(os.open(path, os.O_RDONLY | os.O_NOFOLLOW), "rb") as file:
            return what_pagefind_reads(file.read())
    except FileNotFoundError:
        return None


def what_pagefind_reads(page: bytes) -> bytes | None:
    """What Pagefind reads of `page` (its `index_copy`, else the page), if it carries
    BODY_MARKER; None for a page it does not index."""
    if BODY_MARKER not in page:
        return None
    return index_copy(page) or page


def _flat(path: str) -> str:
    """A file name of its own for the page at `path`: the copies wait in one folder, not in a
    tree of ~25,000 folders (each made, then removed as the build ends: ~0.5 s of it on the
    real catalog, when nothing else is left to do)."""
    name = path.replace("%", "%25").replace("/", "%2F")
    if len(name.encode()) > _FLAT_NAME_BYTES:  # a file name's limit is 255 bytes
        name = hashlib.sha256(path.encode()).hexdigest()
    return name


_FLAT_NAME_BYTES = 200


def _with_folders(root: Path, paths: list[str]) -> Iterator[str]:
    """Each of `paths`, once its folder under `root` exists (each folder made once)."""
    made: set[str] = set()
    for path in paths:
        folder = os.path.dirname(path)
        if folder not in made:
            os.makedirs(root / folder, exist_ok=True)
            made.add(folder)
        yield path


def link_pages(site: Path, pages: Path, paths: list[str]) -> int:
    """Put each of `paths` (relative, in path order) under `site` into `pages`, folders and
    files in that order, as what Pagefind reads of it: its `index_copy` where it has one, else
    a hard link (a copy where the file system has no hard links); how many."""
    for path in _with_folders(pages, paths):
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
        kept.append(_without_unindexed(element))
        position = end
    if page.find(b"<img", position) >= 0:
        return None
    kept.append(b"</body></html>")
    return b"\n".join(kept)


# What a marked element may hold whose words Pagefind never takes, cut from its copy: a list
# page's run table (EXCLUDED's table.runs: ~70 % of the bytes of a GPU, protocol or project
# page) and a chart's JSON (a script's text is never indexed: ~a third of a kernel page).
# Parsing them cost Pagefind over half its time on the pages that are not runs'. Neither nests
# an element of its own name (a script's JSON escapes `<`: environment.py's `script_json`).
# Each as (its opening up to its attributes, its tag as a nested one would open, its end).
_UNINDEXED = (
    (b'<table class="runs">', b"<table", b"</table>"),
    (b"<script", b"<script", b"</script>"),
)


def _without_unindexed(element: bytes) -> bytes:
    """`element` without the _UNINDEXED elements it holds that `_surely_unindexed`."""
    for opening, tag, closing in _UNINDEXED:
        pieces: list[bytes] = []
        position = 0
        while (start := element.find(opening, position)) >= 0:
            end = element.find(closing, start)
            if end < 0:
                break
            end += len(closing)
            if _surely_unindexed(element, start, end, opening, tag):
                pieces.append(element[position:start])
                position = end
            else:  # kept: what it holds is looked at in turn
                pieces.append(element[position : start + 1])
                position = start + 1
        if pieces:
            element = b"".join(pieces) + element[position:]
    return element


def _surely_unindexed(element: bytes, start: int, end: int, opening: bytes, tag: bytes) -> bool:
    """Whether cutting `element[start:end]` surely changes nothing Pagefind takes: it is one
    whole element (its tag's name ends after `opening`; no `tag` nested in it), holds no
    Pagefind attribute and no image, and has whitespace on one side, so the words around stay
    apart."""
    cut = element[start:end]
    return (
        (opening.endswith(b">") or cut[len(opening) : len(opening) + 1] in (b">", b" "))
        and cut.find(tag, 1) < 0
        and _ATTRIBUTE not in cut
        and b"<img" not in cut
        and (element[start - 1 : start].isspace() or element[end : end + 1].isspace())
    )


def _page_count(into: Path) -> int:
    try:
        entry = json.loads((into / ENTRY).read_text(encoding="utf-8"))
        return sum(int(language["page_count"]) for language in entry["languages"].values())
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise SearchError(f"pagefind wrote no readable {ENTRY}: {error}") from None
