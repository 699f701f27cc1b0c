"""What a build reports while it works, apart from the pipeline: the command line's own kinds
(cli/build.py) are defined before the pipeline is imported, which only building needs."""

from __future__ import annotations


class Progress:
    """What a build reports while it works (`sitegen build` prints it); this one says nothing."""

    def stage(self, name: str, seconds: float) -> None:
        """The stage `name` (load, resolve, analyse, plan, render, publish) took `seconds`."""

    def pages(self, done: int, total: int) -> None:
        """`done` of the site's `total` pages are rendered."""


QUIET = Progress()
