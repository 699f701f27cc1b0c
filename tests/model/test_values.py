"""The format's shared value rules (sitegen/model/values.py)."""

from __future__ import annotations

import pytest

from sitegen.model.values import check_expression, evaluate_expression, text_warnings


@pytest.mark.parametrize("good", ["hidden // q_heads", "(a + 2) * b % 3", "x", "7", "a-b"])
def test_derived_axis_grammar_accepts(good: str) -> None:
    assert check_expression(good) == good


@pytest.mark.parametrize(
    "bad", ["hidden / 2", "a +", "(a", "a)", "a b", "2 ** 3", "", "__import__"]
)
def test_derived_axis_grammar_rejects(bad: str) -> None:
    with pytest.raises(ValueError):
        check_expression(bad)


def test_free_text_may_hold_any_character_and_earns_a_warning() -> None:
    document = {
        "metadata": {"title": "a\u202eb", "description": "line one\nline two\tend"},
        "spec": {"sourceNative": {"externalId": "x\u2028y"}, "labels": {"k\x1b": "v"}},
    }
    assert text_warnings(document) == [
        (("metadata", "title"), "holds the bidirectional control U+202E at character 2"),
        (("spec", "labels"), "a key holds the control character U+001B at character 2"),
        (("spec", "sourceNative", "externalId"), "holds the line separator U+2028 at character 2"),
    ]
    assert text_warnings({"metadata": {"title": "LayerNorm · liger", "description": "a\nb"}}) == []


def test_a_derived_axis_evaluates_over_the_workloads_axes() -> None:
    axes = {"hidden": 4096, "q_heads": 32, "ffn": 11008}
    assert evaluate_expression("hidden // q_heads", axes) == 128
    assert evaluate_expression("(ffn * 2) % 7 + 1", axes) == (11008 * 2) % 7 + 1
    with pytest.raises(KeyError):
        evaluate_expression("hidden // heads", axes)  # an axis the workload does not bind
    with pytest.raises(ValueError):
        evaluate_expression("hidden ** 2", axes)  # outside the grammar
