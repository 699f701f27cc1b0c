"""The one module that reads and writes Pagefind's own index files: the index made to depend on
the pages alone.

Pagefind 1.5.2 (the version pinned, `PAGEFIND_VERSION`) numbers the pages in the order it walks
the folder, which is the file system's listing order (ext4 lists a big folder in the order of a
hash seeded per file system: another machine lists it otherwise), and writes each filter's
values, and the list of filters, in the order of a hash map seeded anew by each process
(`build_indexes` in its src/index/mod.rs). `canonicalise` rewrites the index so that the same
pages give the same bytes anywhere: pages numbered by title, then URL (`PageKey`: every page
number of the word index and the filters rewritten), filters by name, values by value. The
files are gzip of `pagefind_dcd` and CBOR; each rewritten file is named by the sha256 of its
CBOR, as Pagefind names its own by a hash of theirs.
"""

from __future__ import annotations

import bisect
import functools
import gzip
import hashlib
import heapq
import html
import itertools
import json
import operator
import os
import zlib
from collections.abc import Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, overload

import cbrrr
import orjson

from sitegen import process
from sitegen.model.text import neutralised

PAGEFIND_VERSION = "1.5.2"
SIGNATURE = b"pagefind_dcd"
ENTRY = "pagefind-entry.json"
_FRAGMENT = ".pf_fragment"  # a page's fragment: <its hash>.pf_fragment under fragment/
# A metadata file is [version, pages, index chunks, filters, sorts, meta fields]: a page is
# [fragment hash, word count], in page-number order; a chunk [first word, last word, hash]; a
# filter [name, hash]. An index chunk is [[[word, [[page delta, locations, meta locations]...],
# [[variant, pages]...]]...]] with each word's (and variant's: a form with diacritics indexed
# under the word without) pages in ascending order, each the difference from the one before it;
# a filter file is [name, [[value, [page numbers, ascending]]...]].
_PAGES, _CHUNKS, _FILTERS, _SORTS, _FIELDS = 1, 2, 3, 4, 5


class IndexFormatError(ValueError):
    """An index file is not as Pagefind PAGEFIND_VERSION writes it."""


class PageKey(NamedTuple):
    """What orders a page among the pages of an index: its title, then its URL. A run edited
    keeps its title, not its URL (its digest), so it keeps its number: the words of the pages
    about it, not nearly every chunk, change (`splice_index`)."""

    title: str
    url: str


def canonicalise(index: Path) -> None:
    """Rewrite the index in the folder `index` so that its bytes depend on the pages alone."""
    moved = index.with_name(index.name + ".pagefind")
    index.rename(moved)
    merge_parts([moved], index)


# Where the word index is cut into chunks (`_cut_after`): after a word whose crc32 is a
# multiple of CHUNK_SPREAD, once a chunk holds CHUNK_ENTRIES / 2 page entries, and always at
# 2 * CHUNK_ENTRIES: ~12,000 entries a chunk on the real catalog (~25 KB compressed, as
# Pagefind's own median chunk). A cut that depends on the words near it, not on a count from
# the first word, moves no cut far from a change: a splice makes again the chunks about it.
CHUNK_ENTRIES = 12_000
CHUNK_SPREAD = 400  # ~18 entries a word on the real catalog: ~7,000 entries past the half
# Words the word index of CUT_FROM_PAGES pages or more is always cut before: the stretches
# between are joined by processes of their own (`process.forked_calls`), and a cut that depends
# on the pages alone (not on the parts or the processes) keeps the bytes following the pages.
# Chosen to halve the real catalog's entries (docs/performance.md); a small site's index
# stays one stretch, as Pagefind writes it.
CUT_BEFORE = ("h",)
CUT_FROM_PAGES = 2_000


def merge_parts(parts: list[Path], into: Path, keys: Mapping[str, PageKey] | None = None) -> None:
    """Join the indexes Pagefind wrote into the folders `parts` (one or more, each of other
    pages) into one index in the folder `into`, which does not exist yet, in its canonical form:
    the pages of all numbered by key (`PageKey`), each word's pages (and each variant's) and
    each filter value's joined, as one run of Pagefind over all the pages would have indexed
    them (its words, word counts, fragments and filters), the words cut into chunks
    (`_cut_after`), filters by name and values by value, each file named by the sha256 of its
    CBOR. The same pages give the same bytes however they were cut into parts and walked. The
    parts are consumed; each file is read once and written once. `keys`: `fragment_keys` of
    parts read ahead (a page's fragment not in it is read here)."""
    entries = [_entry(part) for part in parts]
    parts[0].rename(into)  # its interface, its wasm files and its fragments, moved whole
    (into / ENTRY).unlink()
    (into / "fragment").mkdir(exist_ok=True)
    for kind in ("index", "filter"):
        (into / kind).mkdir(exist_ok=True)
    for part in parts[1:]:
        for fragment in sorted((part / "fragment").glob("*.pf_fragment")):
            fragment.replace(into / "fragment" / fragment.name)
        for wasm in sorted(part.glob("wasm.*.pagefind")):
            if not (into / wasm.name).exists():
                wasm.replace(into / wasm.name)
    merged = {**entries[0], "languages": {}}
    languages = sorted({language for entry in entries for language in entry["languages"]})
    folders = [into, *parts[1:]]
    for language in languages:
        held = [
            (folder, entry["languages"][language])
            for folder, entry in zip(folders, entries, strict=True)
            if language in entry["languages"]
        ]
        metas = []
        for folder, details in held:
            meta_path = folder / f"pagefind.{details['hash']}.pf_meta"
            metas.append((folder, read(meta_path)))
            meta_path.unlink()
        body = encode(_merged_meta(metas, into, language, keys or {}))
        name = _name(language, hashlib.sha256(body).hexdigest(), 10, set())
        _write(into / f"pagefind.{name}.pf_meta", body)
        merged["languages"][language] = {
            **held[0][1],
            "hash": name,
            "page_count": sum(len(meta[_PAGES]) for _, meta in metas),
        }
    text = json.dumps(merged, separators=(",", ":"), ensure_ascii=False)  # as Pagefind writes it
    (into / ENTRY).write_text(text, encoding="utf-8")


_LEFT_OUT = -1  # the number, in the index made, of a source's page left out of it


def splice_index(index: Path, part: Path | None, old_part: Path | None, into: Path) -> list[str]:
    """Change the index in the folder `index` (one this module made: its pages in key order)
    as an incremental build changes its pages: the pages Pagefind indexed into the folder
    `old_part` (the published versions of those changed or removed; None: none) taken out,
    and those it indexed into `part` (the new versions and the new pages; None: none) put in.
    What changes is written into the folder `into`, laid out as `index` (new chunks, filters
    and fragments, the metadata and the entry file); the bytes are those `merge_parts` gives
    for the pages from scratch. Where every page kept keeps its number (a run edited: its
    title kept), only the chunks about the words whose page entries differ between the pages
    taken out and those put in are made again (`_spliced_chunks`); else every chunk is. The
    files of `index` the new one no longer has, relative to it, are returned, to delete once
    `into`'s are moved in; `part` is consumed. IndexFormatError where this index is not one
    to change so (several languages, a new metadata field, a page taken out not as
    published): the whole index is then made again."""
    # Decoded chunks hold ~100k lists without cycles: in a build daemon's heap of millions of
    # objects, the collections their making set off were up to ~0.15 s of a ~0.3 s splice.
    with process.not_collecting():
        return _spliced_index(index, part, old_part, into)


def _spliced_index(index: Path, part: Path | None, old_part: Path | None, into: Path) -> list[str]:
    entry = _entry(index)
    if len(entry["languages"]) != 1:
        raise IndexFormatError("an index of several languages: made again whole")
    ((language, details),) = entry["languages"].items()
    meta_name = f"pagefind.{details['hash']}.pf_meta"
    meta = read(index / meta_name)
    _check_sorts(meta)
    keys = _Keys(index, meta[_PAGES])
    old_meta = _part_meta(old_part, language, meta)
    left: dict[str, int] = {}  # by fragment hash, the number of each page taken out
    if old_part is not None and old_meta is not None:
        for page_hash, key in fragment_keys(old_part).items():
            at = bisect.bisect_left(keys, key)
            if at == len(keys) or meta[_PAGES][at][0] != page_hash:
                raise IndexFormatError(f"{key.url}: not in the index as it was published")
            left[page_hash] = at
    old_numbers = [_LEFT_OUT] * len(meta[_PAGES])
    sources = [_Source(index, meta, old_numbers, by_pagefind=False, consumed=False)]
    for kind in ("index", "filter", "fragment"):
        (into / kind).mkdir(parents=True, exist_ok=True)
    put_in: list[tuple[int, PageKey, int]] = []  # (position among the old pages, key, number)
    added: list[Any] = []
    part_meta = _part_meta(part, language, meta)
    if part is not None and part_meta is not None:
        part_keys = fragment_keys(part)
        for number, page in enumerate(part_meta[_PAGES]):
            key = part_keys[page[0]]
            put_in.append((bisect.bisect_left(keys, key), key, number))
        added = part_meta[_PAGES]
        sources.append(_Source(part, part_meta, [_LEFT_OUT] * len(added), True, True))
        for fragment in sorted({page[0] + _FRAGMENT for page in added}):
            os.replace(part / "fragment" / fragment, into / "fragment" / fragment)
    put_in.sort()
    taken_out = set(left.values())
    pages: list[Any] = []
    waiting = iter(put_in)
    coming = next(waiting, None)
    for at in range(len(meta[_PAGES]) + 1):
        while coming is not None and coming[0] == at:
            sources[1].numbers[coming[2]] = len(pages)
            pages.append(added[coming[2]])
            coming = next(waiting, None)
        if at < len(meta[_PAGES]) and at not in taken_out:
            old_numbers[at] = len(pages)
            pages.append(meta[_PAGES][at])
    renumbered = len(pages) != len(meta[_PAGES]) or any(
        number not in (at, _LEFT_OUT) for at, number in enumerate(old_numbers)
    )
    touched, published = None, None
    if not renumbered:  # the words whose pages' entries differ: ~10 of a run's ~2,000
        taken = [left[page[0]] for page in old_meta[_PAGES]] if old_meta else []
        was = _entries_by_word(old_part, old_meta, taken)
        now = _entries_by_word(part, part_meta, sources[1].numbers if part_meta else [])
        # By word, its entries in the pages put in (None: none there).
        differ = [word for word in was.keys() | now.keys() if was.get(word) != now.get(word)]
        touched = {word: now.get(word) for word in differ}
        if old_part is not None and old_meta is not None:
            published = _Source(old_part, old_meta, taken, by_pagefind=True, consumed=False)
    spliced_meta = _joined_meta(sources, pages, into, language, touched, published)
    body = encode(spliced_meta)
    name = _name(language, hashlib.sha256(body).hexdigest(), 10, set())
    _write(into / f"pagefind.{name}.pf_meta", body)
    spliced = {
        **entry,
        "languages": {language: {**details, "hash": name, "page_count": len(pages)}},
    }
    text = json.dumps(spliced, separators=(",", ":"), ensure_ascii=False)
    (into / ENTRY).write_text(text, encoding="utf-8")
    kept = {*_files_named(spliced_meta), f"pagefind.{name}.pf_meta"}
    kept.update(f"fragment/{page[0]}{_FRAGMENT}" for page in added)
    old = [
        *_files_named(meta),
        meta_name,
        *(f"fragment/{meta[_PAGES][at][0]}{_FRAGMENT}" for at in sorted(taken_out)),
    ]
    return [path for path in old if path not in kept]


def _part_meta(part: Path | None, language: str, meta: Any) -> Any:
    """The metadata of the index Pagefind wrote into `part` (None: none, or no page), which
    is to be spliced into an index of `language` whose metadata is `meta`."""
    if part is None:
        return None
    part_entry = _entry(part)
    if set(part_entry["languages"]) - {language}:
        raise IndexFormatError("pages of another language: made again whole")
    if language not in part_entry["languages"]:
        return None
    part_meta = read(part / f"pagefind.{part_entry['languages'][language]['hash']}.pf_meta")
    _check_sorts(part_meta)
    if set(part_meta[_FIELDS]) - set(meta[_FIELDS]):
        raise IndexFormatError("a new metadata field: made again whole")
    return part_meta


def _entries_by_word(part: Path | None, part_meta: Any, numbers: list[int]) -> dict[str, Any]:
    """Each word of the index Pagefind wrote into `part` (None: none), its page entries (and
    its variants') each with the page's number `numbers` gives, in order."""
    if part is None or part_meta is None:
        return {}
    found = {}
    for chunk in part_meta[_CHUNKS]:
        for word, pages, variants in read(part / "index" / f"{chunk[2]}.pf_index")[0]:
            forms = {form: _absolute(listed, numbers) for form, listed in variants}
            found[word] = (
                sorted(_absolute(pages, numbers), key=_FIRST),
                {form: sorted(listed, key=_FIRST) for form, listed in forms.items()},
            )
    return found


def _files_named(meta: Any) -> list[str]:
    """The chunk and filter files a metadata file names, relative to its index's folder."""
    return [
        *(f"index/{chunk[2]}.pf_index" for chunk in meta[_CHUNKS]),
        *(f"filter/{found[1]}.pf_filter" for found in meta[_FILTERS]),
    ]


def _entry(index: Path) -> Any:
    """The entry file of the index in the folder `index`, of the version pinned."""
    entry = json.loads((index / ENTRY).read_text(encoding="utf-8"))
    if entry.get("version") != PAGEFIND_VERSION:
        raise IndexFormatError(
            f"{ENTRY} is of pagefind {entry.get('version')!r}: sitegen rewrites the index "
            f"of pagefind {PAGEFIND_VERSION} only (pip install 'sitegen[search]')"
        )
    return entry


class _Keys(Sequence[PageKey]):
    """The key of each page of an index, by page number, each read from its fragment when
    first asked for: a search among the pages in key order reads ~15 of 25,000."""

    def __init__(self, index: Path, pages: list[Any]) -> None:
        self._index = index
        self._pages = pages
        self._read: dict[int, PageKey] = {}

    def __len__(self) -> int:
        return len(self._pages)

    @overload
    def __getitem__(self, at: int) -> PageKey: ...
    @overload
    def __getitem__(self, at: slice) -> Sequence[PageKey]: ...
    def __getitem__(self, at: int | slice) -> PageKey | Sequence[PageKey]:
        if isinstance(at, slice):
            return [self[n] for n in range(*at.indices(len(self)))]
        if at not in self._read:
            self._read[at] = _key(self._index, self._pages[at][0])
        return self._read[at]


class _Source(NamedTuple):
    """An index whose pages go into the one being made."""

    folder: Path  # where its chunks and filters are
    meta: Any  # the value of its metadata file
    numbers: list[int]  # by its own page number, the page's in the index made, or _LEFT_OUT
    by_pagefind: bool  # Pagefind's own output (its filter values text), else one made here
    consumed: bool  # its chunk and filter files removed once read


def _merged_meta(
    metas: list[tuple[Path, Any]], into: Path, language: str, keys: Mapping[str, PageKey]
) -> list[Any]:
    """One language's metadata of the parts `metas`, their chunks and filters written into
    `into`: every page numbered by its key (a page's fragment, named by its hash, says which
    page it is: `keys` where it holds it), whichever part and place Pagefind gave it."""
    held: list[tuple[PageKey, str, int, int]] = []  # (key, fragment, part, number in the part)
    for part, (_, meta) in enumerate(metas):
        _check_sorts(meta)
        held += [
            (keys.get(page[0]) or _key(into, page[0]), page[0], part, n)
            for n, page in enumerate(meta[_PAGES])
        ]
    held.sort()
    numbers = [[0] * len(meta[_PAGES]) for _, meta in metas]  # by part and old number, the new
    for new, (_, _, part, old) in enumerate(held):
        numbers[part][old] = new
    pages = [metas[part][1][_PAGES][old] for _, _, part, old in held]
    sources = [
        _Source(folder, meta, number, by_pagefind=True, consumed=True)
        for (folder, meta), number in zip(metas, numbers, strict=True)
    ]
    return _joined_meta(sources, pages, into, language)


def _check_sorts(meta: Any) -> None:
    if meta[_SORTS]:
        raise IndexFormatError("the index has sorts (data-pagefind-sort): not merged")


def _joined_meta(
    sources: list[_Source],
    pages: list[Any],
    into: Path,
    language: str,
    touched: dict[str, Any] | None = None,
    published: _Source | None = None,
) -> list[Any]:
    """The metadata of the index of `pages` (numbered) made of `sources`, its chunks and
    filters written into `into`. `touched`: where the first source is an index this module
    made whose pages kept their numbers, the words whose page entries changed, each with its
    entries in the pages put in (`_entries_by_word`'s; None: none there): only the chunks
    about them are made again (None: every chunk); and its filters that the pages `published`
    (the index of the published versions of those taken out) had as the pages put in have
    them are kept as they are."""
    fields: list[str] = []
    for source in sources:
        fields.extend(field for field in source.meta[_FIELDS] if field not in fields)
    bounds = [None, *(CUT_BEFORE if len(pages) >= CUT_FROM_PAGES else ()), None]
    names: set[str] = set()
    if touched is not None:
        chunks = _spliced_chunks(sources, bounds, touched, into, language, names)
    else:
        # Each stretch of words is joined by a process of its own, into files named by
        # digest; named as Pagefind names them once all are written.
        written = process.forked_calls(
            [
                functools.partial(_stretch_written, sources, into, low, high)
                for low, high in itertools.pairwise(bounds)
            ]
        )
        chunks = [
            _chunk_named(into, language, names, *made)
            for made in itertools.chain.from_iterable(written)
        ]
    for source in sources:
        if source.consumed:
            for chunk in source.meta[_CHUNKS]:
                (source.folder / "index" / f"{chunk[2]}.pf_index").unlink()
    put_in: dict[str, dict[str, set[int]]] = {}
    for source in sources[1:]:
        _filter_values(source, put_in)
    kept: dict[str, str] = {}  # by name, the first source's filters kept as they are
    if touched is not None:
        # A run's value edited changes none of its pages' filter values: ~0.06 s a splice
        # on the real catalog read, joined and written again the same.
        taken: dict[str, dict[str, set[int]]] = {}
        if published is not None:
            _filter_values(published, taken)
        kept = {
            str(name): file_hash
            for name, file_hash in sources[0].meta[_FILTERS]
            if _pairs(taken.get(str(name), {})) == _pairs(put_in.get(str(name), {}))
        }
    values: dict[str, dict[str, set[int]]] = {}
    _filter_values(sources[0], values, set(kept))
    for filter_name, shown in put_in.items():
        if filter_name not in kept:
            for value, found in shown.items():
                values.setdefault(filter_name, {}).setdefault(value, set()).update(found)
    filters = []
    for filter_name in sorted(values.keys() | kept.keys()):
        if filter_name in kept:
            if len(kept[filter_name]) != len(language) + 8 or kept[filter_name] in names:
                raise IndexFormatError("two filters' names alike: made again whole")
            names.add(kept[filter_name])
            filters.append([filter_name, kept[filter_name]])
            continue
        shown = values[filter_name]
        renumbered = sorted(
            [[value, sorted(found - {_LEFT_OUT})] for value, found in shown.items()],
            key=_by_value,
        )
        renumbered = [value for value in renumbered if value[1]]  # only left-out pages had it
        if not renumbered:
            continue
        body = encode([filter_name, renumbered])
        found_name = _name(language, hashlib.sha256(body).hexdigest(), 7, names)
        _write(into / "filter" / f"{found_name}.pf_filter", body)
        filters.append([filter_name, found_name])
    return [sources[0].meta[0], pages, chunks, filters, [], fields]


def _filter_values(
    source: _Source, values: dict[str, dict[str, set[int]]], left: Collection[str] = ()
) -> None:
    """Add to `values` (by filter name, by value as the interface shows it: the numbers of its
    pages) those of the filters of `source`, but the filters named in `left`."""
    for filter_name, filter_hash in source.meta[_FILTERS]:
        path = source.folder / "filter" / f"{filter_hash}.pf_filter"
        if str(filter_name) not in left:
            shown = values.setdefault(str(filter_name), {})
            for value, found in read(path)[1]:
                shown_value = filter_value_html(value) if source.by_pagefind else str(value)
                shown.setdefault(shown_value, set()).update(source.numbers[p] for p in found)
        if source.consumed:
            path.unlink()


def _pairs(shown: dict[str, set[int]]) -> set[tuple[str, int]]:
    return {(value, number) for value, found in shown.items() for number in found}


def _stretch_written(
    sources: list[_Source], into: Path, low: str | None, high: str | None
) -> list[tuple[str, str, str]]:
    """The words from `low` up to (not including) `high` (None: no bound) of `sources`,
    joined and cut into chunks of CHUNK_ENTRIES, each written into `into`/index as
    `.<sha256 of its CBOR>`: (first word, last word, that digest) of each, in order."""
    # ~1.8M decoded entries on the real catalog, lists without cycles freed chunk by chunk:
    # the collector's passes over them were ~0.4 s of the merge's (docs/performance.md).
    with process.not_collecting():
        return _stretch(sources, into, low, high)


def _stretch(
    sources: list[_Source], into: Path, low: str | None, high: str | None
) -> list[tuple[str, str, str]]:
    return list(_chunks_staged(sources, into, low, high))


def _chunks_staged(
    sources: list[_Source], into: Path, low: str | None, high: str | None
) -> Iterator[tuple[str, str, str]]:
    """The words from `low` up to `high` (None: no bound) of `sources` joined and cut into
    chunks (`_cut_after`), each written into `into`/index as `.<sha256 of its CBOR>` once
    cut: (first word, last word, that digest) of each, in order; read as far as asked."""
    chunk: list[list[Any]] = []
    entries = 0
    for word, found, variants in _joined([_words(source, low, high) for source in sources]):
        chunk.append(row := _row(word, found, variants))
        entries += _row_entries(row)
        if _cut_after(word, entries):
            yield _chunk_staged(into, chunk)
            chunk, entries = [], 0
    if chunk:
        yield _chunk_staged(into, chunk)


def _row(word: str, found: list[list[Any]], variants: dict[str, list[list[Any]]]) -> list[Any]:
    """A word's row of a chunk, from its pages and its variants' (`_joined`'s)."""
    forms = [[form, _deltas(variants[form])] for form in sorted(variants)]
    return [word, _deltas(found), forms]


def _row_entries(row: list[Any]) -> int:
    """How many page entries a chunk's row holds, its variants' included."""
    return len(row[1]) + sum(len(pages) for _, pages in row[2])


def _cut_after(word: str, entries: int) -> bool:
    """Whether a chunk that holds `entries` page entries, `word` the last, ends there."""
    if entries < CHUNK_ENTRIES // 2:
        return False
    return entries >= 2 * CHUNK_ENTRIES or zlib.crc32(word.encode()) % CHUNK_SPREAD == 0


def _spliced_chunks(
    sources: list[_Source],
    bounds: list[str | None],
    touched: Mapping[str, Any],
    into: Path,
    language: str,
    names: set[str],
) -> list[list[Any]]:
    """The chunks of the index of `sources` whose first (an index this module made) keeps
    every page number: its own chunks, but those about the words `touched` (with their
    entries in the pages put in: `_joined_meta`), made
    again from the cut before the first such up to a cut that was one before (a cut depends
    on the words since the last: the chunks past it are the same) or the stretch's end.
    IndexFormatError where a chunk's name would not be the one a whole merge gives it."""
    old = sources[0].meta[_CHUNKS]
    firsts = [chunk[0] for chunk in old]
    cuts = [bound for bound in bounds[1:-1] if bound is not None]
    stretch = [bisect.bisect_right(cuts, first) for first in firsts]
    ends = {chunk[1]: at for at, chunk in enumerate(old)}  # a chunk's last word: which chunk
    words = sorted(touched)
    again: dict[int, list[str]] = {}  # by chunk, its words touched
    for word in words:
        at = bisect.bisect_right(firsts, word) - 1  # the chunk of its words, or before a gap
        if at < 0 or stretch[at] != bisect.bisect_right(cuts, word):
            at += 1  # before its stretch's first word: the stretch's first chunk
            if at == len(old) or stretch[at] != bisect.bisect_right(cuts, word):
                raise IndexFormatError(f"{word!r}: the first word of its part of the index")
        again.setdefault(at, []).append(word)
    # Each touched word as the pages put in hold it: a `_words` item, for `_joined`.
    put_in = {word: (word, *entries) for word, entries in touched.items() if entries is not None}
    chunks: list[list[Any] | tuple[str, str, str]] = []  # kept, or made: (first, last, digest)
    at = 0
    while at < len(old):
        if at not in again:
            chunks.append(old[at])
            at += 1
            continue
        # Most often no cut moves (a run's value edited: a few words of its pages each on a
        # page more or fewer): only those words' rows are made again (~0.3 s a splice saved
        # on the real catalog, where the words from the chunk's first were joined again).
        last_of_stretch = at + 1 == len(old) or stretch[at + 1] != stretch[at]
        rows = _rows_patched(sources[0], old[at], again[at], put_in, last_of_stretch)
        if rows is not None:
            chunks.append(_chunk_staged(into, rows))
            at += 1
            continue
        first_of_stretch = at == 0 or stretch[at - 1] != stretch[at]
        low = bounds[stretch[at]] if first_of_stretch else firsts[at]
        high = bounds[stretch[at] + 1]
        at = next((n for n in range(at, len(old)) if stretch[n] != stretch[at]), len(old))
        with process.not_collecting():
            for made in _chunks_staged(sources, into, low, high):
                chunks.append(made)
                was = ends.get(made[1])
                if was is None or (was + 1 < len(old) and was + 1 >= at):
                    continue  # not a cut before, or one across a stretch's end
                following = firsts[was + 1] if was + 1 < at else high
                next_touched = bisect.bisect_right(words, made[1])
                if next_touched == len(words) or (
                    following is not None and words[next_touched] >= following
                ):
                    at = was + 1  # every word from here to the next chunk made again: as before
                    break
    names.update(chunk[2] for chunk in chunks if isinstance(chunk, list))
    named = [
        chunk if isinstance(chunk, list) else _chunk_named(into, language, names, *chunk)
        for chunk in chunks
    ]
    if any(len(chunk[2]) != len(language) + 8 for chunk in named):
        raise IndexFormatError("two chunks' names alike: made again whole")
    return named


def _rows_patched(
    source: _Source,
    chunk: list[Any],
    words: list[str],
    put_in: dict[str, tuple[str, Any, Any]],
    last_of_stretch: bool,
) -> list[list[Any]] | None:
    """The rows of the chunk `chunk` of `source` (an index this module made, every page kept
    at its number) with those of `words` joined again from it and `put_in` (by word, its
    `_words` item from the pages put in): new words put in their place, words left with no
    page taken out. They are what `_chunks_staged` makes of the stretch from the chunk's
    first word where, counted from there, no word but the last is one to cut after, and the
    last is (or the chunk ends its stretch: `last_of_stretch`); None where that is not so."""
    rows: list[list[Any]] = read(source.folder / "index" / f"{chunk[2]}.pf_index")[0]
    at = {row[0]: n for n, row in enumerate(rows)}
    absolute = _absolute_kept if _LEFT_OUT in source.numbers else _absolute
    made: dict[str, list[Any] | None] = {}
    for word in words:
        items = [put_in[word]] if word in put_in else []
        if word in at and (item := _row_words(rows[at[word]], source.numbers, absolute)):
            items.insert(0, item)
        made[word] = None
        for joined in _joined([iter([item]) for item in items]):
            made[word] = _row(*joined)
    patched_rows = [row for row in (made.get(row[0], row) for row in rows) if row is not None]
    for word in sorted(word for word in made if word not in at):
        if (row := made[word]) is not None:
            patched_rows.insert(bisect.bisect_left(patched_rows, word, key=_FIRST), row)
    entries = 0
    for number, row in enumerate(patched_rows):
        entries += _row_entries(row)
        if _cut_after(row[0], entries):
            return patched_rows if number == len(patched_rows) - 1 else None
    return patched_rows if patched_rows and last_of_stretch else None


def _chunk_named(
    into: Path, language: str, names: set[str], first: str, last: str, digest: str
) -> list[Any]:
    """A chunk written as `.<digest>`, named as Pagefind names it."""
    name = _name(language, digest, 7, names)
    os.replace(into / "index" / f".{digest}", into / "index" / f"{name}.pf_index")
    return [first, last, name]


def _words(source: _Source, low: str | None, high: str | None) -> Any:
    """A source's words from `low` up to `high` in order: each with its pages and its
    variants' (the forms with diacritics that index under it: `ağaç` under `agac`), pages as
    [new page number, the rest of the entry]; each chunk that may hold one read when reached.
    The pages left out are dropped, and so is a word (or variant) left with none."""
    number = source.numbers
    absolute = _absolute_kept if _LEFT_OUT in number else _absolute
    for chunk in source.meta[_CHUNKS]:
        if (high is not None and chunk[0] >= high) or (low is not None and chunk[1] < low):
            continue
        for word in read(source.folder / "index" / f"{chunk[2]}.pf_index")[0]:
            if (high is not None and word[0] >= high) or (low is not None and word[0] < low):
                continue
            if item := _row_words(word, number, absolute):
                yield item


def _row_words(row: list[Any], number: list[int], absolute: Any) -> tuple[str, Any, Any] | None:
    """A decoded chunk's row as `_words` yields it: (word, pages, variants by form), the pages
    numbered by `number` through `absolute` (`_absolute_kept`: the pages left out dropped, and
    a variant left with none; None for a word left with none); its entries are consumed."""
    variants = {form: absolute(pages, number) for form, pages in row[2]}
    found = absolute(row[1], number)
    if absolute is _absolute_kept:
        variants = {form: pages for form, pages in variants.items() if pages}
        if not found and not variants:
            return None
    return row[0], found, variants


def _absolute(pages: list[list[Any]], number: list[int]) -> list[list[Any]]:
    """`pages` with each delta made the page's new number, in place: the entries are the
    decoded chunk's own, read once (a copy of each cost a third of the merge's Python time)."""
    page = 0
    for entry in pages:
        page += entry[0]
        entry[0] = number[page]
    return pages


def _absolute_kept(pages: list[list[Any]], number: list[int]) -> list[list[Any]]:
    """`_absolute`'s, without the pages left out."""
    return [entry for entry in _absolute(pages, number) if entry[0] != _LEFT_OUT]


def _joined(streams: list[Any]) -> Any:
    """The words of several parts' streams in order, a word's pages (and each variant's)
    from each part joined."""
    for word, found in itertools.groupby(heapq.merge(*streams, key=_word), key=_word):
        pages: list[list[Any]] = []
        variants: dict[str, list[list[Any]]] = {}
        for _, part_pages, part_variants in found:
            pages += part_pages
            for form, form_pages in part_variants.items():
                variants.setdefault(form, []).extend(form_pages)
        yield word, pages, variants


def _word(item: tuple[str, Any, Any]) -> str:
    return item[0]


_FIRST = operator.itemgetter(0)  # a page entry's number: a key in C (~0.25 s a merge in Python)


def _deltas(pages: list[list[Any]]) -> list[list[Any]]:
    """Pages as the index stores them: ascending, each page number the difference from the
    one before it."""
    pages.sort(key=_FIRST)
    before = 0
    for page in pages:
        page[0], before = page[0] - before, page[0]
    return pages


def _chunk_staged(into: Path, words: list[list[Any]]) -> tuple[str, str, str]:
    body = encode([words])
    digest = hashlib.sha256(body).hexdigest()
    _write(into / "index" / f".{digest}", body)
    return words[0][0], words[-1][0], digest


def filter_value_html(value: str) -> str:
    """A filter value as Pagefind's interface needs it: HTML. The indexer stores a value as the
    text of its element (entities decoded) and the interface puts it into the filter list as
    markup (`{@html}` in its filters.svelte), so a kernel or GPU name holding `<img …>` would
    become an element there; escaped here, it is shown as the characters it is."""
    return html.escape(neutralised(value))


def fragment_keys(index: Path) -> dict[str, PageKey]:
    """The key of each page of the index Pagefind wrote into the folder `index`, by the hash
    that names its fragment: read as each part of a build's index is written, beside the
    render (~0.03 ms a page), where the merge would read them after it, in turn."""
    hashes = [
        name.removesuffix(_FRAGMENT)
        for name in os.listdir(os.path.join(index, "fragment"))
        if name.endswith(_FRAGMENT)
    ]
    return {fragment_hash: _key(index, fragment_hash) for fragment_hash in hashes}


def _key(index: Path, fragment_hash: str) -> PageKey:
    name = fragment_hash + _FRAGMENT
    with open(os.path.join(index, "fragment", name), "rb") as file:
        try:
            data = zlib.decompress(file.read(), wbits=31)  # gzip's, its header read in C
        except zlib.error as error:
            raise IndexFormatError(f"{name}: {error}") from None
    if not data.startswith(SIGNATURE):
        raise IndexFormatError(f"{name}: not a Pagefind fragment")
    fragment = orjson.loads(memoryview(data)[len(SIGNATURE) :])
    url, meta = fragment.get("url"), fragment.get("meta", {})
    title = meta.get("title", "") if isinstance(meta, dict) else None
    if not isinstance(url, str) or not isinstance(title, str):
        raise IndexFormatError(f"{name}: its url or title is not a string")
    return PageKey(title, url)


def _by_value(item: list[Any]) -> str:
    return str(item[0])


def _name(language: str, digest: str, length: int, taken: set[str]) -> str:
    """`en_<first hex of digest>` (a file's sha256), longer where it would repeat one in
    `taken`."""
    while (found := f"{language}_{digest[:length]}") in taken:
        length += 1
    taken.add(found)
    return found


def read(path: Path) -> Any:
    """A Pagefind index file's value."""
    data = gzip.decompress(path.read_bytes())
    if not data.startswith(SIGNATURE):
        raise IndexFormatError(f"{path.name}: not a Pagefind index file")
    return decode(data[len(SIGNATURE) :], path.name)


def decode(data: bytes, name: str = "CBOR") -> Any:
    """The one value of CBOR `data`: of the DAG-CBOR subset Pagefind writes (definite lengths,
    integers in their shortest form, no maps, tags or floats), or IndexFormatError."""
    try:
        return cbrrr.decode_dag_cbor(data)
    except (ValueError, OverflowError, RecursionError) as error:  # CbrrrDecodeError too
        raise IndexFormatError(f"{name}: {error}") from None


def encode(value: Any) -> bytes:
    """CBOR, each item in its shortest form (as Pagefind writes it): DAG-CBOR's, whose
    encoder in C is ~9x cbor2's on the real catalog's index (docs/performance.md)."""
    return cbrrr.encode_dag_cbor(value)


def _write(path: Path, body: bytes) -> None:
    # No time in the gzip header: the same index, the same bytes.
    path.write_bytes(gzip.compress(SIGNATURE + body, compresslevel=6, mtime=0))
