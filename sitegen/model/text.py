"""Text from content as every output shows it: nothing in it can hide, reorder or break what is
around it. Markup is each format's own escaping (jinja's for HTML and XML, model/markdown.py);
this is what comes before it, for all of them alike, as `problems.printable` is for terminals."""

from __future__ import annotations

import re

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


def _escape_unless_layout(match: re.Match[str]) -> str:
    character = match.group()
    return character if character in "\n\t" else ascii(character)[1:-1]


def _escape_sequence(match: re.Match[str]) -> str:
    return ascii(match.group())[1:-1]
