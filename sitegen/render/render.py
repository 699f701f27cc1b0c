"""Render the planned site: every page through the jinja environment (environment.py) and the
site-wide files (outputs.py), handed to a writer, by forked worker processes on a big site.
"""

from __future__ import annotations

import contextlib
import queue
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as futures_wait
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from sitegen import process
from sitegen.model.text import shown_escaped
from sitegen.publish.write import Data, Pieces, Writer
from sitegen.render.assets import Asset, site_assets
from sitegen.render.compact_json import compact_json
from sitegen.render.errors import RenderError
from sitegen.render.outputs import html, site_files
from sitegen.site.records import LazyPage, Link, Page, Site
from sitegen.site.urls import SECTION_TITLES, SiteUrls, json_twin, output_path
from sitegen.superseded import asking_every

if TYPE_CHECKING:
    from jinja2 import Environment

NAV_SECTIONS = (
    "kernels",
    "gpus",
    "implementations",
    "projects",
    "protocols",
    "workloads",
    "runs",
    "sources",
)


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
    # The search and compare pages' own scripts and styles.
    search_js: str
    search_css: str
    compare_js: str
    compare_css: str
    banner: tuple[Link, ...] = ()  # a preview's banner; () in production
    noindex: bool = False  # every page says `<meta name="robots" content="noindex">`
    preview_css: str | None = None  # the banner's and the changes page's styles


# Below this many pages forking costs more than it saves.
PARALLEL_MIN_PAGES = 300
CHUNK_PAGES = 250
MIN_CHUNK_PAGES = 16
# Below this many pages the files that are not pages are made beside the page workers (they
# overlap); from here up, once the workers are done, so that the big ones (the export grows
# with the catalog) never add to the workers' peak memory: meanwhile the output may index
# what was rendered (`Output.rendered`).
OVERLAP_EXTRAS_MAX_PAGES = 20_000
# From this size, a file that is not a page (the export, the manifest: ~240 MB at 100k runs) is
# hashed and written by a thread while this process renders the pages of an incremental build
# (both release the GIL): forking a page worker beside them cost more than it saved, its share
# of the pages taking ~2x as long as here while it copied the pages it touched.
BEHIND_MIN_BYTES = 4 * 1024 * 1024


class Output:
    """Where rendered files go: this one hands every file to `write(path, bytes)`.

    incremental.py's subclass skips pages whose inputs did not change and passes on only files
    whose bytes did. In a worker process, `records` returns what it noted since last asked,
    and the parent `absorb`s it.
    """

    def __init__(self, write: Writer) -> None:
        self._write = write

    def skip(self, page: Page | LazyPage) -> bool:
        return False

    def page_files(self, pages: Sequence[Page | LazyPage]) -> set[str]:
        """The files of these pages (each page's and its JSON twin), checked for clashes."""
        return page_files(pages)

    def unskipped(self, pages: Sequence[Page | LazyPage]) -> list[Page | LazyPage]:
        """The pages `skip` does not skip, in order."""
        return [page for page in asking_every(pages) if not self.skip(page)]

    def write(self, path: str, data: Data, key: str | None = None) -> None:
        self._write(path, data)

    def records(self) -> list[Any]:
        return []

    def absorb(self, records: list[Any]) -> None:
        pass

    def rendered(self) -> None:
        """Called once every page is written, in this process: before the files that are not
        pages on a big site, after them on a smaller one."""


class EscapingOutput(Output):
    """Another output, its pages and feeds (not its JSON, which is data) with each character
    of content text that pages show escaped (`model.text.shown_escaped`) written as its
    escape. Looked for only when some resource holds one: the search costs tens of
    nanoseconds a byte."""

    TEXT_FILES = (".html", ".xml", ".txt", ".md")

    def __init__(self, inner: Output) -> None:
        self._inner = inner

    def skip(self, page: Page | LazyPage) -> bool:
        return self._inner.skip(page)

    def page_files(self, pages: Sequence[Page | LazyPage]) -> set[str]:
        return self._inner.page_files(pages)

    def unskipped(self, pages: Sequence[Page | LazyPage]) -> list[Page | LazyPage]:
        return self._inner.unskipped(pages)

    def write(self, path: str, data: Data, key: str | None = None) -> None:
        if path.endswith(self.TEXT_FILES):
            data = shown_escaped(bytes(data).decode()).encode()
        self._inner.write(path, data, key)

    def records(self) -> list[Any]:
        return self._inner.records()

    def absorb(self, records: list[Any]) -> None:
        self._inner.absorb(records)

    def rendered(self) -> None:
        self._inner.rendered()


class ChosenPages(NamedTuple):
    """`choose_pages`' answer: the pages to render, and every page's output paths."""

    output: Output
    pages: list[Page | LazyPage]
    paths: set[str]


def choose_pages(site: Site, output: Output) -> ChosenPages:
    """The pages `output` does not skip, in site order, and the paths of every page's files,
    checked for clashes (`Output.page_files`): a clash fails the build before anything is
    written. A step of its own so that an incremental build takes it while a CPU aside walks
    the output (~0.8 s at 100k runs' pages, which it would otherwise wait for; pipeline.py)."""
    paths = output.page_files(site.pages)
    # Decided here, before any fork: an incremental build's few changed pages of a small site
    # are rendered by this process alone.
    pages = output.unskipped(site.pages)
    return ChosenPages(output, pages, paths)


def page_files(pages: Iterable[Page | LazyPage]) -> set[str]:
    """Each page's output file and JSON twin; RenderError where two would be one file."""
    paths: set[str] = set()
    for page in pages:
        # Every page has a JSON twin but the 404 page, which is not in `pages`.
        twin = isinstance(page, LazyPage) or page.twin is not None
        for path in (output_path(page.path), json_twin(page.path) if twin else None):
            if path is None:
                continue
            if path in paths:
                raise RenderError(f"two outputs would be written to {path}")
            paths.add(path)
    return paths


def render_into(
    site: Site,
    urls: SiteUrls,
    write: Writer | Output,
    progress: Callable[[int, int], None] | None,
    environment: Environment,
    workers: int | None = None,
    chosen: ChosenPages | None = None,
) -> int:
    """Render every output file and hand it to `write(path, bytes)`; returns the file count.

    Pages are rendered by `workers` forked processes (default: one per usable CPU, for
    PARALLEL_MIN_PAGES pages to render or more: those `write` does not skip), each calling
    `write` itself, so no page is held in memory after it is written. Each file's bytes depend
    only on its page, never on which process rendered it. Every path is checked for clashes
    (the pages' before any is rendered, the other files' as each is made): a clash fails the
    build before its output is used. Fewer pages are rendered by this process, while a thread
    hashes and writes the big files that are not pages (`Writing`, with a CPU for it).
    `chosen`: `choose_pages` of this site and `write`, taken already.
    """
    out = write if isinstance(write, Output) else Output(write)
    if chosen is not None and chosen.output is not out:
        raise ValueError("pages chosen by another output")
    if site.escapes_text:
        out = EscapingOutput(out)
    assets = site_assets(site.preview)
    chrome = _chrome(urls, assets, site.build_date, site.banner, site.indexable)
    _, pages, paths = chosen if chosen is not None else choose_pages(site, out)

    def write_extras(behind: Writing | None = None) -> None:
        # The files that are not pages, one at a time: the big ones (the export, the
        # manifest) are dropped before the next is made, or with `behind`, once written.
        for path, data in site_files(site, urls, chrome, environment, assets):
            if path in paths:
                raise RenderError(f"two outputs would be written to {path}")
            paths.add(path)
            if behind is not None and len(data) >= BEHIND_MIN_BYTES:
                behind.write(path, data)
            else:
                out.write(path, data)
            del data

    templates = {
        name: environment.get_template(name) for name in sorted({p.template for p in site.pages})
    }
    total = len(pages)
    count = workers if workers is not None else process.usable_cpus()
    if count > 1 and total >= PARALLEL_MIN_PAGES:
        in_memory_order = sorted(pages, key=_locality)
        beside = total < OVERLAP_EXTRAS_MAX_PAGES
        _render_parallel(
            tuple(in_memory_order),
            templates,
            chrome,
            out,
            progress,
            count,
            write_extras if beside else None,
        )
        out.rendered()
        if not beside:
            write_extras()
    else:
        with Writing(out) if count > 1 else contextlib.nullcontext() as behind:
            write_extras(behind)
            for number, page in enumerate(pages, start=1):
                _render_page(page, templates, chrome, out)
                if progress is not None:
                    progress(number, total)
            out.rendered()  # before the wait for the big files' thread
    return len(paths)


class Writing:
    """Files handed to `out.write` on a thread of their own, in turn, while this one goes on:
    for the big files, whose hashing and writing release the GIL. At most one made for this
    build waits, so that no more than two such files are held at once; those a held state
    keeps anyway (named `Pieces`: the export, the manifest) queue without a wait (~0.04 s an
    edit at 100k runs). The block waits for the last and raises what a write raised; it waits
    too when the block raises, so that nothing writes into a staging tree once its owner
    removes it."""

    def __init__(self, out: Output) -> None:
        self._out = out
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sitegen-write")
        self._pending: list[Future[None]] = []

    def write(self, path: str, data: Data) -> None:
        if not (isinstance(data, Pieces) and data.name is not None):
            self._wait()
        self._pending.append(self._pool.submit(self._out.write, path, data))

    def _wait(self) -> None:
        pending, self._pending = self._pending, []
        for future in pending:  # in order: the first failure is raised, the rest waited for
            try:
                future.result()
            except BaseException:
                for later in pending:
                    later.cancel()
                futures_wait(pending)
                raise

    def __enter__(self) -> Writing:
        return self

    def __exit__(self, kind: object, error: object, traceback: object) -> None:
        try:
            if kind is None:
                self._wait()
        finally:
            self._pool.shutdown(wait=True)


def _locality(page: Page | LazyPage) -> int:
    return page.locality if isinstance(page, LazyPage) else -1


def _render_page(
    page: Page | LazyPage,
    templates: dict[str, Any],
    chrome: SiteChrome,
    out: Output,
) -> None:
    key = page.key if isinstance(page, LazyPage) else None
    page = page.built()  # a LazyPage is planned here, in the worker that renders it
    out.write(output_path(page.path), html(templates[page.template], page, chrome), key)
    if page.twin is not None:
        out.write(json_twin(page.path), compact_json(page.twin, newline=True), key)


# What forked workers render: set in the parent just before the fork, inherited, never pickled.
_JOB: tuple[Any, ...] | None = None


def _render_chunk(bounds: tuple[int, int]) -> None:
    assert _JOB is not None
    pages, templates, chrome, out = _JOB
    start, end = bounds
    for page in pages[start:end]:
        try:
            _render_page(page, templates, chrome, out)
        except (RenderError, OSError):  # a template's fault, or the output's file system's
            raise
        except Exception as error:  # the worker's exception may not pickle: send its words
            message = f"rendering {page.path or '/'}: {type(error).__name__}: {error}"
            raise RenderError(message) from None


class _Chunks:
    """Runs of pages handed out one at a time across processes, from both ends.

    Forked workers take from the front, this process from the back: with pages in memory
    order, each process touches its own stretch of the planned site, so a worker copies only
    the memory of the pages it renders, not nearly all of it. Runs are sized by
    `process.next_share`: the last are short, so the processes finish nearly together.
    """

    def __init__(self, context: Any, page_count: int, processes: int) -> None:
        self._ends = context.Array("q", [0, page_count])  # [next from front, end of back)
        self._processes = processes

    def claim(self, from_back: bool = False) -> tuple[int, int] | None:
        with self._ends.get_lock():
            front, back = self._ends[0], self._ends[1]
            if front >= back:
                return None
            size = process.next_share(back - front, self._processes, MIN_CHUNK_PAGES, CHUNK_PAGES)
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
    process.worker_signals()  # Ctrl-C is the parent's; the parent's death is this one's
    out = _JOB[3]
    out.records()  # what the parent had noted before the fork is the parent's to keep
    try:
        while (bounds := chunks.claim()) is not None:
            _render_chunk(bounds)
            results.put(("chunk", bounds[1] - bounds[0], out.records()))
    except BaseException as error:  # anything a worker meets is reported, then it stops
        results.put(("error", _failure(error), None))
    finally:
        results.put(("exit", 0, None))


# A worker's failure as the parent raises it again: an OSError as itself (a full disk is the
# output's problem, not a template's: its errno and path kept), anything else as a RenderError.
Failure = tuple[int, str, str | None] | str


def _failure(error: BaseException) -> Failure:
    if isinstance(error, OSError) and error.errno is not None:
        return (error.errno, error.strerror or "", error.filename)
    return str(error) if isinstance(error, RenderError) else repr(error)


def _raise(failure: Failure) -> None:
    if isinstance(failure, tuple):
        raise OSError(*failure)  # OSError(errno, …) is the errno's subclass, as raised
    raise RenderError(failure)


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
    context = process.fork_context()
    chunks = _Chunks(context, len(pages), workers)
    results = context.Queue()
    _JOB = (pages, templates, chrome, out)
    helpers = [context.Process(target=_worker, args=(chunks, results)) for _ in range(workers - 1)]
    done = 0
    failure: Failure | None = None
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

    # Everything the workers read already exists: frozen, copy-on-write pages stay shared.
    try:
        with process.frozen_for_fork():
            with process.forking_workers():
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
                # Drain until every worker said it stopped (a worker exits only once its queue
                # is flushed); a worker that died without a word ends the wait too.
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
    if failure is not None:
        _raise(failure)
    dead = [h.exitcode for h in helpers if h.exitcode]
    if running or dead:
        raise RenderError(f"a render worker died (exit code {dead[0] if dead else 'unknown'})")


def render_first(
    pages: Sequence[LazyPage],
    urls: SiteUrls,
    write: Output,
    environment: Environment,
    *,
    build_date: str | None,
    banner: tuple[Link, ...],
    indexable: bool,
    preview: bool,
    escapes_text: bool,
) -> None:
    """Render a few of a site's pages ahead of the rest, in this process, byte for byte as
    `render_into` renders them in the whole site (`sitegen serve`: the changed runs' pages,
    pipeline.py). The keywords are the whole site's `Site` fields."""
    out = EscapingOutput(write) if escapes_text else write
    chrome = _chrome(urls, site_assets(preview), build_date, banner, indexable)
    templates = {name: environment.get_template(name) for name in {p.template for p in pages}}
    for page in pages:
        _render_page(page, templates, chrome, out)


def _chrome(
    urls: SiteUrls,
    assets: dict[str, Asset],
    build_date: str | None,
    banner: tuple[Link, ...],
    indexable: bool,
) -> SiteChrome:
    """The layout's chrome: navigation, the content-hashed assets, the preview banner."""
    return SiteChrome(
        home=urls.href(""),
        nav=(
            *((s, Link(SECTION_TITLES[s], urls.href(f"{s}/"))) for s in NAV_SECTIONS),
            ("search", Link("Search", urls.href("search/"))),
        ),
        css=urls.href(assets["css"].path),
        js=urls.href(assets["js"].path),
        plotly=urls.href(assets["plotly"].path),
        feed=urls.href("feed.xml"),
        export=urls.href("export/resources.jsonl"),
        schemas=urls.href("schemas/"),
        build_date=build_date,
        search_js=urls.href(assets["search_js"].path),
        search_css=urls.href(assets["search_css"].path),
        compare_js=urls.href(assets["compare_js"].path),
        compare_css=urls.href(assets["compare_css"].path),
        banner=banner,
        noindex=not indexable,
        preview_css=urls.href(assets["preview"].path) if "preview" in assets else None,
    )
