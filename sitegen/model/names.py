"""Names made from text: FORMAT.md §5's kebab, and short stable hashes for ids."""

from __future__ import annotations

import hashlib
import re


def kebab(text: str) -> str:
    """FORMAT.md §5: lowercase, runs outside [a-z0-9] become `-`, trimmed, cut to 100."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:100]


def short_hash(text: str, length: int = 12) -> str:
    """The first `length` hex digits of the text's sha256: ids that never change by build."""
    return hashlib.sha256(text.encode()).hexdigest()[:length]
