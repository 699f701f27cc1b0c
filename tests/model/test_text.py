"""text.py: the characters free text may hold, and why a value is not one line of text."""

from __future__ import annotations

import pytest

from sitegen.model.text import check_line, check_text, line_problem


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
