"""Strict JSON: what `json` lets through and the format refuses (duplicate keys, null, NaN,
numbers that overflow or are not exact, lone surrogates, absurd nesting, objects and arrays
beyond a size), each reported with its JSON path. Clean documents take orjson's fast path,
proven equal to the strict parser's value. Content and the manifests a build compares with
(publish/baseline.py) are read by the same parser, each with its own `Limits`.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, NamedTuple

import orjson

from sitegen.model.problems import json_path
from sitegen.model.text import has_surrogate

MAX_DEPTH = 32  # the deepest real resource nests 7 levels
MAX_SAFE_INTEGER = 2**53 - 1  # beyond this, RFC 8785 (IEEE doubles) cannot represent integers
# An integer literal longer than this is out of range whatever its digits: it is refused on its
# length, never converted (int() of thousands of digits is slow, and refused past 4,300).
MAX_INTEGER_TEXT = len(str(-MAX_SAFE_INTEGER))


class Limits(NamedTuple):
    """How big a document may be, beyond what its file size allows, and whether it may hold
    `null` (content never does; a manifest does for an absent kernel)."""

    depth: int
    members: int  # in one object
    items: int  # in one array
    nulls: bool = False


# Content: the models bound each field's lists and maps further (model/values.py).
CONTENT_LIMITS = Limits(depth=MAX_DEPTH, members=1_000, items=100_000)


class _Rejected:
    """A number the format cannot hold; reported with its JSON path after parsing."""

    def __init__(self, text: str, reason: str) -> None:
        self.text = text
        self.reason = reason


class _DuplicateKeys(dict[str, Any]):
    duplicates: list[str]


class _ParseFlags:
    """Set by the parser hooks so a clean document skips the full inspection walk."""

    suspicious = False


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        counts = Counter(key for key, _ in pairs)
        marked = _DuplicateKeys(result)
        marked.duplicates = sorted(key for key, count in counts.items() if count > 1)
        _ParseFlags.suspicious = True
        return marked
    return result


def _integer(text: str) -> int | _Rejected:
    value = int(text) if len(text) <= MAX_INTEGER_TEXT else MAX_SAFE_INTEGER + 1
    if abs(value) > MAX_SAFE_INTEGER:
        _ParseFlags.suspicious = True
        return _Rejected(text, "integer out of range (beyond ±2^53−1, not exact in JSON numbers)")
    return value


def _float(text: str) -> float | _Rejected:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        _ParseFlags.suspicious = True
        return _Rejected(text, "number out of range (overflows a double)")
    if value == 0 and any(digit in "123456789" for digit in text.lower().partition("e")[0]):
        _ParseFlags.suspicious = True  # 1e-400: not zero, and no double is nearer than 0
        return _Rejected(text, "number out of range (underflows a double to 0)")
    return value


def _constant(text: str) -> _Rejected:
    _ParseFlags.suspicious = True
    return _Rejected(text, f"{text} is not valid JSON (numbers must be finite)")


_DECODER = json.JSONDecoder(
    object_pairs_hook=_object, parse_int=_integer, parse_float=_float, parse_constant=_constant
)


_ORJSON_INDENT = orjson.OPT_INDENT_2 | orjson.OPT_STRICT_INTEGER  # refuses ints past ±2^53
_ORJSON_COMPACT = orjson.OPT_STRICT_INTEGER


def parse_clean(data: bytes) -> Any:
    """The value of a document that provably holds nothing `parse_json` would report, else None.

    orjson parses several times faster than `json` with hooks. Its value is the strict
    parser's when the bytes are exactly what orjson writes back (two-space indent plus a
    newline, as the importer writes a file, or compact, as a bulk file's line): then there is
    no duplicate key (it would be lost), no BOM, bad UTF-8, lone surrogate, NaN or overflowing
    number (orjson refuses them), no integer past ±2^53 (OPT_STRICT_INTEGER refuses to write it
    back), and every number is in its shortest form. What remains is checked on the text:
    `null` and nesting. Anything else returns None and takes the strict path, which reports.
    """
    if b"null" in data:
        return None
    if data.count(b"{") + data.count(b"[") > MAX_DEPTH:
        return None
    if data.count(b",") >= CONTENT_LIMITS.members:  # could hold an object or array too big
        return None
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(value, dict):
        return None
    # Only an indented document ends in a newline, and only a compact one does not.
    indented = data.endswith(b"\n")
    try:
        written = orjson.dumps(value, option=_ORJSON_INDENT if indented else _ORJSON_COMPACT)
    except orjson.JSONEncodeError:
        return None
    return value if written + b"\n" * indented == data else None


def parse_json(text: str, limits: Limits = CONTENT_LIMITS) -> tuple[Any, list[tuple[str, str]]]:
    """Parse one JSON text strictly: returns the value and (json path, message) problems.

    Raises `json.JSONDecodeError` for syntax errors (with line and column).
    """
    _ParseFlags.suspicious = False
    try:
        value = _DECODER.decode(text)
    except RecursionError:
        return None, [("$", f"nesting deeper than {limits.depth} levels")]
    # The walk costs more than parsing; the text tells cheaply when it cannot find anything.
    needs_walk = (
        _ParseFlags.suspicious
        or "null" in text
        or "\\ud" in text
        or "\\uD" in text
        or text.count("{") + text.count("[") > limits.depth
        or text.count(",") >= min(limits.members, limits.items)
    )
    return value, _inspect(value, limits) if needs_walk else []


def _inspect(root: Any, limits: Limits) -> list[tuple[str, str]]:
    """Problems the parser lets through: duplicates, nulls, bad numbers, depth, size, lone
    surrogates. An object or array over its limit is one problem, and not looked into."""
    found: list[tuple[str, str]] = []
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(root, ())]
    while stack:
        value, location = stack.pop()
        if len(location) > limits.depth:
            found.append((json_path(location), f"nesting deeper than {limits.depth} levels"))
            continue
        if isinstance(value, dict):
            if len(value) > limits.members:
                found.append(
                    (
                        json_path(location),
                        f"an object of {len(value):,} members, over the limit of "
                        f"{limits.members:,}",
                    )
                )
                continue
            for key in getattr(value, "duplicates", ()):
                found.append((json_path((*location, key)), f"duplicate key {quote(key)}"))
            for key, item in value.items():
                if has_surrogate(key):
                    found.append((json_path(location), "key holds a lone UTF-16 surrogate"))
                stack.append((item, (*location, key)))
        elif isinstance(value, list):
            if len(value) > limits.items:
                found.append(
                    (
                        json_path(location),
                        f"an array of {len(value):,} items, over the limit of {limits.items:,}",
                    )
                )
                continue
            stack.extend((item, (*location, i)) for i, item in enumerate(value))
        elif isinstance(value, _Rejected):
            found.append((json_path(location), value.reason))
        elif value is None and not limits.nulls:
            found.append(
                (
                    json_path(location),
                    "null is not allowed",
                )
            )
        elif isinstance(value, str) and has_surrogate(value):
            found.append((json_path(location), "string holds a lone UTF-16 surrogate"))
    return found


def quote(value: Any, limit: int = 60) -> str:
    """A content string made safe to print on one line: JSON-quoted, ASCII, cut."""
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"
