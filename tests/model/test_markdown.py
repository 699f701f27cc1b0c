"""Markdown escaping: a hostile text stays text and a hostile URL stays one link, as a
CommonMark renderer (with raw HTML and tables on, as GitHub has them) reads the result."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from sitegen.model.markdown import markdown_link, markdown_text, markdown_url

_RENDERER = MarkdownIt("commonmark", {"html": True}).enable("table")

HOSTILE_TEXTS = (
    "[[Evil](https://evil.example/llms) …](https://evil.example/2)",
    "![p](https://evil.example/pixel.png)",
    '<img src=x onerror="alert(1)"><a href="https://evil.example">x</a>',
    "`code` | cell | <https://evil.example> [x]: https://evil.example",
    "H100 ](https://evil.example/gpu) \\](https://evil.example/2)",
    "line\nbreak\u2028sep \u202eevil\u202c \x1b[31m",
)


def tags(markdown: str) -> list[str]:
    """The HTML elements the Markdown renders to, paragraphs and tables aside."""
    found = re.findall(r"<([a-z][a-z0-9]*)", _RENDERER.render(markdown))
    return [t for t in found if t not in {"p", "table", "thead", "tbody", "tr", "th", "td"}]


def test_hostile_texts_render_as_their_own_characters() -> None:
    for text in HOSTILE_TEXTS:
        escaped = markdown_text(text)
        assert tags(escaped) == [], text
        assert "\n" not in escaped and "\u2028" not in escaped and "\u202e" not in escaped


def test_known_escapes() -> None:
    hostile = "[x](javascript:alert(1)) @octocat | <img src=x> `code`\n# heading"
    assert markdown_text(hostile) == (
        "\\[x\\]\\(javascript\\:alert\\(1\\)\\) @\u200boctocat \\| \\<img src=x\\> \\`code\\`"
        "\\\\n\\# heading"
    )
    # GitHub's autolinks: a URL or a www. name in a text would become a link.
    assert markdown_text("see https://evil.example/p.png or WWW.evil.example") == (
        "see https\\://evil.example/p.png or WWW\\.evil.example"
    )
    # Bidirectional controls would reorder the line: shown as their escapes.
    assert markdown_text("gpu \u202eevil\u202c") == "gpu \\\\u202eevil\\\\u202c"


def test_a_link_is_one_link_whatever_its_text_and_url() -> None:
    """A site URL from a hostile base (or --head-url) is encoded where it is a link's
    destination: no `)` can close the link and open an image."""
    url = "https://x.example/)![p](https://evil.example/pixel.png)"
    assert markdown_url(url) == (
        "https://x.example/%29%21%5Bp%5D%28https://evil.example/pixel.png%29"
    )
    for text in HOSTILE_TEXTS:
        link = markdown_link(text, url)
        assert tags(link) == ["a"], link
        assert tags(f"| {link} | x |\n|---|---|\n| {link} | y |") == ["a", "a"]


@given(st.text(), st.text())
def test_any_text_in_a_table_cell_is_one_link_and_one_cell(text: str, url: str) -> None:
    link = markdown_link(text, "https://x.example/" + url)
    table = f"| a | b |\n|---|---|\n| {link} | {markdown_text(text)} |"
    assert tags(table) == ["a"]
    assert _RENDERER.render(table).count("<td>") == 2
