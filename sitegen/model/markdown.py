"""Text and URLs as Markdown: the one way anything read from content reaches Markdown (the pull
request comment, llms.txt). Nothing a text holds can become a link, an image, raw HTML, a
mention, code, a table cell or a line of its own."""

from __future__ import annotations

import re
from urllib.parse import quote

from sitegen.model.text import neutralised

# Every text is escaped where it is written: it never begins a line, so only what can start
# markup inside a line or a table cell. `:` and the dot of `www.` too, or GitHub makes a link
# of a URL in the text (its autolinks).
_PUNCTUATION = re.compile(r"([\\`*_\[\]()<>|~!&#$:])|(?<=www)(\.)", re.IGNORECASE)
# What a link's destination may hold as it is: the rest is percent-encoded, so that no URL can
# close the link and open markup of its own.
_URL_SAFE = ":/?#=&%+~@$,;*'"


def markdown_text(text: str) -> str:
    """Plain text as inline Markdown: punctuation escaped, no mentions, no links; controls, line
    breaks and bidirectional controls shown as their escapes."""
    return _PUNCTUATION.sub(_escaped, neutralised(text)).replace("@", "@\u200b")


def markdown_url(url: str) -> str:
    """A URL as a link's destination: what could end it percent-encoded."""
    return quote(url, safe=_URL_SAFE)


def markdown_link(text: str, url: str) -> str:
    """`[text](url)`, both escaped."""
    return f"[{markdown_text(text)}]({markdown_url(url)})"


def _escaped(match: re.Match[str]) -> str:
    return "\\" + match.group()
