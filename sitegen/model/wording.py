"""Counts in words, for messages and pages alike: `1 run`, `2 runs`, `4,354 files`."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """`count` (thousands separated) and `noun` in the number it takes; `plural` where adding
    an `s` is wrong."""
    word = noun if count == 1 else plural or f"{noun}s"
    return f"{count:,} {word}"
