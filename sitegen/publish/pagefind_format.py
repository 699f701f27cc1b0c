"""The one module that reads and writes Pagefind's own index files: its filters put in order.

Pagefind 1.5.2 (the version pinned, `PAGEFIND_VERSION`) writes the values of each filter, and
the list of filters in its metadata file, in the order of a hash map seeded anew by each process
(`build_indexes` in its src/index/mod.rs): the same pages give other filter files, another
metadata file and another `pagefind-entry.json` on every run. `order_filters` rewrites them
sorted, filters by name and values by value, as later Pagefind code does itself; nothing else
changes (the pages each value lists, the word index, the fragments). The files are gzip of
`pagefind_dcd` and CBOR (arrays, strings and integers); each rewritten file is named by the
sha256 of its CBOR, as long as Pagefind names its own.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path
from typing import Any

PAGEFIND_VERSION = "1.5.2"
SIGNATURE = b"pagefind_dcd"
ENTRY = "pagefind-entry.json"
# A metadata file is [version, pages, index_chunks, filters, sorts, meta_fields]; a filter's
# entry there is [name, file hash]; a filter file is [name, [[value, [page numbers]]...]].
_META_FILTERS = 3


class IndexFormatError(ValueError):
    """An index file is not as Pagefind PAGEFIND_VERSION writes it."""


def order_filters(index: Path) -> None:
    """Rewrite the filter files and metadata of the index in `index` in a fixed order."""
    entry_path = index / ENTRY
    entry = json.loads(entry_path.read_text(encoding="utf-8"))
    if entry.get("version") != PAGEFIND_VERSION:
        raise IndexFormatError(
            f"{ENTRY} is of pagefind {entry.get('version')!r}: sitegen orders the filters "
            f"of {PAGEFIND_VERSION}'s index only (pip install 'sitegen[search]')"
        )
    text = entry_path.read_text(encoding="utf-8")
    for language, details in sorted(entry["languages"].items()):
        old_hash = details["hash"]
        meta_path = index / f"pagefind.{old_hash}.pf_meta"
        meta = read(meta_path)
        old_files = [index / "filter" / f"{h}.pf_filter" for _, h in meta[_META_FILTERS]]
        bodies = []
        for name, filter_hash in sorted(meta[_META_FILTERS], key=lambda item: str(item[0])):
            filter_name, values = read(index / "filter" / f"{filter_hash}.pf_filter")
            ordered = sorted(values, key=lambda value: str(value[0]))
            bodies.append((name, encode([filter_name, ordered])))
        for path in old_files:
            path.unlink()
        names: set[str] = set()
        listed = []
        for name, body in bodies:
            found = _name(language, body, 7, names)
            _write(index / "filter" / f"{found}.pf_filter", body)
            listed.append([name, found])
        meta[_META_FILTERS] = listed
        body = encode(meta)
        new_hash = _name(language, body, 10, set())
        meta_path.unlink()
        _write(index / f"pagefind.{new_hash}.pf_meta", body)
        text = text.replace(f'"{old_hash}"', f'"{new_hash}"')
    entry_path.write_text(text, encoding="utf-8")


def _name(language: str, body: bytes, length: int, taken: set[str]) -> str:
    """`en_<first hex of the sha256 of body>`, longer where it would repeat one in `taken`."""
    digest = hashlib.sha256(body).hexdigest()
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
    """The one value of CBOR `data` (of the kinds `encode` writes)."""
    value, end = _decode(data, 0)
    if end != len(data):
        raise IndexFormatError(f"{name}: {len(data) - end} bytes after its value")
    return value


def _write(path: Path, body: bytes) -> None:
    # No time in the gzip header: the same index, the same bytes.
    path.write_bytes(gzip.compress(SIGNATURE + body, compresslevel=9, mtime=0))


def _decode(data: bytes, at: int) -> tuple[Any, int]:
    major, info = data[at] >> 5, data[at] & 31
    at += 1
    if info < 24:
        argument = info
    elif info in (24, 25, 26, 27):
        size = 1 << (info - 24)
        argument, at = int.from_bytes(data[at : at + size], "big"), at + size
    else:
        raise IndexFormatError(f"a CBOR item Pagefind {PAGEFIND_VERSION} does not write: {info}")
    if major == 0:
        return argument, at
    if major == 1:
        return -1 - argument, at
    if major in (2, 3):
        raw = data[at : at + argument]
        return (raw.decode() if major == 3 else bytes(raw)), at + argument
    if major == 4:
        items = []
        for _ in range(argument):
            item, at = _decode(data, at)
            items.append(item)
        return items, at
    if major == 7 and argument in (20, 21, 22):
        return {20: False, 21: True, 22: None}[argument], at
    raise IndexFormatError(f"a CBOR item Pagefind {PAGEFIND_VERSION} does not write: major {major}")


def encode(value: Any) -> bytes:
    """CBOR of arrays, strings, integers, booleans and null, each in its shortest form."""
    if value is None or isinstance(value, bool):
        return bytes([0xF6 if value is None else 0xF5 if value else 0xF4])
    if isinstance(value, int):
        return _head(0, value) if value >= 0 else _head(1, -1 - value)
    if isinstance(value, str):
        raw = value.encode()
        return _head(3, len(raw)) + raw
    if isinstance(value, bytes):
        return _head(2, len(value)) + value
    if isinstance(value, list):
        return _head(4, len(value)) + b"".join(encode(item) for item in value)
    raise TypeError(f"not in Pagefind's index files: {type(value).__name__}")


def _head(major: int, argument: int) -> bytes:
    if argument < 24:
        return bytes([major << 5 | argument])
    for info, size in ((24, 1), (25, 2), (26, 4), (27, 8)):
        if argument < 1 << (8 * size):
            return bytes([major << 5 | info]) + argument.to_bytes(size, "big")
    raise ValueError(f"too large for CBOR: {argument}")
