"""Incremental builds (`sitegen build --incremental`, and every rebuild of `sitegen serve`):
the normal pipeline, told what the last build saw, so that it redoes only what changed.

The state remembers, from the last build:

- each content file's size, times and inode with the resources and problems read from it, so an
  unchanged file is not read, parsed or validated again (content/load.py);
- each output file's sha256 and, for a page, its key: a hash of the site-wide inputs (code,
  templates, assets, base URL, build date, deployment, import reports, every resource that is
  not a run, every non-run URL) and of the runs the page shows (site/plan.py). A page whose key
  is unchanged is neither planned nor rendered; a file whose bytes are unchanged is not written.

The output is byte for byte what a cold build writes (tests/publish/test_incremental.py).

The state says which files are already valid and which outputs need no writing, so it is
trusted only where this user's own build wrote it. `serve` holds it in memory. `build
--incremental` keeps it in the user's cache folder (user_cache.py), never in the checkout, one
file per output folder (named by a hash of its path): JSON after a line with its HMAC-SHA256
under a key kept 0600 in the same folder. Before use it is verified: the signature, then this
code's format and version, the output and content folders it was written for, and field by
field; anything else is discarded and the build is a full one. It also records every file of
the output as the build left it (size, times, inode); an output that is not exactly that any
more (a file changed, added or linked since) is rebuilt whole, never patched. The state is
deleted before the output is touched and written after, so a build killed in between leaves
none and the next build is a full one.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import hmac
import itertools
import operator
import os
import stat
import threading
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from sitegen.analysis.kernels import HeldAnalysis
from sitegen.code_hash import hash_files, package_hash
from sitegen.content.catalog import Catalog, HeldResolution
from sitegen.content.load import HeldLoads, HeldWalk, LoadCache, Packed
from sitegen.content.stretches import changes
from sitegen.content.walk import StatKey
from sitegen.content.walker import ContentWalker
from sitegen.model.problems import Problem, Severity
from sitegen.publish.output_watch import NotWatched, OutputWatch
from sitegen.publish.pagefind_format import ENTRY as INDEX_ENTRY
from sitegen.publish.search import HeldIndexSizes
from sitegen.publish.write import Data, data_digest
from sitegen.render.assets import ASSETS_DIR, TEMPLATES_DIR, site_assets
from sitegen.render.compact_json import compact_json
from sitegen.render.render import Output
from sitegen.site.records import LazyPage, Page
from sitegen.site.urls import SiteUrls, json_twin, output_path
from sitegen.superseded import stop_if_superseded
from sitegen.user_cache import (
    private_cache_folder,
    read_private,
    state_key,
    user_cache_dir,
    write_private,
)

if TYPE_CHECKING:  # jinja is imported with render/environment.py, when a build renders
    from jinja2 import Environment

STATE_FOLDER = "builds"  # in the user's cache folder
# Then the HMAC's hex and a newline, then the body: the JSON's length and a newline, the JSON,
# and every cached resource's document bytes one after another, the JSON giving each its length
# (JSON strings of ~200 MB of documents were most of reading and writing a 100k state).
STATE_HEADER = b"sitegen incremental state\n"
FORMAT = 5
STATE_LIMIT = 1 << 32  # bytes: far beyond any real state, short of filling memory

OutputItem = tuple[str | None, str]  # (page key or None, sha256 of bytes)
Outputs = dict[str, OutputItem]  # by output path


@functools.cache
def code_version() -> str:
    """A hash of sitegen's code: a state written by other code is not used (its shape may
    differ). Templates and assets are in each page's key instead (`fingerprint`)."""
    return hashlib.sha256(f"format {FORMAT}\n{package_hash()}".encode()).hexdigest()


@dataclass
class HeldFiles:
    """What a build with a state held in memory looks up rather than makes again for each of
    ~100k pages: a page key's full key under the site key (`IncrementalOutput.full_key`) and a
    page path's two files (`output_path`, `json_twin`). The builds' since it was last emptied
    (when it holds more than the site's outputs: `IncrementalOutput.finish`).

    And what lets a build skip a held page object (site/plan.py's `held_run_pages`) on sight:
    `outputs`, the very dict the last build left (`State.outputs`), and `marks`, the marks
    (`LazyPage.skipped`) of the builds whose skipped pages' items it still holds, made since
    the site key last changed or the outputs were last taken from elsewhere."""

    site_key: str = ""
    full_keys: dict[str, str] = field(default_factory=dict)
    files: dict[str, tuple[str, str]] = field(default_factory=dict)
    outputs: Outputs | None = None
    marks: frozenset[object] = frozenset()
    # The pages `page_files` was last handed, and their files: patched where a few pages are
    # not the very same objects.
    pages: Sequence[Any] = ()
    page_files: set[str] = field(default_factory=set)
    # Each page made whole (a `Page`: home, the lists of kinds, data quality, regressions…)
    # as the last build planned it, by path, with its JSON twin's bytes once made: one equal
    # to it is skipped (`IncrementalOutput.skip`).
    whole: dict[str, WholePage] = field(default_factory=dict)


class WholePage:
    """A page made whole as a build planned it, and its twin as orjson writes it, made when
    first asked."""

    __slots__ = ("_twin", "page")

    def __init__(self, page: Page) -> None:
        self.page = page
        self._twin: bytes | None = None

    def twin(self) -> bytes:
        """orjson's bytes of the twin; else (a value it refuses) `compact_json`'s, marked."""
        if self._twin is None:
            try:
                self._twin = orjson.dumps(self.page.twin)
            except (orjson.JSONEncodeError, TypeError):
                self._twin = b"\0" + compact_json(self.page.twin)  # never orjson's bytes
        return self._twin

    def same(self, now: WholePage) -> bool:
        """Whether `now` writes the bytes this one wrote, under one site key: equal records
        (compared in C), and its twin's orjson bytes the same (`1` and `1.0` are equal, and
        written apart; so are two dicts of one set of items in two orders). `compact_json`
        writes a twin from those bytes and the value alone (its numbers as json spells them,
        its nulls read back), so two equal twins of the same bytes are written the same:
        ~4× faster than writing them (~0.003 s an edit at 100k runs)."""
        if now.page is self.page:  # held by its planner (site/lists.py's `_kind_list`)
            return True
        return now.page == self.page and now.twin() == self.twin()


@dataclass
class State:
    """What the last build saw and wrote (see the module's docstring)."""

    outputs: Outputs = field(default_factory=dict)
    loads: LoadCache = field(default_factory=dict)
    # Every file of the output as the build left it (`build --incremental` only): path → stat.
    tree: dict[str, StatKey] = field(default_factory=dict)
    # The runs' summaries and resources of each file in `loads` (`sitegen serve` only): never
    # written.
    held_loads: HeldLoads = field(default_factory=dict, compare=False)
    # What the analysis made of each run and kernel (`sitegen serve` only): never written.
    analysis: HeldAnalysis = field(default_factory=HeldAnalysis, compare=False)
    # What the resolution made of each resource (`sitegen serve` only): never written.
    resolution: HeldResolution = field(default_factory=HeldResolution, compare=False)
    # The last walk of the content, taken again where a watcher saw only its files change.
    walked: HeldWalk = field(default_factory=HeldWalk, compare=False)
    # Each page's full key and files, as the last build found them (`HeldFiles`; `sitegen
    # serve` and the build daemon only): never written.
    files: HeldFiles = field(default_factory=HeldFiles, compare=False)
    # The compiled templates and the stat of their files (`sitegen serve` only): never written.
    templates: tuple[tuple[tuple[str, tuple[int, ...]], ...], Environment] | None = field(
        default=None, compare=False
    )
    # Whether anyone changed the output since the last build (the build daemon only, where it
    # can be trusted: publish/output_watch.py); `output_unwatched`, why it could not be armed.
    output_watch: OutputWatch | None = field(default=None, compare=False)
    output_unwatched: NotWatched | None = field(default=None, compare=False)
    # The process that walks the content to check a watcher's word (`sitegen serve`, the build
    # daemon: content/walker.py); `content_unwalked` once it could not be started or asked.
    walker: ContentWalker | None = field(default=None, compare=False)
    content_unwalked: bool = field(default=False, compare=False)
    # The threads removing the last patch's staging tree (publish/write.py's `patched`).
    discarding: list[threading.Thread] = field(default_factory=list, compare=False)
    # The search index's files in `tree`, held while it is patched (`build --incremental`).
    index_sizes: HeldIndexSizes | None = field(default=None, compare=False)


def state_path(out_dir: Path) -> Path | None:
    """Where the state of builds into `out_dir` is kept; None without a cache folder."""
    folder = user_cache_dir()
    if folder is None:
        return None
    name = hashlib.sha256(str(out_dir.resolve()).encode()).hexdigest()[:32]
    return folder / STATE_FOLDER / f"{name}.json"


def read_state(out_dir: Path, content_dir: Path) -> State | None:
    """The last build's state, or None: none, unreadable, not signed with this user's key, or
    written by other code, for another output or content folder."""
    path = state_path(out_dir)
    key = state_key()
    folder = private_cache_folder(STATE_FOLDER, make=False)
    if path is None or key is None or folder is None:
        return None
    data = read_private(folder / path.name, STATE_LIMIT)
    if data is None or not data.startswith(STATE_HEADER):
        return None
    # Views, not slices: each slice of a ~270 MB state would copy it.
    start = len(STATE_HEADER)
    end = data.find(b"\n", start)
    view = memoryview(data)
    if end < 0 or not hmac.compare_digest(data[start:end], _sign(key, view[end + 1 :])):
        return None
    length_end = data.find(b"\n", end + 1)
    length = data[end + 1 : length_end]
    if not 0 < len(length) < 20 or not length.isdigit() or length_end + int(length) >= len(data):
        return None
    json_end = length_end + 1 + int(length)
    try:
        document = orjson.loads(view[length_end + 1 : json_end])
        return state_from_json(document, _folders(out_dir, content_dir), view[json_end:])
    except (orjson.JSONDecodeError, ValueError, TypeError, KeyError, IndexError):
        return None


def forget_state(out_dir: Path) -> None:
    path = state_path(out_dir)
    folder = private_cache_folder(STATE_FOLDER, make=False)
    if path is not None and folder is not None:
        with contextlib.suppress(OSError):
            (folder / path.name).unlink()


def write_state(out_dir: Path, content_dir: Path, state: State) -> str | None:
    """Keep the state for the next build; what went wrong, if it could not be kept (the site
    is written either way: the next build is a full one)."""
    path = state_path(out_dir)
    key = state_key()
    folder = private_cache_folder(STATE_FOLDER)
    if path is None or key is None or folder is None:
        return "no private cache folder to keep the incremental state in: the next build is full"
    body = state_body(state, _folders(out_dir, content_dir))
    try:
        write_private(folder / path.name, [STATE_HEADER, _sign(key, body), b"\n", body])
    except OSError as error:
        return f"the incremental state could not be kept ({error.strerror}): the next build is full"
    return None


def _sign(key: bytes, body: bytes | memoryview) -> bytes:
    return hmac.new(key, body, hashlib.sha256).hexdigest().encode()


def _folders(out_dir: Path, content_dir: Path) -> list[str]:
    return [str(out_dir.resolve()), str(content_dir.resolve())]


def output_tree(root: Path) -> dict[str, StatKey] | None:
    """Every entry of an output folder (files, links, anything but folders) by path, with its
    type, size, times and inode: what an incremental build finds again before it patches.
    None if the folder cannot be read."""
    try:
        return _tree(root)
    except OSError:
        return None


def tree_unchanged(root: Path, tree: dict[str, StatKey]) -> bool:
    """Whether the output at `root` is exactly `tree` (the last build's `output_tree`)."""
    return output_tree(root) == tree


def patched_tree(
    root: Path, found: dict[str, StatKey], changed: list[str], replaced: str | None
) -> dict[str, StatKey]:
    """`output_tree(root)` after a patch, made of the tree `found` before it, in place (a copy
    of ~200k entries at 100k runs' pages took ~0.04 s a build): the `changed` paths (moved in
    or deleted) looked at again, and the folder `replaced` whole (the search index) walked
    again; every other entry is as it was, since the build held the output's lock. An entry
    that cannot be looked at is left out: the next build rebuilds the whole output."""
    tree = found
    # Every index Pagefind writes has its entry file: without one, no path is looked at for
    # the index's files (a build without search: ~0.04 s at 100k runs' pages).
    if replaced is not None:
        prefix = f"{replaced}/"
        if prefix + INDEX_ENTRY in tree:
            for path in [path for path in tree if path.startswith(prefix)]:
                del tree[path]
        with contextlib.suppress(OSError):
            tree.update((prefix + path, key) for path, key in _tree(root / replaced).items())
    for path in changed:
        try:
            tree[path] = _entry_key(os.lstat(root / path))
        except OSError:
            tree.pop(path, None)
    return tree


def _entry_key(info: os.stat_result) -> StatKey:
    return (
        stat.S_IFMT(info.st_mode),
        info.st_size,
        info.st_mtime_ns,
        info.st_ctime_ns,
        info.st_ino,
    )


def _tree(root: Path) -> dict[str, StatKey]:
    found: dict[str, StatKey] = {}
    stack = [(str(root), "")]
    while stack:
        folder, prefix = stack.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                relative = prefix + entry.name
                if entry.is_dir(follow_symlinks=False):
                    stack.append((entry.path, relative + "/"))
                else:
                    found[relative] = _entry_key(entry.stat(follow_symlinks=False))
    return found


def state_body(state: State, folders: list[str]) -> bytes:
    """The state's body as written (STATE_HEADER's comment): JSON, then the documents."""
    documents: list[bytes] = []
    document = {
        "format": FORMAT,
        "code": code_version(),
        "folders": folders,
        "outputs": {path: list(item) for path, item in state.outputs.items()},
        "loads": {
            shown: [
                list(key),
                [_packed_json(item, documents) for item in packed],
                [list(p) for p in found],
            ]
            for shown, (key, packed, found) in state.loads.items()
        },
        "tree": {path: list(key) for path, key in state.tree.items()},
    }
    encoded = orjson.dumps(document)
    return b"".join([b"%d\n" % len(encoded), encoded, *documents])


def _packed_json(item: tuple[Any, ...], documents: list[bytes]) -> list[Any]:
    *head, raw, metadata_digest = item
    documents.append(raw)
    return [*head, len(raw), metadata_digest]


def state_from_json(document: Any, folders: list[str], blob: memoryview) -> State | None:
    """The state a document holds, its resources' bytes read from `blob` in turn, checked
    field by field; None when it is not this code's, or was written for other folders.
    Raises ValueError for a field of the wrong shape, or a blob not exactly those bytes."""
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        return None
    if document.get("code") != code_version() or document.get("folders") != folders:
        return None
    outputs: Outputs = {}
    for path, (key, sha) in _mapping(document["outputs"]).items():
        outputs[path] = (_optional_text(key), _text(sha))
    loads: LoadCache = {}
    cursor = _Cursor(blob)
    for shown, (key, packed, found) in _mapping(document["loads"]).items():
        loads[_text(shown)] = (
            _stat(key),
            _packed(packed, cursor),
            [_problem(p) for p in _list(found)],
        )
    if cursor.offset != len(blob):
        raise ValueError("bytes left after the last document")
    tree = {_text(path): _stat(key) for path, key in _mapping(document["tree"]).items()}
    return State(outputs, loads, tree)


class _Cursor:
    """The documents' bytes, taken in the order the JSON lists them."""

    def __init__(self, blob: memoryview) -> None:
        self.blob = blob
        self.offset = 0

    def take(self, length: Any) -> bytes:
        if type(length) is not int or length < 0 or self.offset + length > len(self.blob):
            raise ValueError("a document's length runs past the state")
        start, self.offset = self.offset, self.offset + length
        return bytes(self.blob[start : self.offset])


def _packed(value: Any, cursor: _Cursor) -> Packed:
    found = []
    for item in _list(value):
        path, where, digest, kind, name, title, length, metadata_digest = _list(item)
        texts = (path, where, digest, kind, name, metadata_digest)
        if not set(map(type, texts)) <= _STR or (title is not None and type(title) is not str):
            raise ValueError("expected a string")
        found.append((path, where, digest, kind, name, title, cursor.take(length), metadata_digest))
    return found


_STR = {str}


def _problem(value: Any) -> Problem:
    path, where, message, hint, severity = _list(value)
    return Problem(_text(path), _text(where), _text(message), _text(hint), Severity(severity))


def _stat(value: Any) -> StatKey:
    key = tuple(_list(value))
    if not set(map(type, key)) <= _INT:  # in C: ~300k keys in a 100k state
        raise ValueError("a stat key holds integers")
    return key


_INT = {int}


def _mapping(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError("expected an object")
    return value


def _list(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise ValueError("expected a list")
    return value


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("expected a string")
    return value


def _optional_text(value: Any) -> str | None:
    return None if value is None else _text(value)


def fingerprint(catalog: Catalog, urls: SiteUrls, kernel_keys: Iterable[str], *extra: Any) -> str:
    """Everything besides the runs that any page may show, hashed: with the paths of every
    page but the runs' (those of the resources that are not runs, and of the kernels)."""
    digest = hashlib.sha256(code_version().encode())
    digest.update(hash_files(hashlib.sha256(), (TEMPLATES_DIR, ASSETS_DIR)).encode())
    digest.update(repr(sorted((k, a.path) for k, a in site_assets(True).items())).encode())
    digest.update(repr((urls.prefix, urls.base)).encode())
    others = catalog.all_but("BenchmarkRun")
    # Found from the few resources that are not runs, not by leaving ~100k runs out of every
    # path (~0.05 s at 100k runs).
    keys = {entry.digest for entry in others}
    keys.update(kernel_keys)
    paths = urls.paths
    for key in sorted(key for key in keys if key in paths):
        digest.update(f"{key}\0{paths[key]}\n".encode())
    for entry in others:
        digest.update(f"{entry.digest}\0{entry.token}\n".encode())
    for item in extra:
        digest.update(orjson.dumps(item, default=repr, option=orjson.OPT_SORT_KEYS))
    return digest.hexdigest()


class IncrementalOutput(Output):
    """Skips pages whose key is unchanged; passes on only files whose bytes changed."""

    def __init__(self, previous: Outputs, site_key: str, held: HeldFiles | None = None) -> None:
        """`held`: the last build's `HeldFiles`, looked up and added to in `skip`, held at
        `finish`."""
        super().__init__(self._refuse)
        self.previous = previous
        self.site_key = site_key
        self.outputs: Outputs = {}
        self._noted: list[tuple[str, tuple[str | None, str]]] = []
        self._held = held
        same_site = held is not None and held.site_key == site_key
        # Added to in place (~100k pages: no new dicts a build), emptied when they outgrow it.
        self._full_keys = held.full_keys if held and same_site else {}
        self._files = held.files if held else {}
        # This build's mark on the held pages it skips; a page that bears one of `_marks` is
        # skipped on sight, its files' items being in `previous` as that build noted them.
        self._mark = object()
        valid = held is not None and same_site and held.outputs is previous
        self._marks = held.marks if held is not None and valid else frozenset()
        self._kept = False  # whether a page was skipped on sight: `finish` keeps its items
        # The last build's pages made whole, where `previous` holds their files as that build
        # wrote them, and this build's, held by `finish` for the next.
        self._whole = held.whole if held is not None and valid else {}
        self._whole_now: dict[str, WholePage] = {}
        # The files of `previous` this build did not make (`finish`).
        self.gone: set[str] = set()
        # Called once the pages are written (`rendered`): the search index's splice starts.
        self.when_rendered: Callable[[], None] | None = None
        self._gone_from: tuple[Collection[str], int, set[str]] | None = None  # `gone_from`'s

    def _refuse(self, path: str, data: Data) -> None:
        raise RuntimeError("IncrementalOutput.sink is not set")

    def sink(self, write: Any) -> None:
        self._write = write

    def rendered(self) -> None:
        if self.when_rendered is not None:
            self.when_rendered()

    def gone_from(self, files: Collection[str]) -> set[str]:
        """The files of the last build that are not among `files`, this build's; asked again
        of the same `files`, not grown since, the same set (~0.01 s at 100k runs' pages)."""
        held = self._gone_from
        if held is None or held[0] is not files or held[1] != len(files):
            held = self._gone_from = files, len(files), self.previous.keys() - files
        return held[2]

    def full_key(self, key: str) -> str:
        return hashlib.sha256(f"{self.site_key}\0{key}".encode()).hexdigest()

    def skip(self, page: Page | LazyPage) -> bool:
        if not isinstance(page, LazyPage):
            return self._skip_whole(page)
        if page.key is None:
            return False
        # A page held from the last builds (site/plan.py's `held_run_pages`) and skipped by
        # one of them whose items the outputs still hold: neither its full key nor its files
        # looked up (~0.2 s less at 100k runs than looking it all up, ~0.1 s than noting).
        if page.skipped is not None and page.skipped in self._marks:
            self._kept = True
            return True
        previous = self.previous
        # Asked of every page of a site (~0.4 s at 100k runs): spelled out for two files, and
        # with a held state looked up rather than hashed and joined (~0.2 s).
        key = self._full_keys.get(page.key)
        if key is None:
            key = self._full_keys[page.key] = self.full_key(page.key)
        files = self._files.get(page.path)
        if files is None:
            files = self._files[page.path] = (output_path(page.path), json_twin(page.path))
        page_file, twin = files
        page_item, twin_item = previous.get(page_file), previous.get(twin)
        if page_item is None or twin_item is None or page_item[0] != key or twin_item[0] != key:
            return False
        self._noted += ((page_file, page_item), (twin, twin_item))
        if self._held is not None:  # frozen but for this: see `LazyPage.skipped`
            object.__setattr__(page, "skipped", self._mark)
        return True

    def _skip_whole(self, page: Page) -> bool:
        """With a held state, a page made whole (planned every build: it has no key) equal to
        the last build's of its path, whose files `previous` holds as that build wrote them:
        skipped, not rendered again to find the same bytes (at 100k runs, 13 pages an edit, the
        regressions page's 1.5 MB and its twin's 1 MB among them)."""
        if self._held is None or page.twin is None:
            return False
        found, now = self._whole.get(page.path), WholePage(page)
        if found is None or not found.same(now):
            self._whole_now[page.path] = now  # its twin's bytes, if made, kept for the next
            return False
        self._whole_now[page.path] = found
        page_file, twin = output_path(page.path), json_twin(page.path)
        page_item, twin_item = self.previous.get(page_file), self.previous.get(twin)
        if page_item is None or twin_item is None:
            return False
        self._noted += ((page_file, page_item), (twin, twin_item))
        return True

    def mark_written(self, pages: Iterable[Page | LazyPage]) -> None:
        """Mark `pages`, every one of them rendered and noted by this build (one that wrote
        the whole output), as if it had skipped them: the next build skips those it is handed
        again on sight, as it does the pages a held rebuild skipped. Without it the first
        edit after a daemon's first build looked up every page's key and files (~0.4 s at
        100k runs' pages)."""
        if self._held is None:
            return
        mark = self._mark
        for page in pages:
            if isinstance(page, LazyPage) and page.key is not None:
                object.__setattr__(page, "skipped", mark)  # see `LazyPage.skipped`

    def unskipped(self, pages: Sequence[Page | LazyPage]) -> list[Page | LazyPage]:
        """`Output.unskipped`, the held pages that bear one of `_marks` (nearly all at 100k
        runs) told apart in one pass rather than by a call of `skip` each (~0.1 s)."""
        marks = self._marks
        if not marks:
            return super().unskipped(pages)
        # In C, a page at a time (~0.07 s less at 100k runs' pages than a comprehension).
        held = map(marks.__contains__, map(_SKIPPED, pages))
        left = list(itertools.compress(pages, map(operator.not_, held)))
        if len(left) < len(pages):
            self._kept = True
        return super().unskipped(left)

    def page_files(self, pages: Sequence[Page | LazyPage]) -> set[str]:
        """`Output.page_files`, with a held state each page's files looked up (`HeldFiles`:
        ~0.05 s at 100k runs' pages, made ~0.2 s)."""
        held = self._held
        if held is None:
            return super().page_files(pages)
        found = changes(held.pages, pages, PAGES_AHEAD) if held.pages else None
        if found is not None and len(found[0]) + len(found[1]) <= len(pages) // 8:
            # The pages that are not the last build's very objects (~200 an edit at 100k
            # runs' pages), their files taken out and put in: ~0.06 s less than every page's.
            paths, held.pages = held.page_files, ()  # a clash leaves it to be made anew
            added, removed = found
            for page in removed:
                paths.difference_update(self._files_of(page))
            for page in added:
                for path in self._files_of(page):
                    if path in paths:
                        return super().page_files(pages)  # which file is written twice
                    paths.add(path)
            held.pages = pages
            return paths.copy()  # the site's other files are added to it (`render_into`)
        paths = self._every_page_file(pages)
        held.pages, held.page_files = pages, paths.copy()
        return paths

    def _files_of(self, page: Page | LazyPage) -> tuple[str, ...]:
        if not isinstance(page, LazyPage):
            return tuple(super().page_files([page]))
        files = self._files.get(page.path)
        if files is None:
            files = self._files[page.path] = (output_path(page.path), json_twin(page.path))
        return files

    def _every_page_file(self, pages: Sequence[Page | LazyPage]) -> set[str]:
        held_files = self._files
        listed: list[str] = []
        for page in pages:
            if not isinstance(page, LazyPage):  # a page made whole: a twin, or none
                listed += super().page_files([page])
                continue
            files = held_files.get(page.path)
            if files is None:
                files = held_files[page.path] = (output_path(page.path), json_twin(page.path))
            listed += files
        paths = set(listed)
        if len(paths) != len(listed):
            return super().page_files(pages)  # which file is written twice
        return paths

    def write(self, path: str, data: Data, key: str | None = None) -> None:
        stop_if_superseded()  # before each file: what is written is noted, the rest is not
        value = data_digest(data)
        old = self.previous.get(path)
        if old is None or old[1] != value:
            self._write(path, data)
        self._noted.append((path, (self.full_key(key) if key else None, value)))

    def records(self) -> list[Any]:
        noted, self._noted = self._noted, []
        return noted

    def absorb(self, records: list[Any]) -> None:
        self.outputs.update(records)

    def finish(self, files: Collection[str] | None = None) -> None:
        """Take what this process noted itself (the site-wide files, or everything when one
        process rendered), and hold this build's `HeldFiles`. `files`: every file of this
        build, pages' and others' (`ChosenPages.paths` once rendered), wanted where a page
        was skipped on sight: its items are taken from `previous`, the files gone dropped."""
        self.absorb(self.records())
        if self._kept:
            if files is None:
                raise ValueError("pages were skipped on sight: finish wants the build's files")
            kept = self.previous.copy()  # ~0.01 s at 100k runs' pages, noting each ~0.1 s
            self.gone = self.gone_from(files)
            for gone in self.gone:
                del kept[gone]
            kept.update(self.outputs)
            self.outputs = kept
        else:
            self.gone = self.previous.keys() - self.outputs.keys()
        held = self._held
        if held is not None:
            held.site_key, held.full_keys, held.files = self.site_key, self._full_keys, self._files
            held.outputs, held.marks = self.outputs, self._marks | {self._mark}
            held.whole = self._whole_now
            if len(held.marks) > MARKS_HELD:
                held.marks = frozenset({self._mark})  # the older marks' pages are looked up
            if len(held.full_keys) + len(held.files) > len(self.outputs) + 1000:
                # Pages gone or rekeyed since: started again by the next build.
                held.full_keys, held.files = {}, {}


# Pages planned again side by side that `page_files` steps over (a kernel's history pages on
# a GPU, of every shape: ~15 at 100k runs), where a page's files cost a look-up.
PAGES_AHEAD = 256
_SKIPPED = operator.attrgetter("skipped")  # a page's mark (`LazyPage.skipped`)
MARKS_HELD = 1000  # builds' marks a held page is skipped on sight by: a set of a few objects
