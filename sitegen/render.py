"""Turn the site model into bytes: pages through the jinja environment (templating.py),
content-hashed assets, and the machine-readable files, handed to a writer by worker processes.
"""

from __future__ import annotations

import array
import gc
import hashlib
import importlib.util
import itertools
import json
import multiprocessing
import os
import queue
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import orjson
from markupsafe import escape

from sitegen import cpus
from sitegen.load import LoadedResource
from sitegen.manifest import Entry, Manifest, entry_document, manifest_document
from sitegen.pages import LazyPage, Link, Page, Site
from sitegen.resources import KINDS
from sitegen.urls import SECTION_TITLES, SiteUrls, json_twin, output_path

if TYPE_CHECKING:  # jinja is imported with templating.py, when a build first needs it
    from jinja2 import Environment

TEMPLATES_DIR = Path(__file__).resolve().parent.parent / "templates"
ASSETS_DIR = TEMPLATES_DIR / "assets"
NAV_SECTIONS = ("kernels", "gpus", "implementations", "projects", "protocols", "workloads", "runs")
HASH_HEX = 12
MANIFEST = "manifest.json"
EXPORT = "export/resources.jsonl"

SITEMAP_HEAD = (
    '<?xml version="1.0" encoding="utf-8"?>\n'
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
)


class RenderError(Exception):
    """Two outputs claim one path, or an asset is missing: our bug or a broken install."""


class Asset(NamedTuple):
    path: str  # site path, content-hashed: assets/site-0123456789ab.css
    data: bytes


@dataclass(frozen=True)
class SiteChrome:
    """What the layout needs besides the page: navigation, assets, the build date."""

    home: str
    nav: tuple[tuple[str, Link], ...]  # (section, link)
    css: str
    js: str
    plotly: str
    feed: str
    export: str
    schemas: str
    build_date: str | None
    banner: tuple[Link, ...] = ()  # a preview's banner; () in production
    noindex: bool = False  # every page says `<meta name="robots" content="noindex">`
    preview_css: str | None = None  # the banner's and the changes page's styles


def plotly_bundle() -> bytes:
    """plotly.js as shipped inside the plotly Python package (never fetched from a CDN)."""
    spec = importlib.util.find_spec("plotly")
    if spec is None or not spec.submodule_search_locations:
        raise RenderError("the plotly package is not installed: it ships plotly.min.js")
    path = Path(next(iter(spec.submodule_search_locations))) / "package_data" / "plotly.min.js"
    try:
        return path.read_bytes()
    except OSError as error:
        raise RenderError(f"cannot read plotly.min.js from the plotly package: {error}") from error


# Each kind's JSON Schema as the site publishes it (`schemas/<Kind>.json`), shipped with the
# code: made from the models (pages.schema_documents) it cost ~40 ms of every build's CPU.
# tests/test_render.py checks each against the models; `SITEGEN_REGENERATE=1` rewrites them.
SCHEMAS_DIR = Path(__file__).resolve().parent / "schemas"


def schema_files() -> dict[str, bytes]:
    """Each kind's published JSON Schema, by kind name."""
    found = {}
    for kind in sorted(KINDS):
        try:
            found[kind] = (SCHEMAS_DIR / f"{kind}.json").read_bytes()
        except OSError as error:
            raise RenderError(
                f"the JSON Schema of {kind} is missing ({error.strerror}): "
                "SITEGEN_REGENERATE=1 pytest tests/test_render.py writes it"
            ) from None
    return found


def hashed(stem: str, suffix: str, data: bytes) -> Asset:
    return Asset(f"assets/{stem}-{hashlib.sha256(data).hexdigest()[:HASH_HEX]}{suffix}", data)


def site_assets(preview: bool = False) -> dict[str, Asset]:
    """The assets every site has, and the preview styles when the site is a preview."""
    assets = {
        "css": hashed("site", ".css", (ASSETS_DIR / "site.css").read_bytes()),
        "js": hashed("site", ".js", (ASSETS_DIR / "site.js").read_bytes()),
        "plotly": hashed("plotly", ".min.js", plotly_bundle()),
    }
    if preview:
        assets["preview"] = hashed("preview", ".css", (ASSETS_DIR / "preview.css").read_bytes())
    return assets


# --- the whole site -----------------------------------------------------------------------------


# Below this many pages forking costs more than it saves.
PARALLEL_MIN_PAGES = 300
CHUNK_PAGES = 250
MIN_CHUNK_PAGES = 16
# Below this many pages the files that are not pages are rendered beside the page worker (they
# overlap with pages: ~3 % of the real catalog's build); from here up, before it is forked, so
# that the big ones (at 1M runs the export is 1.4 GB) never share the peak with the worker
# (that cost 0.8 GiB of peak memory at 1M).
OVERLAP_EXTRAS_MAX_PAGES = 20_000


class Output:
    """Where rendered files go: this one hands every file to `write(path, bytes)`.

    incremental.py's subclass skips pages whose inputs did not change and passes on only files
    whose bytes did. In a worker process, `records` returns what it noted since last asked,
    and the parent `absorb`s it.
    """

    def __init__(self, write: Callable[[str, bytes], None]) -> None:
        self._write = write

    def skip(self, page: Page | LazyPage) -> bool:
        return False

    def write(
        self, path: str, data: bytes, key: str | None = None, version: str | None = None
    ) -> None:
        """`version`: a name unique to these bytes, if the caller has one (KeptDocuments)."""
        self._write(path, data)

    def records(self) -> list[Any]:
        return []

    def absorb(self, records: list[Any]) -> None:
        pass


def render_into(
    site: Site,
    urls: SiteUrls,
    write: Callable[[str, bytes], None] | Output,
    progress: Callable[[int, int], None] | None,
    environment: Environment,
    workers: int | None = None,
    documents: KeptDocuments | None = None,
) -> int:
    """Render every output file and hand it to `write(path, bytes)`; returns the file count.

    Pages are rendered by `workers` forked processes (default: one per usable CPU, for sites of
    PARALLEL_MIN_PAGES pages or more), each calling `write` itself, so no page is held in
    memory after it is written. Each file's bytes depend only on its page, never on which
    process rendered it. Every path is checked for clashes (the pages' before any is rendered,
    the other files' as each is made): a clash fails the build before its output is used.
    `documents` keeps the manifest and the export for the next build in this process.
    """
    out = write if isinstance(write, Output) else Output(write)
    assets = site_assets(_is_preview(site))
    chrome = _chrome(site, urls, assets)
    paths: set[str] = set()
    for page in site.pages:
        # Every page has a JSON twin but the 404 page, which is not in `pages`.
        twin = isinstance(page, LazyPage) or page.twin is not None
        for path in (output_path(page.path), json_twin(page.path) if twin else None):
            if path is None:
                continue
            if path in paths:
                raise RenderError(f"two outputs would be written to {path}")
            paths.add(path)
    documents = documents or KeptDocuments(keep=False)

    def write_extras() -> None:
        # The files that are not pages, one at a time: the big ones (the export, the
        # manifest) are dropped before the next is made.
        for path, data in _extras(site, urls, chrome, environment, assets, documents):
            if path in paths:
                raise RenderError(f"two outputs would be written to {path}")
            paths.add(path)
            out.write(path, data, version=documents.version(path))
            del data

    templates = {
        name: environment.get_template(name) for name in sorted({p.template for p in site.pages})
    }
    total = len(site.pages)
    count = workers if workers is not None else cpus.usable_cpus()
    if count > 1 and total >= PARALLEL_MIN_PAGES:
        in_memory_order = sorted(site.pages, key=_locality)
        first = write_extras if total < OVERLAP_EXTRAS_MAX_PAGES else None
        if first is None:
            write_extras()
        _render_parallel(tuple(in_memory_order), templates, chrome, out, progress, count, first)
    else:
        write_extras()
        for number, page in enumerate(site.pages, start=1):
            _render_page(page, templates, chrome, out)
            if progress is not None:
                progress(number, total)
    return len(paths)


def _locality(page: Page | LazyPage) -> int:
    return page.locality if isinstance(page, LazyPage) else -1


def _render_page(
    page: Page | LazyPage,
    templates: dict[str, Any],
    chrome: SiteChrome,
    out: Output,
) -> None:
    if out.skip(page):
        return
    key = page.key if isinstance(page, LazyPage) else None
    page = page.built()  # a LazyPage is planned here, in the worker that renders it
    out.write(output_path(page.path), _html(templates[page.template], page, chrome), key)
    if page.twin is not None:
        out.write(json_twin(page.path), _json(page.twin), key)


# What forked workers render: set in the parent just before the fork, inherited, never pickled.
_JOB: tuple[Any, ...] | None = None


def _render_chunk(bounds: tuple[int, int]) -> None:
    assert _JOB is not None
    pages, templates, chrome, out = _JOB
    start, end = bounds
    for page in pages[start:end]:
        try:
            _render_page(page, templates, chrome, out)
        except RenderError:
            raise
        except Exception as error:  # the worker's exception may not pickle: send its words
            message = f"rendering {page.path or '/'}: {type(error).__name__}: {error}"
            raise RenderError(message) from None


class _Chunks:
    """Runs of pages handed out one at a time across processes, from both ends.

    Forked workers take from the front, this process from the back: with pages in memory
    order, each process touches its own stretch of the planned site, so a worker copies only
    the memory of the pages it renders, not nearly all of it. Runs are sized by
    `cpus.next_share`: the last are short, so the processes finish nearly together.
    """

    def __init__(self, context: Any, page_count: int, processes: int) -> None:
        self._ends = context.Array("q", [0, page_count])  # [next from front, end of back)
        self._processes = processes

    def claim(self, from_back: bool = False) -> tuple[int, int] | None:
        with self._ends.get_lock():
            front, back = self._ends[0], self._ends[1]
            if front >= back:
                return None
            size = cpus.next_share(back - front, self._processes, MIN_CHUNK_PAGES, CHUNK_PAGES)
            if from_back:
                start = self._ends[1] = max(front, back - size)
                return start, back
            end = self._ends[0] = min(back, front + size)
            return front, end

    def stop(self) -> None:
        with self._ends.get_lock():
            self._ends[0] = self._ends[1]


def _worker(chunks: _Chunks, results: Any) -> None:
    """A forked worker: claim chunks until none is left; report each, or the first error."""
    assert _JOB is not None
    out = _JOB[3]
    out.records()  # what the parent had noted before the fork is the parent's to keep
    try:
        while (bounds := chunks.claim()) is not None:
            _render_chunk(bounds)
            results.put(("chunk", bounds[1] - bounds[0], out.records()))
    except BaseException as error:  # anything a worker meets is reported, then it stops
        results.put(("error", str(error) if isinstance(error, RenderError) else repr(error), None))
    finally:
        results.put(("exit", 0, None))


def _render_parallel(
    pages: tuple[Page | LazyPage, ...],
    templates: dict[str, Any],
    chrome: SiteChrome,
    out: Output,
    progress: Callable[[int, int], None] | None,
    workers: int,
    first: Callable[[], None] | None,
) -> None:
    """Render with `workers` processes: this one and `workers - 1` forked beside it.

    This process renders its share too rather than waiting: a forked worker gradually copies
    the pages of memory it touches (reference counts), so each extra process costs up to the
    size of the planned site in memory, and this one costs nothing more. It calls `first`, if
    any (on small sites, the files that are not pages), once the workers are started: they
    render pages meanwhile, and never inherit what `first` makes.
    """
    global _JOB
    context = multiprocessing.get_context("fork")
    chunks = _Chunks(context, len(pages), workers)
    results = context.Queue()
    _JOB = (pages, templates, chrome, out)
    # Everything the workers read already exists: frozen, the collector never walks it again
    # (in any process), and copy-on-write pages stay shared.
    gc.freeze()
    helpers = [context.Process(target=_worker, args=(chunks, results)) for _ in range(workers - 1)]
    done = 0
    failure: str | None = None
    running = len(helpers)

    def take(message: tuple[str, Any, Any]) -> None:
        nonlocal done, failure, running
        what, count, records = message
        if what == "chunk":
            out.absorb(records)
            done += count
            if progress is not None:
                progress(done, len(pages))
        elif what == "error":
            failure = failure or count
            chunks.stop()
        else:
            running -= 1

    try:
        for helper in helpers:
            helper.start()
        try:
            if first is not None:
                first()
            while failure is None and (bounds := chunks.claim(from_back=True)) is not None:
                _render_chunk(bounds)
                done += bounds[1] - bounds[0]
                if progress is not None:
                    progress(done, len(pages))
                while not results.empty():
                    take(results.get())
        except BaseException:
            chunks.stop()
            raise
        finally:
            # Drain until every worker said it stopped (a worker exits only once its queue is
            # flushed); a worker that died without a word ends the wait too.
            while running:
                try:
                    take(results.get(timeout=0.2))
                except queue.Empty:
                    if not any(helper.is_alive() for helper in helpers):
                        while not results.empty():
                            take(results.get())
                        break
            for helper in helpers:
                helper.join()
    finally:
        _JOB = None
        gc.unfreeze()
    if failure is not None:
        raise RenderError(failure)
    dead = [h.exitcode for h in helpers if h.exitcode]
    if running or dead:
        raise RenderError(f"a render worker died (exit code {dead[0] if dead else 'unknown'})")


def _chrome(site: Site, urls: SiteUrls, assets: dict[str, Asset]) -> SiteChrome:
    """The layout's chrome: navigation, the content-hashed assets, the preview banner."""
    return SiteChrome(
        home=urls.href(""),
        nav=tuple((s, Link(SECTION_TITLES[s], urls.href(f"{s}/"))) for s in NAV_SECTIONS),
        css=urls.href(assets["css"].path),
        js=urls.href(assets["js"].path),
        plotly=urls.href(assets["plotly"].path),
        feed=urls.href("feed.xml"),
        export=urls.href("export/resources.jsonl"),
        schemas=urls.href("schemas/"),
        build_date=site.build_date,
        banner=site.banner,
        noindex=not site.indexable,
        preview_css=urls.href(assets["preview"].path) if "preview" in assets else None,
    )


def _is_preview(site: Site) -> bool:
    return bool(site.banner) or any(p.template == "changes.html" for p in site.pages)


def _extras(
    site: Site,
    urls: SiteUrls,
    chrome: SiteChrome,
    environment: Environment,
    assets: dict[str, Asset],
    documents: KeptDocuments,
) -> Iterator[tuple[str, bytes]]:
    """Every output that is not a page (assets, feed, sitemap, manifest, export …), one by one."""
    for asset in assets.values():
        yield asset.path, asset.data
    yield "404.html", _html(environment.get_template("404.html"), site.not_found, chrome)
    yield "feed.xml", environment.get_template("feed.xml").render(feed=site.feed).encode()
    yield "sitemap.xml", _sitemap(site.sitemap)
    if site.indexable:
        robots = f"User-agent: *\nAllow: /\n\nSitemap: {urls.absolute('sitemap.xml')}\n"
    else:
        # Previews: nothing may be indexed. Netlify reads `_headers` from the published folder.
        robots = "User-agent: *\nDisallow: /\n"
        yield "_headers", b"/*\n  X-Robots-Tag: noindex\n"
    yield "robots.txt", robots.encode()
    if site.manifest is not None:
        manifest = site.manifest() if callable(site.manifest) else site.manifest
        yield MANIFEST, _manifest_json(manifest, documents)
        del manifest
    yield EXPORT, _export(site.export, documents)
    schemas = schema_files()
    for kind, data in schemas.items():
        yield f"schemas/{kind}.json", data
    yield "schemas/index.json", _json({kind: urls.href(f"schemas/{kind}.json") for kind in schemas})


def _sitemap(urls: tuple[str, ...]) -> bytes:
    """sitemaps.org XML. Written here, not by a template: a template's loop over 100,000 URLs
    costs more than the rest of a one-run rebuild's planning."""
    joined = "\n".join(urls)
    if any(character in joined for character in "&<>\"'"):
        urls = tuple(str(escape(url)) for url in urls)  # never ours, but a base URL may be
    lines = "".join(("  <url><loc>", "</loc></url>\n  <url><loc>".join(urls), "</loc></url>\n"))
    return (SITEMAP_HEAD + (lines if urls else "") + "</urlset>\n").encode()


def _html(template: Any, page: Page, chrome: SiteChrome) -> bytes:
    return template.render(page=page.context, site=chrome).encode()


def _json(value: Any) -> bytes:
    return compact_json(value, newline=True)


T = TypeVar("T")


class KeptDocuments:
    """The manifest and the export as the last build wrote them, kept by a long-lived process
    (`sitegen serve`) so that a rebuild after one run changed writes one line of each, not
    100,000 (~240 MB at 100k runs).

    A document is a head, one line per item, a tail. Its items (manifest entries, resources:
    immutable, and the same objects where unchanged) are kept with the document's bytes and
    each line's offset; the next build's items are compared by identity (as machine words,
    in C: bisection on slices, sets), and only the lines of items that came are written; the
    runs of lines between are copied whole, into the same buffer, whose memory is already
    mapped (new memory costs a page fault per 4 KB: ~0.5 s for a 100k site here). Without
    `keep` nothing is kept.
    """

    def __init__(self, keep: bool = True) -> None:
        self.keep = keep
        self._kept: dict[str, _KeptDocument] = {}
        self._versions = itertools.count()
        self._instance = os.urandom(8).hex()

    def version(self, name: str) -> str | None:
        """A name for the bytes of the document last written as `name` (None if not kept),
        unique to them: what an incremental output notes instead of hashing ~100 MB."""
        kept = self._kept.get(name)
        return f"kept:{self._instance}:{kept.version}" if kept is not None else None

    def document(
        self,
        name: str,
        head: bytes,
        items: Sequence[T],
        write: Callable[[T], bytes],
        tail: bytes,
        opening: int | None = None,
    ) -> bytearray | memoryview:
        """`head`, `write(item)` for each of `items`, `tail`; with `opening`, that byte over the
        first line's first (each line leads with a separator, the first opens the list).

        Kept: a view of a buffer the next call for `name` writes over (write it out first).
        """
        if not self.keep:
            # One growing buffer, not a list then its join: half the peak memory.
            joined = bytearray(head)
            for item in items:
                joined += write(item)
            if opening is not None and items:
                joined[len(head)] = opening
            joined += tail
            return joined
        identities = array.array("q", map(id, items))
        kept = self._kept.get(name)
        if kept is None or kept.head != head:
            kept = _KeptDocument(head, (), array.array("q"), array.array("q", [len(head)]))
            kept.buffer += head
        if kept.opened is not None:  # the first line as written: it may be copied elsewhere
            kept.buffer[kept.offsets[0]] = kept.opened
            kept.opened = None
        old_ids = kept.identities
        same_start = _common_length(old_ids, identities)
        same_end = _common_length(old_ids[same_start:][::-1], identities[same_start:][::-1])
        old_stop = len(old_ids) - same_end
        new_stop = len(identities) - same_end
        if kept.version < 0 or old_stop > same_start or new_stop > same_start or tail != kept.tail:
            kept.version = next(self._versions)
        start, old_end = kept.offsets[same_start], kept.offsets[old_stop]
        region = _spliced(kept, items, identities, same_start, old_stop, new_stop, write)
        if region is None:  # items that stayed changed order: write the region's lines anew
            lines = [write(item) for item in items[same_start:new_stop]]
            region = bytearray(b"".join(lines))
            line_ends = array.array("q", itertools.accumulate(map(len, lines), initial=start))
            del line_ends[0]
        else:
            region, line_ends = region
        try:
            kept.buffer[start:old_end] = region  # one move of what follows, if any
        except BufferError:  # a view of the last one is still held: leave it be
            kept.buffer = bytearray(kept.buffer)
            kept.buffer[start:old_end] = region
        shift = len(region) - (old_end - start)
        after = kept.offsets[old_stop + 1 :]
        if shift:
            after = array.array("q", (offset + shift for offset in after))
        kept.offsets = kept.offsets[: same_start + 1] + line_ends + after
        kept.identities, kept.items = identities, items  # items: their ids stay theirs
        end = kept.offsets[-1]
        kept.buffer[end:] = tail
        kept.tail = tail
        if opening is not None and items:
            kept.opened = kept.buffer[kept.offsets[0]]
            kept.buffer[kept.offsets[0]] = opening
        self._kept[name] = kept
        return memoryview(kept.buffer)[: end + len(tail)]


@dataclass
class _KeptDocument:
    head: bytes
    items: Sequence[object]
    identities: array.array[int]
    offsets: array.array[int]  # where each line starts, then where the lines end
    buffer: bytearray = field(default_factory=bytearray)
    tail: bytes = b""
    version: int = -1  # changes with the bytes (KeptDocuments.version)
    opened: int | None = None  # the first line's first byte, where `opening` is written over it


def _spliced(
    kept: _KeptDocument,
    items: Sequence[T],
    identities: array.array[int],
    start: int,
    old_stop: int,
    new_stop: int,
    write: Callable[[T], bytes],
) -> tuple[bytearray, array.array[int]] | None:
    """The lines of `items[start:new_stop]` (and where each ends), where they replace the
    kept lines `start:old_stop`: the kept lines of items that stayed are copied in runs, the
    items that came are written. None when the items that stayed are not in the same order
    (or one is there twice)."""
    old_ids, offsets = kept.identities, kept.offsets
    stayed_old = old_ids[start:old_stop]
    came_new = identities[start:new_stop]
    old_set, new_set = set(stayed_old), set(came_new)
    if len(old_set) != len(stayed_old) or len(new_set) != len(came_new):
        return None
    gone, came = old_set - new_set, new_set - old_set
    region = bytearray()
    line_ends = array.array("q")
    base = offsets[start]
    old, new = start, start
    with memoryview(kept.buffer) as buffer:
        while new < new_stop:
            while old < old_stop and old_ids[old] in gone:
                old += 1
            if identities[new] in came:
                region += write(items[new])
                line_ends.append(base + len(region))
                new += 1
                continue
            if old >= old_stop or old_ids[old] != identities[new]:
                return None  # an item that stayed moved
            # The longest run of kept lines from here: copied as one slice.
            limit = min(old_stop - old, new_stop - new)
            run = _common_length(old_ids[old : old + limit], identities[new : new + limit])
            shift = base + len(region) - offsets[old]
            region += buffer[offsets[old] : offsets[old + run]]
            line_ends.extend(offset + shift for offset in offsets[old + 1 : old + run + 1])
            old += run
            new += run
    return region, line_ends


def _common_length(first: array.array[int], second: array.array[int]) -> int:
    """The length of the longest common prefix, by bisection on slices compared in C."""
    low, high = 0, min(len(first), len(second))
    while low < high:
        middle = (low + high + 1) // 2
        if first[:middle] == second[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _manifest_json(manifest: Manifest, documents: KeptDocuments) -> bytes:
    """`_json(manifest_document(manifest))`, byte for byte, written entry by entry: the whole
    document as dicts and then as bytes would hold a million runs twice over (~2 GB)."""
    head = compact_json(manifest_document(manifest._replace(entries=())))
    if not head.endswith(b'"resources":[]}'):
        raise RenderError("the manifest's resources must be its last field")
    head = head[: -len(b"[]}")]
    if not manifest.entries:
        return head + b"[]}\n"
    # Each line starts with a comma (a kept line may be first one build and not the next);
    # the first comma becomes the list's bracket.
    document = documents.document(
        MANIFEST, head, manifest.entries, _manifest_line, b"]}\n", opening=ord("[")
    )
    return document  # type: ignore[return-value]  # bytes-like, written and hashed as bytes


def _manifest_line(entry: Entry) -> bytes:
    return b"," + compact_json(entry_document(entry))


def _export(resources: Sequence[LoadedResource], documents: KeptDocuments) -> bytes:
    """JSON Lines of {"digest", "resource"}, as `compact_json` writes each line, byte for byte.

    A document's orjson bytes are spliced in as they are where `compact_json` would keep
    orjson's bytes, so that no compact run is parsed and dumped again.
    """
    return documents.document(EXPORT, b"", resources, _export_line, b"")  # type: ignore[return-value]


def _export_line(entry: LoadedResource) -> bytes:
    raw = entry.raw
    if b"null" not in raw and _numbers_agree(raw):
        return b'{"digest":' + orjson.dumps(entry.digest) + b',"resource":' + raw + b"}\n"
    line = {"digest": entry.digest, "resource": entry.document}
    return compact_json(line, allow_nan=True, newline=True)


def _numbers_agree(data: bytes) -> bool:
    """Whether orjson's bytes spell every number as `json.dumps` does (see `compact_json`)."""
    # orjson writes 1e-05 as 0.00001, 1e-07 as 1e-7. Each pattern is looked for with `find`
    # (a regular expression took three times as long), then tested for being in a number, not
    # in a string such as a shape's "eps=1e-06" (every row of a list page's twin has one).
    found = data.find(b"0.0000")
    while found != -1:
        if _in_number(data, found):
            return False
        found = data.find(b"0.0000", found + 6)
    found = data.find(b"e-")
    while found != -1:
        if (
            found
            and data[found - 1 : found].isdigit()
            and data[found + 2 : found + 3].isdigit()
            and _in_number(data, found)
        ):
            return False
        found = data.find(b"e-", found + 2)
    return True


_NUMBER_BYTES = frozenset(b"0123456789.-+eE")


def _in_number(data: bytes, at: int) -> bool:
    """Whether `data[at]` is in a number token of compact JSON: what precedes the token is
    `:`, `,`, `[` or nothing. Text ending in one of them (`"x:1e-06"`) counts as a number
    too: json's path then, which is never wrong, only slower."""
    start = at - 1
    while start >= 0 and data[start] in _NUMBER_BYTES:
        start -= 1
    return start < 0 or data[start] in b":,["


def compact_json(value: Any, allow_nan: bool = False, newline: bool = False) -> bytes:
    """`json.dumps(value, ensure_ascii=False, separators=(",", ":"))` as UTF-8, byte for byte.

    Compact on purpose: `indent` switches json to its pure-Python encoder, 5× slower. orjson
    writes the same bytes ~10× faster except where its number formatting differs (a float
    below 1e-4: `0.00001`, `1e-7` against `1e-05`, `1e-07`), where it writes NaN as null, and
    where it refuses what json accepts (non-string keys, integers past 64 bits): those go to
    json. tests/test_render.py checks the equality. `newline` ends it with "\\n" (without
    copying a big document to append one).
    """
    try:
        fast = orjson.dumps(value, option=orjson.OPT_APPEND_NEWLINE if newline else None)
    except (orjson.JSONEncodeError, TypeError):
        fast = None
    # A null is None only if the bytes read back as the value: a NaN or ±inf written as null
    # reads back as None, which equals neither (list pages' twins hold nulls in every row).
    if (
        fast is not None
        and _numbers_agree(fast)
        and (b"null" not in fast or orjson.loads(fast) == value)
    ):
        return fast
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=allow_nan)
    return (text + "\n" if newline else text).encode()
