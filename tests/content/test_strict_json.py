"""Strict JSON: what the format refuses that `json` lets through."""

from __future__ import annotations

import pytest

from sitegen.content.strict_json import parse_json


def test_pathological_nesting_does_not_crash() -> None:
    _, found = parse_json("[" * 100_000 + "]" * 100_000)
    assert found == [("$", "nesting deeper than 32 levels")]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": 1, "a": 2}', "duplicate key"),
        ('{"a": 9007199254740992}', "integer out of range"),
        ('{"a": -1e999}', "overflows a double"),
        ('{"a": 1e-400}', "number out of range (underflows a double to 0)"),
        ('{"a": -0.0000000000000000000000000000000000000000001e-300}', "underflows a double"),
        ('{"a": NaN}', "numbers must be finite"),
        ('{"a": [null]}', "null is not allowed"),
        ('{"\\udc00": 1}', "lone UTF-16 surrogate"),
    ],
)
def test_strict_json_rejects(text: str, message: str) -> None:
    _, found = parse_json(text)
    assert len(found) == 1 and message in found[0][1]


def test_strict_json_accepts_the_largest_exact_integer() -> None:
    value, found = parse_json('{"a": 9007199254740991, "b": -9007199254740991, "c": 1e308}')
    assert found == [] and value["a"] == 2**53 - 1
    value, found = parse_json('{"a": 0.0, "b": -0e-999, "c": 0.000E+5, "d": 1e-320}')
    assert found == [] and value == {"a": 0.0, "b": 0.0, "c": 0.0, "d": 1e-320}
