"""Pagefind's index files read and written (sitegen/publish/pagefind_format.py): its filters
put in order, nothing else changed."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitegen.publish.pagefind_format import (
    PAGEFIND_VERSION,
    SIGNATURE,
    IndexFormatError,
    decode,
    encode,
    order_filters,
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


def _index(root: Path, filters: list[tuple[str, str, list[list[object]]]]) -> Path:
    """A small index as Pagefind writes one: filters in any order, values in any order."""
    (root / "filter").mkdir(parents=True)
    listed = []
    for name, file_hash, filter_values in filters:
        _write(root / "filter" / f"{file_hash}.pf_filter", [name, filter_values])
        listed.append([name, file_hash])
    meta = [PAGEFIND_VERSION, [["en_aaaaaaa", 12]], [["a", "z", "en_bbbbbbb"]], listed, [], []]
    _write(root / "pagefind.en_0123456789.pf_meta", meta)
    entry = {"version": PAGEFIND_VERSION, "languages": {"en": {"hash": "en_0123456789"}}}
    (root / "pagefind-entry.json").write_text(json.dumps(entry, separators=(",", ":")))
    return root


def test_filters_are_put_in_order_and_renamed(tmp_path: Path) -> None:
    one = _index(
        tmp_path / "one",
        [
            ("Pass", "en_1111111", [["forward", [0, 2]], ["backward", [1]]]),
            ("GPU", "en_2222222", [["H100", [0, 1, 2]]]),
        ],
    )
    two = _index(
        tmp_path / "two",
        [
            ("GPU", "en_3333333", [["H100", [0, 1, 2]]]),
            ("Pass", "en_4444444", [["backward", [1]], ["forward", [0, 2]]]),
        ],
    )
    order_filters(one)
    order_filters(two)
    files = [
        {p.relative_to(r).as_posix(): p.read_bytes() for p in r.rglob("*") if p.is_file()}
        for r in (one, two)
    ]
    assert files[0] == files[1]  # the same index, whatever order Pagefind wrote it in
    entry = json.loads((one / "pagefind-entry.json").read_text())
    (meta_file,) = one.glob("*.pf_meta")
    assert meta_file.name == f"pagefind.{entry['languages']['en']['hash']}.pf_meta"
    meta = read(meta_file)
    assert [name for name, _ in meta[3]] == ["GPU", "Pass"]
    assert meta[1] == [["en_aaaaaaa", 12]] and meta[2] == [["a", "z", "en_bbbbbbb"]]
    passes = read(one / "filter" / f"{meta[3][1][1]}.pf_filter")
    assert passes == ["Pass", [["backward", [1]], ["forward", [0, 2]]]]  # its pages unchanged
    assert len(list((one / "filter").iterdir())) == 2  # the old files gone


def test_an_index_of_another_pagefind_is_refused(tmp_path: Path) -> None:
    root = _index(tmp_path / "i", [])
    (root / "pagefind-entry.json").write_text('{"version": "9.0.0", "languages": {}}')
    with pytest.raises(IndexFormatError, match=r"pagefind '9\.0\.0'.*1\.5\.2"):
        order_filters(root)


def test_what_is_not_an_index_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.pf_filter"
    path.write_bytes(gzip.compress(b"something else"))
    with pytest.raises(IndexFormatError, match="not a Pagefind index file"):
        read(path)
    path.write_bytes(gzip.compress(SIGNATURE + bytes.fromhex("f93c00")))  # a half float
    with pytest.raises(IndexFormatError, match="does not write"):
        read(path)
