"""The site-wide files that are not pages: assets, 404 page, feed, sitemap, robots.txt,
llms.txt, the manifest, the export of every resource, and the JSON Schemas; made one at a
time."""

from __future__ import annotations

import contextlib
import re
import secrets
from array import array
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import orjson
from markupsafe import escape

from sitegen.analysis.kernels import HeldAnalysis
from sitegen.content.loaded import LoadedResource
from sitegen.content.stretches import Stretch, same_stretches
from sitegen.publish.manifest import Entry, Manifest, entry_document, manifest_document
from sitegen.publish.write import Data, Pieces
from sitegen.render.assets import Asset, schema_files
from sitegen.render.compact_json import compact_json, numbers_agree
from sitegen.render.errors import RenderError
from sitegen.site.records import Page, Site, Sitemap
from sitegen.site.urls import REGRESSIONS_FEED, SiteUrls
from sitegen.superseded import asking_every, stop_if_superseded

if TYPE_CHECKING:  # jinja is imported with render/environment.py, when a build needs it
    from jinja2 import Environment

T = TypeVar("T")
MANIFEST = "manifest.json"
EXPORT = "export/resources.jsonl"
SITEMAP_HEAD = (
    '<?xml version="1.0" encoding="utf-8"?>\n'
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
)


def site_files(
    site: Site,
    urls: SiteUrls,
    chrome: Any,
    environment: Environment,
    assets: dict[str, Asset],
) -> Iterator[tuple[str, Data]]:
    """Every output that is not a page, one by one: the big ones (the export, the manifest)
    are made only when asked for, and dropped before the next."""
    for asset in assets.values():
        yield asset.path, asset.data
    yield "404.html", html(environment.get_template("404.html"), site.not_found, chrome)
    yield "feed.xml", environment.get_template("feed.xml").render(feed=site.feed).encode()
    if site.regressions_feed is not None:
        regressions = environment.get_template("feed.xml").render(feed=site.regressions_feed)
        yield REGRESSIONS_FEED, regressions.encode()
    yield "sitemap.xml", sitemap_xml(site.sitemap, site.held)
    if site.indexable:
        robots = f"User-agent: *\nAllow: /\n\nSitemap: {urls.absolute('sitemap.xml')}\n"
    else:
        # Previews: nothing may be indexed. Netlify reads `_headers` from the published folder.
        robots = "User-agent: *\nDisallow: /\n"
        yield "_headers", b"/*\n  X-Robots-Tag: noindex\n"
    yield "robots.txt", robots.encode()
    if site.llms:
        yield "llms.txt", site.llms.encode()
    if site.manifest is not None:
        manifest = site.manifest() if callable(site.manifest) else site.manifest
        yield MANIFEST, manifest_json(manifest, site.held)
        del manifest
    yield EXPORT, export_jsonl(site.export, site.held)
    schemas = schema_files()
    for kind, data in schemas.items():
        yield f"schemas/{kind}.json", published_schema(data, urls.absolute(f"schemas/{kind}.json"))
    index = {kind: urls.href(f"schemas/{kind}.json") for kind in schemas}
    yield "schemas/index.json", compact_json(index, newline=True)


JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def published_schema(data: bytes, url: str) -> bytes:
    """A kind's JSON Schema as published: the dialect it is written in and its own URL first
    (`$schema`, `$id`), then what the models say."""
    schema = orjson.loads(data)
    return compact_json({"$schema": JSON_SCHEMA_DIALECT, "$id": url, **schema}, newline=True)


def html(template: Any, page: Page, chrome: Any) -> bytes:
    return template.render(page=page.context, site=chrome).encode()  # type: ignore[no-any-return]


def sitemap_xml(sitemap: Sitemap, held: HeldAnalysis | None = None) -> Data:
    """sitemaps.org XML, joined rather than templated: a template's loop over 100,000 URLs
    costs as much as a small build's planning. Each URL is the base and a path, joined in
    one go (a string a URL made first: ~0.05 s at 100k pages). With `held` (`sitegen serve`,
    the build daemon), the last build's lines where the paths are the very same strings (a
    held page's), a stretch at a time (`_add_lines`): an edit changes a run's path, and
    joining ~100k URLs again took ~0.03 s."""
    base, paths = sitemap
    if held is not None and not _ESCAPED.search(base):
        with contextlib.suppress(_Escaped):
            return _held_sitemap(base, paths, held)
    joined = base + "\n".join(paths)  # once: looked through for each character
    if _ESCAPED.search(joined):  # never ours, but a base URL may hold one
        base, paths = "", tuple(str(escape(base + path)) for path in paths)
    between = f"</loc></url>\n  <url><loc>{base}"
    lines = "".join(("  <url><loc>", base, between.join(paths), "</loc></url>\n"))
    return (SITEMAP_HEAD + (lines if paths else "") + "</urlset>\n").encode()


_ESCAPED = re.compile("[&<>\"']")  # what XML text escapes (`escape`)


class _Escaped(Exception):
    """A held sitemap's path holds what XML escapes: the sitemap is made whole."""


def _held_sitemap(base: str, paths: tuple[str, ...], held: HeldAnalysis) -> Data:
    head = SITEMAP_HEAD.encode()
    kept = held.sitemap
    last: HeldLines | None = kept[1] if isinstance(kept, tuple) and kept[0] == base else None
    if last is not None and last.items == paths:
        return last.data  # the same paths (an edit that moved no page)
    before, after = f"  <url><loc>{base}".encode(), b"</loc></url>\n"

    def line(path: str) -> bytes:  # only the paths not in the last build's lines are looked at
        if _ESCAPED.search(path):
            raise _Escaped
        return before + path.encode() + after

    joined = _Joined()
    joined += head
    starts, ends, same = _add_lines(joined, paths, line, b"", last)
    joined += b"</urlset>\n"
    data = joined.data(_held_name(last, same, head))
    held.sitemap = (base, HeldLines(paths, starts, ends, data, head))
    return data


class HeldLines(NamedTuple):
    """A file written item by item (manifest.json, the export), as written, and where each
    item's line is in it: `sitegen serve` and the build daemon hold the last build's, to take
    the lines of unchanged items from, a stretch at a time. Two arrays, where a bytes object a
    line took ~400 MB more of the server's memory at 100k runs than the lines' own size."""

    items: tuple[Any, ...]
    starts: array[int]  # where each item's line starts in `data`
    ends: array[int]
    data: Pieces  # named (`Pieces.name`): the same name, the same bytes
    head: bytes = b""  # what comes before the items' lines


# A held file's parts, past which it is joined into one again: each edit adds a few (the
# stretches around a changed line), each part costs a write(2) and a look-up.
MOST_PARTS = 10_000


class _Joined:
    """A file's bytes as they are added: new bytes (`+=`) into a growing buffer, stretches of
    the last build's file (`take`) as views of its parts, not copied."""

    def __init__(self) -> None:
        self.parts: list[bytes | bytearray | memoryview] = []
        self._new = bytearray()
        self.size = 0

    def __iadd__(self, piece: bytes) -> _Joined:
        self._new += piece
        self.size += len(piece)
        return self

    def take(self, last: Pieces, start: int, stop: int) -> None:
        self._flush()
        self.parts += last.views(start, stop)
        self.size += stop - start

    def _flush(self) -> None:
        if self._new:
            # Viewed, not copied (the whole file, the first time); never resized from here on.
            self.parts.append(memoryview(self._new))
            self._new = bytearray()

    def data(self, name: str | None = None) -> Pieces:
        self._flush()
        pieces = Pieces(self.parts, name)
        held = {id(_underlying(part)): len(_underlying(part)) for part in pieces.parts}
        # Joined once in many builds: when the parts are many, or the buffers they view hold
        # twice the file's bytes (lines since replaced, which no part views).
        if len(pieces.parts) > MOST_PARTS or sum(held.values()) > 2 * len(pieces) + (1 << 20):
            pieces = Pieces([bytes(pieces)], name)
        return pieces


def _held_name(last: HeldLines | None, same: bool, head: bytes = b"") -> str:
    """The name of a held file's bytes (`Pieces.name`): the last build's where they are the
    same (every line taken from it, in place, after the same head), else a new one, never
    given before. Hashing them instead took ~0.2 s of a CPU at 100k runs (~250 MB) a build."""
    if last is not None and same and head == last.head and last.data.name is not None:
        return last.data.name
    return f"held:{secrets.token_hex(16)}"


def _underlying(part: bytes | bytearray | memoryview) -> Any:
    return part.obj if isinstance(part, memoryview) else part


def _add_lines(
    joined: _Joined,
    items: tuple[T, ...],
    line: Callable[[T], bytes],
    separator: bytes,
    last: HeldLines | None,
    stretches_of: Callable[[tuple[T, ...], tuple[T, ...]], list[Stretch]] = same_stretches,
) -> tuple[array[int], array[int], bool]:
    """Add each item's line to `joined`, `separator` between two, and say where each is, and
    whether the bytes are `last`'s (each line taken from it in place, or made again the same:
    the manifest's entries of the resources that are not runs are made anew each build). An
    item that is the very object of one in `last` (the same resource, the same entry) has the
    same line: a stretch of them is taken from it at once (~0.3 s less for the export at 100k
    runs than a line each), as views of its bytes (~0.2 s less than a copy)."""
    starts, ends = array("q"), array("q")
    stretches = stretches_of(last.items, items) if last is not None else []
    same = last is not None and len(items) == len(last.items)
    done = 0
    for stretch in [*stretches, Stretch(len(items), len(items), 0)]:
        for place, item in enumerate(asking_every(items[done : stretch.start]), start=done):
            if starts:
                joined += separator
            starts.append(joined.size)
            made = line(item)
            joined += made
            ends.append(joined.size)
            if same and last is not None:
                before = last.data.views(last.starts[place], last.ends[place])
                same = made == b"".join(before)
        same = same and (stretch.last == stretch.start or stretch.stop == stretch.start)
        done = stretch.stop
        if last is None or stretch.stop == stretch.start:
            continue
        stop_if_superseded()
        if starts:
            joined += separator
        first, final = stretch.last, stretch.last + stretch.stop - stretch.start
        shift = joined.size - last.starts[first]
        # The separators between the lines are taken with them.
        joined.take(last.data, last.starts[first], last.ends[final - 1])
        if shift:
            starts.extend(map(shift.__add__, last.starts[first:final]))
            ends.extend(map(shift.__add__, last.ends[first:final]))
        else:  # an edit's lines as long as before (a run's digest, a value): copied whole
            starts += last.starts[first:final]
            ends += last.ends[first:final]
    return starts, ends, same


def manifest_json(manifest: Manifest, held: HeldAnalysis | None = None) -> Data:
    """`compact_json(manifest_document(manifest))` with a final newline, byte for byte, written
    entry by entry: the whole document as dicts and then as bytes would hold every run twice.
    With `held` (`sitegen serve`, the build daemon), an entry that is the very object of the
    last build's manifest (its run unchanged: publish/manifest.py) takes its line from then."""
    head = compact_json(manifest_document(manifest._replace(entries=())))
    if not head.endswith(b'"resources":[]}'):
        raise RenderError("the manifest's resources must be its last field")
    head = head[: -len(b"]}")]
    last = held.lines if held is not None else None
    joined = _Joined()  # one growing buffer, not a list and its join: half the peak
    joined += head
    entries = tuple(manifest.entries)
    starts, ends, same = _add_lines(joined, entries, _entry_line, b",", last)
    joined += b"]}\n"
    if held is None:
        return joined.data()
    data = joined.data(_held_name(last, same, head))
    held.lines = HeldLines(entries, starts, ends, data, head)
    return data


def _entry_line(entry: Entry) -> bytes:
    return compact_json(entry_document(entry))


def export_jsonl(resources: Sequence[LoadedResource], held: HeldAnalysis | None = None) -> Data:
    """JSON Lines of {"digest", "resource"}, each line as `compact_json` writes it, byte for
    byte: a document's orjson bytes are spliced in where `compact_json` would keep them, so
    that no run is parsed and written again. With `held` (`sitegen serve`, the build daemon),
    a resource that is the very object of the last build's export takes its line from then."""
    items = tuple(resources)
    last = held.export if held is not None else None
    joined = _Joined()
    # The catalog's resources, as the analysis compared them: their stretches found then.
    finder = held.stretches if held is not None else same_stretches
    starts, ends, same = _add_lines(joined, items, _export_line, b"", last, finder)
    if held is None:
        return joined.data()
    data = joined.data(_held_name(last, same))
    held.export = HeldLines(items, starts, ends, data)
    return data


def _export_line(entry: LoadedResource) -> bytes:
    raw = entry.raw
    if entry.verbatim is None:  # tested once a resource: `serve` keeps unchanged ones
        entry.verbatim = b"null" not in raw and numbers_agree(raw)
    if entry.verbatim:
        return b'{"digest":' + orjson.dumps(entry.digest) + b',"resource":' + raw + b"}\n"
    line = {"digest": entry.digest, "resource": entry.document}
    return compact_json(line, allow_nan=True, newline=True)
