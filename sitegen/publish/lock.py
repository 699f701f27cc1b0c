"""One writer at a time for a folder a command replaces whole (a build's output, an import's
content tree): an exclusive lock on a file beside it, held while the command stages, swaps in
and cleans up.

The lock is `flock(2)` on `.<name>.sitegen-lock`: the kernel releases it when its holder exits,
however it exits (a killed build leaves no stale lock), and the forked workers of a build hold
it with their parent, so a build killed with its workers still writing stays locked until they
are gone. A second command either waits for the lock or is refused at once, with the holder's
process id.

The lock file is written (the holder's pid), so it is opened as nothing else: never through a
symbolic link (`O_NOFOLLOW`), never a file with another name (a hard link: `ln README.md
.public.sitegen-lock` would have the pid written into README.md), never anything but an empty
regular file or one holding a pid as a lock does. Anything else is refused, untouched.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

from sitegen.publish.errors import OutputBusy, OutputError, WriteError

LOCK_INFIX = ".sitegen-lock"
PID_WIDTH = 24  # the holder's process id, a newline and spaces
LOCK_TEXT = re.compile(rb"(\d{1,20}\n *)?")  # what a lock file holds: nothing, or a pid


def lock_path(target: Path) -> Path:
    return target.parent / f".{target.name}{LOCK_INFIX}"


@contextlib.contextmanager
def locked(target: Path, wait: bool = False) -> Iterator[None]:
    """Hold `target`'s lock for the block; OutputBusy if another command holds it (unless
    `wait`), WriteError if the lock file cannot be made (a read-only parent, say)."""
    path = lock_path(target)
    # O_NONBLOCK: a fifo planted under the lock's name is not waited on (and refused below).
    flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
    try:
        descriptor = os.open(path, flags, 0o644)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise _not_a_lock(path, "a symbolic link") from None
        raise WriteError.of(error, path) from None
    try:
        _check_lock_file(descriptor, path)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except OSError as error:
            if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise WriteError.of(error, path) from None
            raise OutputBusy(
                f"{target} is being written by another sitegen command{_holder(descriptor)}; "
                "run again when it has finished (sitegen build --wait waits for it)"
            ) from None
        with contextlib.suppress(OSError):  # the holder's pid, for the message above
            os.pwrite(descriptor, f"{os.getpid()}\n".ljust(PID_WIDTH).encode(), 0)
            os.ftruncate(descriptor, PID_WIDTH)  # written whole over the last, never emptied
        yield
    finally:
        os.close(descriptor)  # the lock goes with the last descriptor, the workers' included


def _check_lock_file(descriptor: int, path: Path) -> None:
    """OutputError unless the file opened is a lock file: regular, with no other name, holding
    nothing or a pid."""
    try:
        found = os.fstat(descriptor)
        if not stat.S_ISREG(found.st_mode):
            raise _not_a_lock(path, "not a regular file")
        if found.st_nlink != 1:
            raise _not_a_lock(path, f"a file with {found.st_nlink - 1} other name(s) (a hard link)")
        text = os.pread(descriptor, PID_WIDTH + 1, 0) if found.st_size <= PID_WIDTH else b"?"
    except OSError as error:
        raise WriteError.of(error, path) from None
    if not LOCK_TEXT.fullmatch(text):
        raise _not_a_lock(path, "a file that holds something other than a process id")


def _not_a_lock(path: Path, what: str) -> OutputError:
    return OutputError(
        f"{path}: refusing to use it as the lock file: it is {what}, and sitegen writes "
        "into its lock file; hint: move it away if it is not sitegen's, then run again"
    )


def _holder(descriptor: int) -> str:
    try:
        text = os.pread(descriptor, PID_WIDTH, 0).decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return ""
    return f" (process {text})" if text.isdigit() else ""
