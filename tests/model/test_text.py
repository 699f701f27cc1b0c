"""Text from content as shown (sitegen/model/text.py): nothing hidden, reordered or broken."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sitegen.model.text import neutralised, neutralised_paragraphs

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
