"""The site's JSON bytes (sitegen/render/compact_json.py): json.dumps's, made by orjson."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitegen.render.compact_json import compact_json, numbers_agree


def _json_values() -> object:

    floats = st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(
        [1e-5, 1e-7, 5e-324, 1e16, 1e21, -0.0, 4096.0, 0.0001, 1.5e-10, 123.456]
    )
    floats |= st.sampled_from([float("nan"), float("inf"), float("-inf")])  # orjson: null
    text = st.text(max_size=12) | st.sampled_from(["rope-", "1e-5", "x0.0000y", "null", "ae-1"])
    return st.recursive(
        st.none() | st.booleans() | st.integers(-(2**70), 2**70) | floats | text,
        lambda children: (
            st.lists(children, max_size=4)
            | st.dictionaries(text, children, max_size=4)
            | st.dictionaries(st.integers(0, 9), children, max_size=2)
        ),
        max_leaves=20,
    )


def test_compact_json_equals_json_dumps() -> None:
    """The twins' orjson path writes exactly what json.dumps writes, or defers to it."""

    from hypothesis import settings

    @given(_json_values())
    @settings(max_examples=600, deadline=None)
    def check(value: object) -> None:
        try:
            expected = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        except (ValueError, TypeError):
            return
        try:
            expected_bytes = expected.encode()
        except UnicodeEncodeError:
            return
        assert compact_json(value, allow_nan=True) == expected_bytes
        assert compact_json(value, allow_nan=True, newline=True) == expected_bytes + b"\n"

    check()
    assert compact_json({"a": 1e-05, "b": [1, 2.5]}) == b'{"a":1e-05,"b":[1,2.5]}'
    # A null is orjson's only where it stands for None (a list page's twin has one a row).
    assert compact_json({"url": None, "v": [1, None]}) == b'{"url":null,"v":[1,null]}'
    nan = {"url": None, "v": [float("nan"), float("-inf")]}
    assert compact_json(nan, allow_nan=True) == b'{"url":null,"v":[NaN,-Infinity]}'
    with pytest.raises(ValueError, match="Out of range float"):
        compact_json(nan)  # json's refusal, not orjson's silent null
    # "e-" inside words does not stop orjson's path; a negative exponent after one does.
    for value in (
        {"gpu": "geforce-rtx", "v": [3e-07, 1.5e-06]},
        {"gpu": "geforce-rtx", "v": 2.5, "w": "e-", "x": "9e-"},
        ["compile-", 7e-10],
    ):
        assert compact_json(value) == json.dumps(value, separators=(",", ":")).encode()
    # Only numbers count: the same characters in a string keep orjson's path (a shape label in
    # every row of a list page's twin); text that looks like a number's start plays safe.
    import orjson

    for text, agree in (
        ({"fixed": "rows=2048 · eps=1e-06 · fp32", "v": [0.5, 12]}, True),
        ({"note": "0.00001 of a second"}, True),
        ({"v": 1e-06}, False),
        ({"v": [0.5, 1e-05]}, False),
        ({"v": -1e-07}, False),
        ({"note": "x:1e-06"}, False),
    ):
        assert numbers_agree(orjson.dumps(text)) is agree, text
        expected = json.dumps(text, ensure_ascii=False, separators=(",", ":")).encode()
        assert compact_json(text) == expected


def test_surely_finite_is_never_sure_of_a_value_holding_nan_or_infinity() -> None:
    """Whatever bits a NaN carries, its sign, wherever it sits and however often the same float
    object recurs (marshal writes a repeated object once, marked for reference), the answer
    is False; over a 100,000 random doubles, True exactly where every float is finite, bar
    the rare chance match (none in these)."""
    import math
    import random
    import struct

    from sitegen.render.compact_json import surely_finite

    def double(bits: int) -> float:
        return float(struct.unpack("<d", struct.pack("<Q", bits))[0])

    negative_nan, payload_nan = double(0xFFF8000000000001), double(0x7FF0000000000001)
    special = [math.nan, math.inf, -math.inf, negative_nan, payload_nan]
    for value in special:
        for holder in (value, [value], [1, {"a": value}], {"x": [value, value]}, [0.5, 0.5, value]):
            assert not surely_finite(holder), holder
    edges = [1.7976931348623157e308, -1.7976931348623157e308, -0.0, 5e-324, 2.0**1023]
    assert surely_finite([*edges, None, "x\x7f\xff", 2**70, -1, -(2**31), 255, b"\xff" * 9])
    assert not surely_finite([type("Text", (str,), {})("a subclass: marshal refuses it")])
    draw = random.Random(38)
    for _ in range(100_000):
        number = double(draw.getrandbits(64))
        assert surely_finite({"v": [number, None]}) is math.isfinite(number), number
