"""The format's shared value rules (sitegen/model/values.py)."""

from __future__ import annotations

import pytest

from sitegen.model.values import check_expression


@pytest.mark.parametrize("good", ["hidden // q_heads", "(a + 2) * b % 3", "x", "7", "a-b"])
def test_derived_axis_grammar_accepts(good: str) -> None:
    assert check_expression(good) == good


@pytest.mark.parametrize(
    "bad", ["hidden / 2", "a +", "(a", "a)", "a b", "2 ** 3", "", "__import__"]
)
def test_derived_axis_grammar_rejects(bad: str) -> None:
    with pytest.raises(ValueError):
        check_expression(bad)
