"""The content tree walked by a process of its own, for a build that holds its state
(`sitegen serve`, the build daemon): whether a file watcher missed a change.

Such a build takes the watcher's word for what changed, then has the whole tree walked to find
a change the watcher missed (pipeline.py). A worker forked for that walk shares the build's
~5 GB of memory at 100k runs: while it lived, every page of it the build wrote to was copied,
~0.3 s of a ~3.3 s rebuild. This process is started once, not forked from the build: it holds
its own copy of what the build's load holds (each file's stat, the walk's files and
problems), sent whole after a walk of the tree and file by file after a load that looked at a
few files, and answers each question with one walk of its own.

A copy that falls behind (a message lost with a build that stopped) can only see a change
where there is none, never miss one: every key it holds is one the build held, and a file's
key (its change time) never goes back. Where the process cannot be started or stops
answering, the build walks the tree itself (`unseen_change`) and forks no more of them.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import orjson

from sitegen.content.walk import StatKey, walk_differs
from sitegen.model.problems import Problem, Severity

ANSWER_LIMIT = 32  # bytes: an answer is its question's number, "0" or "1" and a newline


class ContentWalker:
    """The process that walks one content tree, and what it has been told of the load."""

    def __init__(self, content_dir: Path, label: str) -> None:
        """Starts the process (raises OSError where it cannot)."""
        self.content_dir = content_dir
        self.label = label
        self._process = subprocess.Popen(
            [sys.executable, "-m", "sitegen.content.walker", str(content_dir), label],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # the terminal's Ctrl-C is the build's; it ends at EOF
        )
        self._finalizer = weakref.finalize(self, _stop, self._process)
        self._walks: int | None = None  # the walk the process holds, with `_pending` on it
        self._pending: set[str] = set()  # files looked at since it was told
        # Questions are numbered: a build that stopped before it read its answer leaves it in
        # the pipe, and the next build's answer is the one with its own number.
        self._asked = 0

    def loaded(self, walks: int, looked_at: dict[str, StatKey] | None) -> None:
        """Note the build's load: a walk of the tree (`walks` moved on), or the files it
        looked at instead, which the process is told of with the next question."""
        if walks != self._walks or looked_at is None:
            self._walks = None
        else:
            self._pending.update(looked_at)

    def ask(
        self,
        walks: int,
        files: dict[str, str],
        problems: list[Problem],
        cache_key: Callable[[str], StatKey],
    ) -> Callable[[], bool]:
        """Ask whether the tree differs from `files`, `problems` and each file's
        `cache_key(shown)` (the load's): the answer, waited for, from the function returned.
        Raises OSError (or KeyError, a file the cache lacks) where the question was not sent."""
        number = self._asked + 1
        if self._walks != walks:
            stats = {shown: cache_key(shown) for shown in files}
            message: dict[str, Any] = {"files": files, "problems": problems, "stats": stats}
        else:
            message = {"stats": {shown: cache_key(shown) for shown in self._pending}}
        message["question"] = number
        try:
            line = orjson.dumps(message, default=_problem) + b"\n"
        except orjson.JSONEncodeError as error:  # a file name that is not UTF-8
            raise OSError(f"the content walker cannot be told of the load: {error}") from None
        stdin = self._stdin()
        stdin.write(line)
        stdin.flush()
        self._walks, self._pending, self._asked = walks, set(), number
        return functools.partial(self._answer, number)

    def _stdin(self) -> IO[bytes]:
        if self._process.stdin is None or self._process.poll() is not None:
            raise OSError("the content walker is not running")
        return self._process.stdin

    def _answer(self, number: int) -> bool:
        """The answer to question `number` (those before it, never read, passed over); OSError
        where the process gave none."""
        stdout = self._process.stdout
        if stdout is None:
            raise OSError("the content walker is not running")
        while True:
            found, _, answer = stdout.readline(ANSWER_LIMIT).partition(b" ")
            if not found.isdigit() or answer not in (b"0\n", b"1\n") or int(found) > number:
                self._walks = None
                raise OSError("the content walker stopped answering")
            if int(found) == number:
                return answer == b"1\n"

    def stop(self) -> None:
        self._finalizer()


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Close its input (it ends at EOF); killed if it does not end at once."""
    try:
        if process.stdin is not None:
            process.stdin.close()
        process.wait(timeout=1)
    except (OSError, subprocess.TimeoutExpired):
        process.kill()
        process.wait()
    finally:
        if process.stdout is not None:
            process.stdout.close()


def _problem(value: object) -> object:
    if isinstance(value, Problem):
        return list(value)
    raise TypeError


def main(content_dir: str, label: str) -> None:
    """The process: a question a line on stdin (JSON: its number, the load's files and
    problems where sent, each file's stat where it changed), an answer a line on stdout (the
    question's number, then "1" where the tree differs, else "0"). Ends at EOF."""
    files: dict[str, str] = {}
    problems: list[Problem] = []
    stats: dict[str, StatKey] = {}
    root = Path(content_dir)
    for line in sys.stdin.buffer:
        message = orjson.loads(line)
        if "files" in message:
            files = message["files"]
            problems = [
                Problem(fields[0], fields[1], fields[2], fields[3], Severity(fields[4]))
                for fields in message["problems"]
            ]
            stats = {}
        stats.update({shown: tuple(key) for shown, key in message["stats"].items()})
        differs = walk_differs(root, label, files, problems, stats.__getitem__)
        sys.stdout.buffer.write(b"%d %d\n" % (int(message["question"]), differs))
        sys.stdout.buffer.flush()


if __name__ == "__main__":
    try:
        main(*sys.argv[1:3])
    except (KeyboardInterrupt, BrokenPipeError):
        os._exit(0)
