"""Free text's unusual characters (FORMAT.md §1): which they are, how a message names them, and
how every output shows them. Standard library only, so that `sitegen environment` on a GPU
machine checks what it prints by the rules `check` applies. Markup is each format's own escaping
(jinja's for HTML and XML, model/markdown.py); `neutralised` is what comes before it, for all of
them alike, as `problems.printable` is for terminals."""

from __future__ import annotations

import re
from collections.abc import Callable

# What content's free text may hold only with a warning, and what sitegen's own output (`sitegen
# environment`) never holds: controls (a NUL lands in the HTML, any C0 control makes the Atom
# feed ill-formed XML, and escapes forge terminal or CI output), the line and paragraph
# separators, the bidirectional formatting controls (they reorder what a reader sees, so a title
# can disguise itself) and Unicode's non-characters. Long text may hold tabs and line breaks
# (a description is Markdown).
BIDI_CONTROLS = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
NONCHARACTERS = "\ufdd0-\ufdef" + "".join(
    chr(plane + 0xFFFE) + chr(plane + 0xFFFF) for plane in range(0, 0x110000, 0x10000)
)
NOT_IN_LINE = re.compile(f"[\x00-\x1f\x7f-\x9f\u2028\u2029{BIDI_CONTROLS}{NONCHARACTERS}]")
NOT_IN_TEXT = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f{BIDI_CONTROLS}{NONCHARACTERS}]")


def has_surrogate(text: str) -> bool:
    """Whether `text` holds a lone UTF-16 surrogate: no UTF-8 can say it (a JSON string's
    escape, or a byte of a file name that is not UTF-8, as Python lists it)."""
    return any("\ud800" <= c <= "\udfff" for c in text) if not text.isascii() else False


def character_name(character: str) -> str:
    """What a refused character is, for a message: `the control character U+0007`."""
    code = ord(character)
    if code < 0x20 or 0x7F <= code <= 0x9F:
        what = "the control character"
    elif code == 0x2028:
        what = "the line separator"
    elif code == 0x2029:
        what = "the paragraph separator"
    elif NOT_IN_LINE.fullmatch(character) and not re.fullmatch(f"[{BIDI_CONTROLS}]", character):
        what = "the non-character"
    else:
        what = "the bidirectional control"
    return f"{what} U+{code:04X}"


def _refuse(pattern: re.Pattern[str]) -> Callable[[str], str]:
    def check(value: str) -> str:
        found = pattern.search(value)
        if found:
            raise ValueError(
                f"holds {character_name(found.group())} at character {found.start() + 1}"
            )
        return value

    return check


check_line = _refuse(NOT_IN_LINE)  # a name, title or value: one line of plain text
check_text = _refuse(NOT_IN_TEXT)  # a description or notes: tabs and line breaks allowed


def line_problem(value: str, max_length: int = 200) -> str | None:
    """Why `value` is not a ShortText (one line of 1 to `max_length` plain characters), in a
    message's words; None if it is one."""
    if not value:
        return "is empty"
    if len(value) > max_length:
        return f"is {len(value):,} characters, over the limit of {max_length}"
    try:
        check_line(value)
    except ValueError as error:
        return str(error)
    return None


# C0 and C1 controls, line and paragraph separators, and the bidirectional controls (marks,
# embeddings, overrides, isolates): each would end a line or a cell, or reorder what is shown.
_INVISIBLE = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


def neutralised(text: str) -> str:
    """`text` with each such character written as its escape (`\\n`, `\\x1b`, `\\u202e`)."""
    if _INVISIBLE.search(text) is None:
        return text
    return _INVISIBLE.sub(_escape_sequence, text)


def neutralised_paragraphs(text: str) -> str:
    """Neutralised, but for the line breaks and tabs of a multi-line text (a description's
    Markdown)."""
    if _INVISIBLE.search(text) is None:
        return text
    return _INVISIBLE.sub(_escape_unless_layout, text)


# What a rendered page shows escaped: all of the above but tabs and line breaks (CR too: a
# page's own bytes hold them), non-characters included.
_NOT_SHOWN = re.compile(
    f"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029{BIDI_CONTROLS}{NONCHARACTERS}]"
)


def shown_escaped(text: str) -> str:
    """`text` with each character above but tabs and line breaks written as its escape
    (`\\u202e`, `\\x00`), as `problems.printable` writes it: how pages and feeds show it."""
    return _NOT_SHOWN.sub(_escape_sequence, text)


def _escape_unless_layout(match: re.Match[str]) -> str:
    character = match.group()
    return character if character in "\n\t" else ascii(character)[1:-1]


def _escape_sequence(match: re.Match[str]) -> str:
    return ascii(match.group())[1:-1]
