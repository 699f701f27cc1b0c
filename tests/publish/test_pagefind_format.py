"""Pagefind's index files read and written (sitegen/publish/pagefind_format.py): its filters
put in order, nothing else changed."""

from __future__ import annotations

import gzip
import itertools
import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import sitegen.process
import sitegen.publish.pagefind_format
from sitegen.publish.pagefind_format import (
    PAGEFIND_VERSION,
    SIGNATURE,
    IndexFormatError,
    PageKey,
    canonicalise,
    decode,
    encode,
    filter_value_html,
    fragment_keys,
    merge_parts,
    read,
)

values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.text() | st.binary(),
    lambda inner: st.lists(inner, max_size=5),
    max_leaves=30,
)


@given(values)
def test_what_is_encoded_reads_back(value: object) -> None:
    assert decode(encode(value)) == value


def test_known_encodings() -> None:
    # RFC 8949's examples, in the shortest form.
    assert encode(0) == bytes.fromhex("00") and encode(23) == bytes.fromhex("17")
    assert encode(24) == bytes.fromhex("1818") and encode(1000) == bytes.fromhex("1903e8")
    assert encode(-1) == bytes.fromhex("20") and encode(-1000) == bytes.fromhex("3903e7")
    assert encode("IETF") == bytes.fromhex("6449455446")
    assert encode([1, [2, 3]]) == bytes.fromhex("8201820203")


def _write(path: Path, value: object) -> None:
    path.write_bytes(gzip.compress(SIGNATURE + encode(value), mtime=0))


def _index(
    root: Path,
    urls: list[str],
    words: dict[str, list[int]],
    passes: dict[str, list[int]],
    filter_order: list[str],
    titles: dict[str, str] | None = None,
    places: dict[tuple[str, int], int] | None = None,
) -> Path:
    """A small index as Pagefind writes one: pages numbered in the order of `urls`, each word's
    pages (by number) delta-encoded, filters in `filter_order`, values in any order; a page's
    fragment holds its title where `titles` has one; a word's location on a page is the same
    for all but where `places` (by word and page number) moves it."""
    for folder in ("fragment", "index", "filter"):
        (root / folder).mkdir(parents=True)
    pages = []
    for url in urls:
        fragment = f"en_{abs(hash(url)) % 10**7:07d}"
        said = {"url": url} if titles is None else {"url": url, "meta": {"title": titles[url]}}
        (root / "fragment" / f"{fragment}.pf_fragment").write_bytes(
            gzip.compress(SIGNATURE + json.dumps(said).encode(), mtime=0)
        )
        pages.append([fragment, 10])
    entries = []
    for word, numbers in sorted(words.items()):
        moved = places or {}
        deltas = [
            [b - a, [-5, 1, 2 + moved.get((word, b), 0)], []]
            for a, b in zip([0, *sorted(numbers)], sorted(numbers), strict=False)
        ]
        entries.append([word, deltas, []])
    _write(root / "index" / "en_ccccccc.pf_index", [entries])
    filters = {
        "Pass": ["en_1111111", [[value, sorted(numbers)] for value, numbers in passes.items()]],
        "GPU": ["en_2222222", [["H100", list(range(len(urls)))]]],
    }
    listed = []
    for name in filter_order:
        file_hash, values = filters[name]
        _write(root / "filter" / f"{file_hash}.pf_filter", [name, values])
        listed.append([name, file_hash])
    ranged = [entries[0][0], entries[-1][0]] if entries else ["a", "z"]  # its first, last word
    meta = [PAGEFIND_VERSION, pages, [[*ranged, "en_ccccccc"]], listed, [], ["title"]]
    _write(root / "pagefind.en_0123456789.pf_meta", meta)
    entry = {"version": PAGEFIND_VERSION, "languages": {"en": {"hash": "en_0123456789"}}}
    (root / "pagefind-entry.json").write_text(json.dumps(entry, separators=(",", ":")))
    return root


def _pages_of(root: Path) -> dict[str, list[str]]:
    """Each word's pages, as URLs, read back through the metadata and the fragments."""
    entry = json.loads((root / "pagefind-entry.json").read_text())
    meta = read(root / f"pagefind.{entry['languages']['en']['hash']}.pf_meta")
    urls = [
        json.loads(gzip.decompress((root / "fragment" / f"{h}.pf_fragment").read_bytes())[12:])[
            "url"
        ]
        for h, _ in meta[1]
    ]
    found = {}
    for _, _, chunk in meta[2]:
        for word, pages, _ in read(root / "index" / f"{chunk}.pf_index")[0]:
            numbers = list(itertools.accumulate(page[0] for page in pages))
            assert numbers == sorted(numbers) and all(page[0] > 0 for page in pages[1:])
            found[word] = [urls[n] for n in numbers]
    for _, filter_hash in meta[3]:
        name, values = read(root / "filter" / f"{filter_hash}.pf_filter")
        for value, numbers in values:
            assert numbers == sorted(numbers)
            found[f"{name}={value}"] = [urls[n] for n in numbers]
    return found


def test_pages_are_numbered_by_url_and_filters_put_in_order(tmp_path: Path) -> None:
    """Two indexes of the same three pages, walked in two orders: the same bytes once
    canonicalised, and every word and filter value still lists its own pages."""
    one = _index(
        tmp_path / "one",
        ["/b/", "/a/", "/c/"],
        {"layer": [0, 2], "norm": [1]},  # layer: /b/ and /c/; norm: /a/
        {"forward": [0, 2], "backward": [1]},
        ["Pass", "GPU"],
    )
    two = _index(
        tmp_path / "two",
        ["/c/", "/b/", "/a/"],
        {"layer": [0, 1], "norm": [2]},
        {"backward": [2], "forward": [1, 0]},
        ["GPU", "Pass"],
    )

    def as_sets(found: dict[str, list[str]]) -> dict[str, set[str]]:
        return {key: set(urls) for key, urls in found.items()}

    assert as_sets(_pages_of(one)) == as_sets(_pages_of(two))  # the same pages, two numberings
    canonicalise(one)
    canonicalise(two)
    files = [
        {p.relative_to(r).as_posix(): p.read_bytes() for p in r.rglob("*") if p.is_file()}
        for r in (one, two)
    ]
    assert files[0] == files[1]  # the same index, whatever order Pagefind walked the pages in
    assert _pages_of(one) == {
        "layer": ["/b/", "/c/"],
        "norm": ["/a/"],
        "GPU=H100": ["/a/", "/b/", "/c/"],
        "Pass=backward": ["/a/"],
        "Pass=forward": ["/b/", "/c/"],
    }
    entry = json.loads((one / "pagefind-entry.json").read_text())
    (meta_file,) = one.glob("*.pf_meta")
    assert meta_file.name == f"pagefind.{entry['languages']['en']['hash']}.pf_meta"
    meta = read(meta_file)
    assert [name for name, _ in meta[3]] == ["GPU", "Pass"]
    assert len(list((one / "filter").iterdir())) == 2  # the old files gone
    assert len(list((one / "index").iterdir())) == 1


def test_urls_read_ahead_are_taken_for_the_fragments_they_name_the_rest_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`fragment_keys` of a part, handed to the merge, spare it reading those fragments again
    (it reads no fragment when every one is named) and give the very bytes of a merge that
    read them all; a fragment missing from them is read."""
    words = {"layer": [0, 2], "norm": [1]}
    passes = {"forward": [0, 2], "backward": [1]}
    one = _index(tmp_path / "one", ["/b/", "/a/", "/c/"], words, passes, ["Pass", "GPU"])
    two = _index(tmp_path / "two", ["/e/", "/d/"], {"norm": [0, 1]}, {"forward": [0, 1]}, ["GPU"])
    ahead = fragment_keys(one) | fragment_keys(two)
    assert sorted(key.url for key in ahead.values()) == ["/a/", "/b/", "/c/", "/d/", "/e/"]
    copies = [tmp_path / "copy-one", tmp_path / "copy-two"]
    shutil.copytree(one, copies[0])
    shutil.copytree(two, copies[1])
    merge_parts(copies, tmp_path / "read")  # every fragment read by the merge
    reads: list[str] = []
    key = sitegen.publish.pagefind_format._key

    def counted(index: Path, fragment_hash: str) -> PageKey:
        reads.append(fragment_hash)
        return key(index, fragment_hash)

    monkeypatch.setattr(sitegen.publish.pagefind_format, "_key", counted)
    merge_parts([one, two], tmp_path / "ahead", ahead)
    assert reads == []
    files = [
        {p.relative_to(r).as_posix(): p.read_bytes() for p in r.rglob("*") if p.is_file()}
        for r in (tmp_path / "read", tmp_path / "ahead")
    ]
    assert files[0] == files[1]
    one = _index(tmp_path / "one-again", ["/b/", "/a/", "/c/"], words, passes, ["Pass"])
    (skipped, _), *named = sorted(fragment_keys(one).items())
    reads.clear()
    merge_parts([one], tmp_path / "partly", dict(named))
    assert reads == [skipped]


def test_a_fragment_that_is_not_gzip_is_refused_in_one_line(tmp_path: Path) -> None:
    root = _index(tmp_path / "one", ["/a/"], {"norm": [0]}, {"forward": [0]}, ["Pass"])
    (fragment,) = (root / "fragment").iterdir()
    fragment.write_bytes(b"not gzip")
    with pytest.raises(IndexFormatError, match=rf"^{fragment.name}: Error -3 .*header"):
        fragment_keys(root)


@pytest.mark.parametrize("cpus", [1, 2])
def test_a_big_index_is_cut_before_fixed_words_in_one_process_or_several(
    cpus: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From CUT_FROM_PAGES pages the words are cut before each of CUT_BEFORE, each stretch
    joined by a process of its own where there are CPUs: every word keeps its pages, and the
    bytes are the same however many processes made them."""
    monkeypatch.setattr(sitegen.publish.pagefind_format, "CUT_FROM_PAGES", 3)
    monkeypatch.setattr(sitegen.publish.pagefind_format, "CUT_BEFORE", ("layer", "p"))
    monkeypatch.setattr(sitegen.process, "usable_cpus", lambda: cpus)
    found = {"backward": "a", "layer": "bc", "norm": "a", "rms": "c", "zeta": "b"}
    passes = {"forward": "bc", "backward": "a"}

    def numbered(urls: list[str], pages: dict[str, str]) -> dict[str, list[int]]:
        return {key: sorted(urls.index(f"/{page}/") for page in on) for key, on in pages.items()}

    urls = ["/b/", "/a/", "/c/"]
    root = _index(
        tmp_path / "i", urls, numbered(urls, found), numbered(urls, passes), ["Pass", "GPU"]
    )
    whole = _pages_of(root)
    canonicalise(root)
    assert _pages_of(root) == {k: sorted(v) for k, v in whole.items()}
    (meta_file,) = root.glob("*.pf_meta")
    chunks = read(meta_file)[2]
    assert [(first, last) for first, last, _ in chunks] == [
        ("backward", "backward"),
        ("layer", "norm"),
        ("rms", "zeta"),
    ]
    assert sorted(p.name for p in (root / "index").iterdir()) == sorted(
        f"{name}.pf_index" for _, _, name in chunks
    )  # the parts' own chunks and the staged files gone
    one = tmp_path / "one"
    monkeypatch.setattr(sitegen.process, "usable_cpus", lambda: 1)
    urls = ["/c/", "/a/", "/b/"]
    canonicalise(_index(one, urls, numbered(urls, found), numbered(urls, passes), ["GPU", "Pass"]))
    files = [
        {p.relative_to(r).as_posix(): p.read_bytes() for p in r.rglob("*") if p.is_file()}
        for r in (root, one)
    ]
    assert files[0] == files[1]


def test_filter_values_become_html_that_shows_their_own_characters(tmp_path: Path) -> None:
    """Pagefind's interface puts a filter value into the page as markup: a pass (or a kernel,
    GPU or implementation name, all from content) holding elements is escaped in the index."""
    hostile = '<img src=x onerror="alert(1)"><a href="https://evil.example">x</a> & \u202eevil'
    root = _index(
        tmp_path / "i", ["/a/", "/b/"], {"a": [0]}, {hostile: [0], "forward": [1]}, ["Pass", "GPU"]
    )
    canonicalise(root)
    assert _pages_of(root)["Pass=" + filter_value_html(hostile)] == ["/a/"]
    assert filter_value_html(hostile) == (
        "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&lt;a href=&quot;https://evil.example&quot;"
        "&gt;x&lt;/a&gt; &amp; \\u202eevil"
    )
    assert filter_value_html("NVIDIA H100 80GB HBM3") == "NVIDIA H100 80GB HBM3"
    assert filter_value_html("line\nbreak\u2028\x1b[31m") == "line\\nbreak\\u2028\\x1b[31m"


def test_an_index_of_another_pagefind_is_refused(tmp_path: Path) -> None:
    root = _index(tmp_path / "i", ["/a/"], {"a": [0]}, {"forward": [0]}, ["Pass", "GPU"])
    (root / "pagefind-entry.json").write_text('{"version": "9.0.0", "languages": {}}')
    with pytest.raises(IndexFormatError, match=r"pagefind '9\.0\.0'.*1\.5\.2"):
        canonicalise(root)


def test_what_is_not_an_index_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.pf_filter"
    path.write_bytes(gzip.compress(b"something else"))
    with pytest.raises(IndexFormatError, match="not a Pagefind index file"):
        read(path)
    path.write_bytes(gzip.compress(SIGNATURE + bytes.fromhex("8301")))  # three items, one given
    with pytest.raises(IndexFormatError, match=r"^x\.pf_filter: "):
        read(path)


@pytest.mark.parametrize(
    "cbor",
    [
        "9f01ff",  # an array of no stated length
        "1817",  # 23 in two bytes: not its shortest form
        "a10102",  # a map
        "0102",  # a second value after the first
        "61ff",  # a text that is not UTF-8
    ],
)
def test_cbor_pagefind_never_writes_is_refused_in_one_line(cbor: str, tmp_path: Path) -> None:
    """What is read is CBOR as Pagefind writes it (DAG-CBOR's subset): anything else, an
    IndexFormatError naming the file, never another exception."""
    path = tmp_path / "en_1.pf_index"
    path.write_bytes(gzip.compress(SIGNATURE + bytes.fromhex(cbor)))
    with pytest.raises(IndexFormatError, match=r"^en_1\.pf_index: \S"):
        read(path)


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("cpus", [1, 2])
def test_a_spliced_index_is_the_index_of_its_pages_made_from_scratch(
    cpus: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An incremental build's change: /b/ indexed again with other words and another filter
    value, /e/ new, /c/ gone. The files written and those to delete make the index the merge of
    the new pages from scratch gives, byte for byte; a filter value already HTML is not
    escaped again; the words and values only the pages gone had are gone."""
    monkeypatch.setattr(sitegen.publish.pagefind_format, "CUT_FROM_PAGES", 3)
    monkeypatch.setattr(sitegen.publish.pagefind_format, "CUT_BEFORE", ("m",))
    monkeypatch.setattr(sitegen.process, "usable_cpus", lambda: cpus)
    before = {"/a/": ["layer", "zeta"], "/b/": ["layer"], "/c/": ["only"], "/d/": ["norm"]}
    after = {"/a/": ["layer", "zeta"], "/b/": ["rms"], "/d/": ["norm"], "/e/": ["layer", "x"]}
    passes_before = {"/a/": "fwd<1>", "/b/": "fwd<1>", "/c/": "gone", "/d/": "bwd"}
    passes_after = {"/a/": "fwd<1>", "/b/": "bwd", "/d/": "bwd", "/e/": "fwd<1>"}

    def made(root: Path, words_of: dict[str, list[str]], pass_of: dict[str, str]) -> Path:
        urls = list(words_of)
        words: dict[str, list[int]] = {}
        passes: dict[str, list[int]] = {}
        for number, url in enumerate(urls):
            for word in words_of[url]:
                words.setdefault(word, []).append(number)
            passes.setdefault(pass_of[url], []).append(number)
        return _index(root, urls, words, passes, ["Pass", "GPU"])

    old = made(tmp_path / "old", before, passes_before)
    canonicalise(old)
    scratch = made(tmp_path / "scratch", after, passes_after)
    canonicalise(scratch)
    part = made(tmp_path / "part", {u: after[u] for u in ("/e/", "/b/")}, passes_after)
    published = made(tmp_path / "published", {u: before[u] for u in ("/c/", "/b/")}, passes_before)
    into = tmp_path / "into"
    gone = sitegen.publish.pagefind_format.splice_index(old, part, published, into)
    assert not part.exists() or not list((part / "index").iterdir())  # consumed
    for path, data in _files(into).items():
        (old / path).parent.mkdir(parents=True, exist_ok=True)
        (old / path).write_bytes(data)
    for path in gone:
        (old / path).unlink()
    assert _files(old) == _files(scratch)
    assert _pages_of(old)["Pass=fwd&lt;1&gt;"] == ["/a/", "/e/"]
    assert "only" not in _pages_of(old) and "Pass=gone" not in _pages_of(old)


def test_an_index_not_to_splice_is_refused_for_a_whole_one(tmp_path: Path) -> None:
    old = _index(tmp_path / "old", ["/a/"], {"norm": [0]}, {"forward": [0]}, ["Pass", "GPU"])
    entry = json.loads((old / "pagefind-entry.json").read_text())
    entry["languages"]["de"] = entry["languages"]["en"]
    (old / "pagefind-entry.json").write_text(json.dumps(entry))
    with pytest.raises(IndexFormatError, match="several languages"):
        sitegen.publish.pagefind_format.splice_index(old, None, old, tmp_path / "into")


def _made(
    root: Path, pages: dict[str, tuple[str, list[str], str]], order: list[str] | None = None
) -> Path:
    """An index of `pages` (URL: title, words in the order the page has them, pass) numbered
    in the order `order` (Pagefind's walk: any), canonicalised unless it is a part."""
    urls = order if order is not None else list(pages)
    words: dict[str, list[int]] = {}
    passes: dict[str, list[int]] = {}
    places: dict[tuple[str, int], int] = {}
    for number, url in enumerate(urls):
        for place, word in enumerate(pages[url][1]):
            words.setdefault(word, []).append(number)
            places[word, number] = place
        passes.setdefault(pages[url][2], []).append(number)
    titles = {url: page[0] for url, page in pages.items()}
    return _index(root, urls, words, passes, ["Pass", "GPU"], titles, places)


def _spliced(
    tmp_path: Path, before: dict[str, tuple[str, list[str], str]], after: dict[str, Any]
) -> tuple[dict[str, bytes], dict[str, bytes], dict[str, bytes]]:
    """The index of `before` with the pages that differ in `after` spliced in, the scratch
    index of `after`, and the files the splice wrote."""
    old = _made(tmp_path / "old", before, sorted(before, reverse=True))
    canonicalise(old)
    scratch = _made(tmp_path / "scratch", after)
    canonicalise(scratch)
    changed = [url for url in after if before.get(url) != after[url]]
    gone = [url for url in before if before[url] != after.get(url)]
    part = _made(tmp_path / "part", after, changed) if changed else None
    published = _made(tmp_path / "published", before, gone) if gone else None
    into = tmp_path / "into"
    deleted = sitegen.publish.pagefind_format.splice_index(old, part, published, into)
    written = _files(into)
    for path, data in written.items():
        (old / path).parent.mkdir(parents=True, exist_ok=True)
        (old / path).write_bytes(data)
    for path in deleted:
        (old / path).unlink()
    return _files(old), _files(scratch), written


def test_a_run_edited_keeps_every_number_and_makes_again_only_the_chunks_of_its_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run's value edited: its URL (its digest) changes, its title does not. Pages are in
    title order, so no page changes number; of ~30 chunks, only those about the words the
    run's page and its kernel's had, and have, are written again, and the index is the
    scratch one byte for byte."""
    monkeypatch.setattr(sitegen.publish.pagefind_format, "CHUNK_ENTRIES", 20)
    monkeypatch.setattr(sitegen.publish.pagefind_format, "CHUNK_SPREAD", 5)
    monkeypatch.setattr(sitegen.publish.pagefind_format, "CUT_FROM_PAGES", 3)
    monkeypatch.setattr(sitegen.publish.pagefind_format, "CUT_BEFORE", ("m",))
    vocabulary = [f"{a}{b}" for a in "abcdefghijklmnopqrstuvwxyz" for b in "aeiou"]
    before = {
        f"/runs/{n:04x}/": (f"run {n}", vocabulary[n % 130 :: 7][:8], ("fwd", "bwd")[n % 2])
        for n in range(0, 400, 3)
    }
    before["/kernels/k/"] = ("kernel k", ["kernel", "bb", "run0030"], "fwd")
    after = dict(before)
    del after["/runs/001e/"]
    after["/runs/ffff/"] = ("run 30", [*before["/runs/001e/"][1], "yy"], "fwd")
    after["/kernels/k/"] = ("kernel k", ["kernel", "bb", "runffff"], "fwd")
    spliced, scratch, written = _spliced(tmp_path, before, after)
    assert spliced == scratch
    chunks = [path for path in scratch if path.startswith("index/")]
    made = [path for path in written if path.startswith("index/")]
    assert len(chunks) > 20 and 0 < len(made) < len(chunks) / 2


def _small_chunks(monkeypatch: pytest.MonkeyPatch, rng: random.Random) -> list[str]:
    """Chunks of a few entries and two stretches, cut at random (`rng`): a small index cut as
    the real catalog's is; the words its pages are made of."""
    monkeypatch.setattr(sitegen.publish.pagefind_format, "CHUNK_ENTRIES", rng.choice([4, 10]))
    monkeypatch.setattr(sitegen.publish.pagefind_format, "CHUNK_SPREAD", rng.choice([2, 5]))
    monkeypatch.setattr(sitegen.publish.pagefind_format, "CUT_FROM_PAGES", 3)
    monkeypatch.setattr(sitegen.publish.pagefind_format, "CUT_BEFORE", ("m",))
    return [f"{a}{b}" for a in "aelmnz" for b in "aeiouy"]


@pytest.mark.parametrize("seed", range(24))
def test_splices_one_after_another_each_give_the_scratch_index(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build daemon splices into the index its last splice wrote: run pages edited one
    after another, put back as they were, edited again; each splice, reading the chunks the
    splices before it made, gives the scratch index's bytes."""
    rng = random.Random(seed)
    words = _small_chunks(monkeypatch, rng)
    first = {
        f"/p{n}/": (f"t{n}", sorted(rng.sample(words, rng.randrange(2, 8))), "f") for n in range(25)
    }
    index = _made(tmp_path / "index", first)
    canonicalise(index)
    edited = [first]
    for _ in range(2):  # a page's words moved, one dropped, one put in: its value edited
        after = dict(edited[-1])
        url = rng.choice(sorted(after))
        title, found, way = after[url]
        after[url] = (title, [*found[2:], found[1], rng.choice(words)], way)
        edited.append(after)
    # Edited, put back, edited again: each splice reads chunks the ones before it made.
    versions = [first, edited[1], edited[2], edited[1], first, edited[1], first]
    for number, (before, after) in enumerate(itertools.pairwise(versions)):
        changed = [url for url in after if before.get(url) != after[url]]
        gone = [url for url in before if before[url] != after.get(url)]
        part = _made(tmp_path / f"part-{number}", after, changed) if changed else None
        published = _made(tmp_path / f"published-{number}", before, gone) if gone else None
        into = tmp_path / f"into-{number}"
        deleted = sitegen.publish.pagefind_format.splice_index(index, part, published, into)
        for path, data in _files(into).items():
            (index / path).parent.mkdir(parents=True, exist_ok=True)
            (index / path).write_bytes(data)
        for path in deleted:
            (index / path).unlink()
        scratch = _made(tmp_path / f"scratch-{number}", after)
        canonicalise(scratch)
        assert _files(index) == _files(scratch)


@pytest.mark.parametrize("seed", range(60))
def test_any_splice_is_the_index_made_from_scratch(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pages edited, retitled, added and removed at random, words new and gone, across the
    cut between stretches and at either end: the splice gives the scratch index's bytes. An
    even seed only edits pages of titles of their own (each keeps its number, as a run edited
    does: `_spliced_chunks`); an odd one does anything."""
    rng = random.Random(seed)
    words = _small_chunks(monkeypatch, rng)
    fresh = ("aa", "lb", "ma", "nb", "zy")  # words only an edit brings: first, last, between
    edits_only = seed % 2 == 0
    spliced_chunks = sitegen.publish.pagefind_format._spliced_chunks
    rows_patched = sitegen.publish.pagefind_format._rows_patched
    kept_numbers: list[bool] = []
    patched: list[bool] = []  # whether each chunk of touched words had only its rows made again

    def counted(*args: Any) -> Any:
        kept_numbers.append(True)
        return spliced_chunks(*args)

    def rows_counted(*args: Any) -> Any:
        rows = rows_patched(*args)
        patched.append(rows is not None)
        return rows

    monkeypatch.setattr(sitegen.publish.pagefind_format, "_spliced_chunks", counted)
    monkeypatch.setattr(sitegen.publish.pagefind_format, "_rows_patched", rows_counted)
    # Some edits move a page's words and keep them (a run's value edited: each word on the
    # same pages, at other places), so that no cut moves; the others add and drop words.
    same_words = edits_only and rng.random() < 0.5

    def page(n: int) -> tuple[str, list[str], str]:
        title = f"t{n}" if edits_only else f"t{rng.randrange(8)}"
        found = rng.sample([word for word in words if word not in fresh], rng.randrange(1, 8))
        return title, sorted(set(found)), rng.choice("fb")

    before = {f"/p{n}/": page(n) for n in rng.sample(range(60), 25)}
    after = dict(before)
    flipped = False
    for url in rng.sample(sorted(before), rng.randrange(1, 4)):
        title, found, way = before[url]
        if rng.random() < 0.2:
            way, flipped = ("f" if way == "b" else "b"), True  # a filter's value changed
        if rng.random() < 0.5:
            del after[url]
            url = f"/q{url[2:]}"  # the same title under a new URL: a run edited
        if same_words and len(found) > 1:
            after[url] = (title, [*found[1:], found[0]], way)
        else:
            same_words = False
            picked = {*found[1:], *rng.sample(words, 2), rng.choice(fresh)}
            after[url] = (title, sorted(picked), way)
    if not edits_only:
        for _ in range(rng.randrange(0, 2)):
            after[f"/n{rng.randrange(1000)}/"] = page(0)
        for url in rng.sample(sorted(after), rng.randrange(0, 2)):
            del after[url]
    if after == before or not after:
        after[f"/n{seed}/"] = page(100)
    spliced, scratch, written = _spliced(tmp_path, before, after)
    assert spliced == scratch
    assert kept_numbers == [True] or not edits_only
    if edits_only:  # a filter whose values every page keeps is kept as it is, not written
        assert len([path for path in written if path.startswith("filter/")]) == int(flipped)
    if same_words:
        assert patched and all(patched)  # every chunk touched: its rows made again in place
