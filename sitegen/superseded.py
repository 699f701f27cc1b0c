"""Where a build may stop for a newer change (`sitegen serve`): once the saved run's page is
published, a rebuild is the rest of the site catching up, and a file saved again meanwhile
should not wait for all of it. The build opens `asking` with the watcher's question; the
stages it runs call `stop_if_superseded` between pieces of work of at most ~0.25 s at 100k
runs, and `asking_every` in their long loops. Outside `asking` (every other build) both cost
one context-variable read. Only the process that opened it asks: forked render workers
inherit the context, not the watcher.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from typing import TypeVar

T = TypeVar("T")

# Items of a long loop between two asks: ~0.05–0.2 s of work at 100k runs.
EVERY = 5_000

_ASKED: ContextVar[tuple[int, Callable[[], bool]] | None] = ContextVar("asked", default=None)


class Superseded(BaseException):
    """A newer change is waiting (`sitegen serve`), so the build stopped before writing more:
    what it had published is noted in the state, the rest of the output is as it was, and the
    next build, which will see that change too, does what this one left. A BaseException, as
    KeyboardInterrupt is, so that what turns errors into reports lets it through, and only
    cleanup runs on its way out."""


@contextlib.contextmanager
def asking(superseded: Callable[[], bool] | None) -> Iterator[None]:
    """While open, `stop_if_superseded` asks `superseded` (None: never stops)."""
    token = _ASKED.set((os.getpid(), superseded) if superseded is not None else None)
    try:
        yield
    finally:
        _ASKED.reset(token)


def _question() -> Callable[[], bool] | None:
    """The open `asking`'s question where this process opened it; None elsewhere."""
    asked = _ASKED.get()
    return asked[1] if asked is not None and asked[0] == os.getpid() else None


def stop_if_superseded() -> None:
    """Raise Superseded where the open `asking` says a newer change is waiting."""
    question = _question()
    if question is not None and question():
        raise Superseded


def stop_if_superseded_within(seconds: float) -> None:
    """Raise Superseded if the open `asking` says a newer change waits within `seconds`: a look
    at the files can see one saved a moment ago before the watcher reports it (~50 ms).
    Returns at once where nobody asks."""
    if _question() is None:
        return
    deadline = time.monotonic() + seconds
    stop_if_superseded()
    while time.monotonic() < deadline:
        time.sleep(0.01)
        stop_if_superseded()


def asking_every(items: Iterable[T], every: int | None = None) -> Iterator[T]:
    """`items`, asking before each `every`th one after the first (EVERY by default)."""
    if _question() is None:  # the plain loop: a full build pays nothing per item
        yield from items
        return
    stride = every or EVERY
    for number, item in enumerate(items):
        if number and not number % stride:
            stop_if_superseded()
        yield item
