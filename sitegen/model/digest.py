"""Canonical JSON (RFC 8785) and sha256 digests: the one definition of identity."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import orjson
import rfc8785

API_VERSION = "kernelindex.dev/v1alpha1"
DIGEST_PATTERN = re.compile(r"^sha256:[0-9a-f]{64}$")

MAX_SAFE_INTEGER = 2**53 - 1
_FAST_FLOAT_RANGE = (1e-4, 1e16)  # where Python's repr and ECMAScript's Number#toString agree

_compact = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), sort_keys=True, allow_nan=False
).encode


# orjson writes floats in fixed notation the way ECMAScript does; in its sorted compact output only
# these can differ from JCS: an integral float ("4096.0", "-0.0"), an exponent (orjson writes 1e-6
# and 1e+16, JCS 0.000001 and 10000000000000000), `null` (orjson writes NaN and ±inf as null, JCS
# refuses them) and a character past U+FFFF (orjson sorts keys by UTF-8 bytes, JCS by UTF-16
# units: the two orders differ only when such a character, a 4-byte UTF-8 sequence, is present).
# Other text, non-ASCII included, both write alike (raw UTF-8; the same escapes for controls).
# OPT_STRICT_INTEGER refuses integers past ±2^53. A string holding one of these patterns only
# sends the value down the slower path. tests/model/test_digest.py checks the equality.
_ORJSON_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER
_ORJSON_RISKY = (b"null", b".0,", b".0]", b".0}")
_EXPONENT = re.compile(rb"[0-9]e[-+]")
_PAST_BMP = re.compile(rb"[\xf0-\xf4]")  # the lead byte of a 4-byte UTF-8 sequence


def _orjson_sorted(value: dict[str, Any]) -> bytes | None:
    """orjson's sorted compact bytes, None where it refuses the value."""
    try:
        return orjson.dumps(value, option=_ORJSON_OPTIONS)
    except (orjson.JSONEncodeError, TypeError):
        return None


def _orjson_canonical(value: dict[str, Any]) -> bytes | None:
    fast = _orjson_sorted(value)
    if fast is None:
        return None
    # Substring tests first (each a fast scan); the regexes only where a cheap test is unsure.
    if any(pattern in fast for pattern in _ORJSON_RISKY):
        return None
    if (b"e-" in fast or b"e+" in fast) and _EXPONENT.search(fast):
        return None
    if not fast.isascii() and _PAST_BMP.search(fast):
        return None
    return fast


class _NeedsReference(Exception):
    """The value holds something only the reference implementation formats exactly."""


def canonical_json(value: Any) -> bytes:
    """RFC 8785 (JCS) bytes of a JSON value: sorted keys, no whitespace, ECMAScript numbers.

    The `rfc8785` package is the definition, in pure Python. Most real documents need nothing
    JCS does differently from sorted, compact JSON once integral floats are written as
    integers, so we take that path when it is provably the same (tests/model/test_digest.py
    checks the two agree) and defer to `rfc8785` otherwise.
    """
    if isinstance(value, dict):
        fast = _orjson_canonical(value)  # orjson (C), when its bytes provably are JCS's
        if fast is not None:
            return fast
    try:
        return _compact(_prepare(value)).encode("utf-8")
    except (_NeedsReference, UnicodeEncodeError):
        return rfc8785.dumps(value)


def _prepare(value: Any) -> Any:
    """A copy `json.dumps` writes exactly as JCS would, or `_NeedsReference`."""
    if isinstance(value, str) or value is True or value is False or value is None:
        return value
    if isinstance(value, int):
        if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            return value
        raise _NeedsReference  # the reference raises its own domain error
    if isinstance(value, float):
        magnitude = abs(value)
        if magnitude < 1e16 and value == int(value):
            # 4096.0 → 4096, -0.0 → 0. Below 1e16 a double's shortest digits are its integer.
            return int(value)
        if _FAST_FLOAT_RANGE[0] <= magnitude < _FAST_FLOAT_RANGE[1]:
            return value  # shortest round-trip digits in fixed notation, in both languages
        raise _NeedsReference
    if isinstance(value, dict):
        for key in value:
            # Python sorts by code point, JCS by UTF-16 unit: they differ only past U+FFFF.
            if not isinstance(key, str) or (not key.isascii() and max(key) > "\uffff"):
                raise _NeedsReference
        return {key: _prepare(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_prepare(item) for item in value]
    raise _NeedsReference


def identity_document(kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    """The part of a resource that is hashed; metadata never is."""
    return {"apiVersion": API_VERSION, "kind": kind, "spec": spec}


def known_canonical_json(value: dict[str, Any], digest_value: str) -> bytes:
    """`canonical_json(value)` for a value whose digest is known (a loaded resource's identity
    document): orjson's sorted bytes when they hash to it, for then they are the bytes that
    were hashed; a hash costs less than proving them JCS's (`_orjson_canonical`'s scans)."""
    fast = _orjson_sorted(value)
    if fast is not None and digest_of_canonical(fast) == digest_value:
        return fast
    return canonical_json(value)


def digest_of_canonical(canonical: bytes) -> str:
    return "sha256:" + hashlib.sha256(canonical).hexdigest()


def digest(kind: str, spec: dict[str, Any]) -> str:
    """`sha256:<hex>` of the canonical `{apiVersion, kind, spec}`.

    `spec` must already be normalised (durations in ns, set-like lists sorted, no nulls).
    """
    return digest_of_canonical(canonical_json(identity_document(kind, spec)))


def short(digest_value: str, length: int = 12) -> str:
    """A display form only: `sha256:` dropped, first `length` hex digits."""
    return digest_value.removeprefix("sha256:")[:length]
