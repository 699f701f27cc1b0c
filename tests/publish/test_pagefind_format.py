"""Pagefind's index files read and written (sitegen/publish/pagefind_format.py): its filters
put in order, nothing else changed."""

from __future__ import annotations

import gzip
import itertools
import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import sitegen.process
import sitegen.publish.pagefind_format
from sitegen.publish.pagefind_format import (
    PAGEFIND_VERSION,
    SIGNATURE,
    IndexFormatError,
    canonicalise,
    decode,
    encode,
    filter_value_html,
    fragment_urls,
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
) -> Path:
    """A small index as Pagefind writes one: pages numbered in the order of `urls`, each word's
    pages (by number) delta-encoded, filters in `filter_order`, values in any order."""
    for folder in ("fragment", "index", "filter"):
        (root / folder).mkdir(parents=True)
    pages = []
    for url in urls:
        fragment = f"en_{abs(hash(url)) % 10**7:07d}"
        (root / "fragment" / f"{fragment}.pf_fragment").write_bytes(
            gzip.compress(SIGNATURE + json.dumps({"url": url}).encode(), mtime=0)
        )
        pages.append([fragment, 10])
    entries = []
    for word, numbers in sorted(words.items()):
        deltas = [b - a for a, b in zip([0, *sorted(numbers)], sorted(numbers), strict=False)]
        entries.append([word, [[d, [-5, 1, 2], []] for d in deltas], []])
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
    meta = [PAGEFIND_VERSION, pages, [["a", "z", "en_ccccccc"]], listed, [], ["title"]]
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
    """`fragment_urls` of a part, handed to the merge, spare it reading those fragments again
    (it reads no fragment when every one is named) and give the very bytes of a merge that
    read them all; a fragment missing from them is read."""
    words = {"layer": [0, 2], "norm": [1]}
    passes = {"forward": [0, 2], "backward": [1]}
    one = _index(tmp_path / "one", ["/b/", "/a/", "/c/"], words, passes, ["Pass", "GPU"])
    two = _index(tmp_path / "two", ["/e/", "/d/"], {"norm": [0, 1]}, {"forward": [0, 1]}, ["GPU"])
    ahead = fragment_urls(one) | fragment_urls(two)
    assert sorted(ahead.values()) == ["/a/", "/b/", "/c/", "/d/", "/e/"]
    copies = [tmp_path / "copy-one", tmp_path / "copy-two"]
    shutil.copytree(one, copies[0])
    shutil.copytree(two, copies[1])
    merge_parts(copies, tmp_path / "read")  # every fragment read by the merge
    reads: list[str] = []
    url = sitegen.publish.pagefind_format._url

    def counted(index: Path, fragment_hash: str) -> str:
        reads.append(fragment_hash)
        return url(index, fragment_hash)

    monkeypatch.setattr(sitegen.publish.pagefind_format, "_url", counted)
    merge_parts([one, two], tmp_path / "ahead", ahead)
    assert reads == []
    files = [
        {p.relative_to(r).as_posix(): p.read_bytes() for p in r.rglob("*") if p.is_file()}
        for r in (tmp_path / "read", tmp_path / "ahead")
    ]
    assert files[0] == files[1]
    one = _index(tmp_path / "one-again", ["/b/", "/a/", "/c/"], words, passes, ["Pass"])
    (skipped, _), *named = sorted(fragment_urls(one).items())
    reads.clear()
    merge_parts([one], tmp_path / "partly", dict(named))
    assert reads == [skipped]


def test_a_fragment_that_is_not_gzip_is_refused_in_one_line(tmp_path: Path) -> None:
    root = _index(tmp_path / "one", ["/a/"], {"norm": [0]}, {"forward": [0]}, ["Pass"])
    (fragment,) = (root / "fragment").iterdir()
    fragment.write_bytes(b"not gzip")
    with pytest.raises(IndexFormatError, match=rf"^{fragment.name}: Error -3 .*header"):
        fragment_urls(root)


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
    into = tmp_path / "into"
    gone = sitegen.publish.pagefind_format.splice_index(old, part, ["/c/", "/z/"], into)
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
        sitegen.publish.pagefind_format.splice_index(old, None, ["/a/"], tmp_path / "into")
