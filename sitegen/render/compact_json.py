"""JSON as the site writes it: `json.dumps(value, ensure_ascii=False, separators=(",", ":"))`'s
bytes, made by orjson wherever the two provably agree."""

from __future__ import annotations

import json
import marshal
from typing import Any

import orjson


def numbers_agree(data: bytes) -> bool:
    """Whether orjson's bytes spell every number as `json.dumps` does (see `compact_json`)."""
    # orjson writes 1e-05 as 0.00001, 1e-07 as 1e-7. Each pattern is looked for with `find`
    # (cheaper than a regular expression), then tested for being in a number, not
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

    Compact on purpose: `indent` switches json to its pure-Python encoder. orjson writes the
    same bytes many times faster except where its number formatting differs (a float
    below 1e-4: `0.00001`, `1e-7` against `1e-05`, `1e-07`), where it writes NaN as null, and
    where it refuses what json accepts (non-string keys, integers past 64 bits): those go to
    json. tests/render/test_compact_json.py checks the equality. `newline` ends it with "\\n"
    (without copying a big document to append one).
    """
    try:
        fast = orjson.dumps(value, option=orjson.OPT_APPEND_NEWLINE if newline else None)
    except (orjson.JSONEncodeError, TypeError):
        fast = None
    # A null is None only if the bytes read back as the value: a NaN or ±inf written as null
    # reads back as None, which equals neither (list pages' twins hold nulls in every row).
    # Reading back is the exact test (~4 s of CPU over the real catalog's twins, a run's has
    # "speedOfLight": null); `surely_finite` spares it wherever it can tell.
    if (
        fast is not None
        and numbers_agree(fast)
        and (b"null" not in fast or surely_finite(value) or orjson.loads(fast) == value)
    ):
        return fast
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=allow_nan)
    return (text + "\n" if newline else text).encode()


def surely_finite(value: Any) -> bool:
    """Whether no float in `value` is NaN or infinite, told from `marshal`'s bytes of it (~3x
    faster than reading orjson's back): each float is there as its type's byte (b"g", or
    0xE7 where marked for reference) and its 8 bytes little-endian, which for NaN and ±inf end
    in 0xF0-0xFF then 0x7F or 0xFF (the exponent's 11 bits all set). Where those three bytes
    stand as they would, be it by chance in other bytes, or where marshal refuses the value
    (a str subclass, too deep), False: not sure. tests/render/test_compact_json.py."""
    try:
        data = marshal.dumps(value)
    except ValueError:
        return False
    for last in (b"\x7f", b"\xff"):
        at = data.find(last, 8)
        while at != -1:
            if data[at - 1] >= 0xF0 and data[at - 8] in _FLOAT_TYPES:
                return False
            at = data.find(last, at + 1)
    return True


_FLOAT_TYPES = (ord("g"), ord("g") | 0x80)  # marshal's TYPE_BINARY_FLOAT, FLAG_REF or not
