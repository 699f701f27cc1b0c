"""Where a build may stop for a newer change (sitegen/superseded.py)."""

from __future__ import annotations

import os
import time

import pytest

from sitegen import superseded
from sitegen.superseded import (
    Superseded,
    asking,
    asking_every,
    stop_if_superseded,
    stop_if_superseded_within,
)


def test_only_an_open_asking_asks_and_it_closes_with_its_block() -> None:
    asked: list[bool] = []

    def waiting() -> bool:
        asked.append(True)
        return len(asked) == 2

    stop_if_superseded()  # nobody asks: nothing happens
    with asking(waiting):
        stop_if_superseded()
        with pytest.raises(Superseded):
            stop_if_superseded()
    stop_if_superseded()
    assert asked == [True, True]
    with asking(None):
        stop_if_superseded()  # a build that no watcher follows
    # Superseded goes past `except Exception`, as KeyboardInterrupt does.
    assert not issubclass(Superseded, Exception)


def test_asking_every_asks_before_each_strideth_item_after_the_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked = 0

    def waiting() -> bool:
        nonlocal asked
        asked += 1
        return False

    assert list(asking_every(range(10), 3)) == list(range(10))  # not asking: the plain loop
    with asking(waiting):
        assert list(asking_every(range(10), 3)) == list(range(10))
        assert asked == 3  # before items 3, 6 and 9
        monkeypatch.setattr(superseded, "EVERY", 4)
        assert list(asking_every(range(9))) == list(range(9))
        assert asked == 5  # before items 4 and 8
    with asking(lambda: True), pytest.raises(Superseded):
        for item in asking_every(range(10), 5):
            assert item < 5  # stopped before the fifth


def test_a_forked_worker_never_asks() -> None:
    """Render workers inherit the context but not the watcher: only the process that opened
    `asking` asks."""
    with asking(lambda: True):
        child = os.fork()
        if child == 0:
            try:
                stop_if_superseded()
                os._exit(0)
            except BaseException:
                os._exit(1)
        _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_stop_if_superseded_within_waits_for_a_late_report_only_while_asked() -> None:
    """A look at the files can see a save before the watcher reports it: the build waits a
    moment for the report, and stops if it comes."""
    started = time.monotonic()
    stop_if_superseded_within(5.0)  # nobody asks: no wait
    assert time.monotonic() - started < 1.0
    asked = 0

    def reported_late() -> bool:
        nonlocal asked
        asked += 1
        return asked == 3

    with asking(reported_late), pytest.raises(Superseded):
        stop_if_superseded_within(5.0)
    assert asked == 3
    started = time.monotonic()
    with asking(lambda: False):
        stop_if_superseded_within(0.1)  # never reported: the build goes on
    assert time.monotonic() - started >= 0.1
