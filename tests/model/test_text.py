"""Free text (sitegen/model/text.py): which characters earn a warning, why a value is not one
line of text, and text as shown: nothing hidden, reordered or broken."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitegen.model.text import (
    check_line,
    check_text,
    line_problem,
    neutralised,
    neutralised_paragraphs,
)

INVISIBLE = (
    [chr(c) for c in range(0x20)]
    + [chr(c) for c in range(0x7F, 0xA0)]
    + ["\u2028", "\u2029", "\u061c", "\u200e", "\u200f"]
    + [chr(c) for c in range(0x202A, 0x202F)]
    + [chr(c) for c in range(0x2066, 0x206A)]
)


def test_each_invisible_character_is_written_as_its_escape() -> None:
    assert neutralised("gpu \u202eevil\u202c") == "gpu \\u202eevil\\u202c"
    assert neutralised("a\nb\tc\x1b[31m\u2028") == "a\\nb\\tc\\x1b[31m\\u2028"
    assert neutralised("LayerNorm · H100 — ok") == "LayerNorm · H100 — ok"
    for character in INVISIBLE:
        assert neutralised(character).startswith("\\"), hex(ord(character))


def test_paragraphs_keep_their_line_breaks_and_tabs_only() -> None:
    assert neutralised_paragraphs("a\n\tb\r\u2029\u202e") == "a\n\tb\\r\\u2029\\u202e"


@given(st.text())
def test_nothing_invisible_is_left(text: str) -> None:
    shown = neutralised(text)
    assert not any(character in shown for character in INVISIBLE)
    assert neutralised(shown) == shown
    kept = neutralised_paragraphs(text)
    assert not any(character in kept for character in INVISIBLE if character not in "\n\t")


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("NVIDIA H200", None),
        ("x" * 200, None),
        ("", "is empty"),
        ("x" * 201, "is 201 characters, over the limit of 200"),
        ("a\0b", "holds the control character U+0000 at character 2"),
        ("\x1b[2J", "holds the control character U+001B at character 1"),
        ("a\u202eb", "holds the bidirectional control U+202E at character 2"),
        ("a\u2028b", "holds the line separator U+2028 at character 2"),
        ("a\ufffeb", "holds the non-character U+FFFE at character 2"),
    ],
)
def test_line_problem_says_why_in_a_messages_words(value: str, problem: str | None) -> None:
    assert line_problem(value) == problem


def test_text_may_hold_tabs_and_line_breaks_a_line_may_not() -> None:
    assert check_text("a\tb\nc\r\n") == "a\tb\nc\r\n"
    with pytest.raises(ValueError, match="U\\+0009"):
        check_line("a\tb")
