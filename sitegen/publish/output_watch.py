"""Whether anyone changed an output folder since the last build wrote it, told without walking it.

The build daemon patches its output only where the output is exactly what the last build left
(`State.tree`, publish/incremental.py); anything else is rebuilt whole. Walking the output to
know takes ~2.4 s at 100k runs' pages (206k files in 103k folders, bound by system calls), the
longest part of a held rebuild. Instead the daemon holds an inotify watch on every folder of
its output. The kernel queues an event inside the very system call that changes a file (a
write, truncate, rename, unlink, link, chmod or utime), so once the queue is read empty,
nothing changed the output before that read: no fence, no wait. The build's own writes are
read and dropped as it finishes (`settled`), the folders it made watched as they are found.
Anything else found (any event, a queue overflow, the folder itself moved or deleted) answers
"changed", and the build walks the output as it did before.

Used only where that holds: on Linux, the output on a local file system (a network file
system's inotify does not see another machine's writes), and where its folders leave a quarter
of the user's inotify watches (`fs.inotify.max_user_watches`) free of the watches the user's
processes hold already, another daemon's among them (each pins a folder's inode in kernel
memory; the rest are left to the user's editors and tools). Where they do not fit, the build
says so once, walks, and arms the watch once as many are free (`NotWatched`). Not seen, as
inotify does not report them: a file changed through a hard link from outside the output, or
through a shared memory map (docs/performance.md).
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import weakref
from pathlib import Path
from typing import Any, NamedTuple

if sys.platform == "linux":
    from inotify_simple import INotify, flags
else:  # pragma: no cover - the walk is used where inotify is not
    INotify = flags = None

# This share of `fs.inotify.max_user_watches` is left free (103k folders of 192k here fit).
WATCHES_LEFT_FREE = 0.25
MAX_WATCHES = Path("/proc/sys/fs/inotify/max_user_watches")
MOUNTS = Path("/proc/self/mountinfo")
# File systems whose inotify sees every change made on this machine, which is the only place
# their files can change.
LOCAL_FILE_SYSTEMS = frozenset(
    {"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "ramfs", "f2fs", "zfs", "bcachefs"}
)


def _changes() -> int:
    return int(
        flags.MODIFY
        | flags.ATTRIB
        | flags.CLOSE_WRITE
        | flags.MOVED_FROM
        | flags.MOVED_TO
        | flags.CREATE
        | flags.DELETE
        | flags.DELETE_SELF
        | flags.MOVE_SELF
        | flags.DONT_FOLLOW
        | flags.ONLYDIR
    )


class OutputWatch:
    """An inotify watch on every folder of an output; see the module's docstring."""

    def __init__(self, root: Path, inotify: INotify) -> None:
        self.root = root
        self._inotify = inotify
        self._folders: dict[int, str] = {}  # watch descriptor → folder
        self._mask = _changes()
        self._stale = False  # something else changed the output: armed again once built
        # Closed with the watch, too: a held state is dropped, never closed.
        self._closing = weakref.finalize(self, inotify.close)

    @classmethod
    def arm(cls, root: Path) -> OutputWatch | NotWatched:
        """A watch on `root` and every folder in it, or why there is none: where one cannot be
        trusted, or would take too many of the user's watches (then the build walks the
        output)."""
        if INotify is None or not _local(root):
            return NotWatched(None, "its file system's inotify may not see every change")
        folders = _folders(root)
        if folders is None:
            return NotWatched(0, "its folders could not be read")
        budget = _watch_budget()
        if len(folders) > budget:
            return NotWatched(len(folders), _short_of(len(folders), budget))
        try:
            watch = cls(root, INotify(nonblocking=True))
        except OSError as error:
            return NotWatched(0, f"inotify refused ({error.strerror})")
        try:
            for folder in folders:
                watch._add(folder)
        except OSError as error:  # the watch limit reached, or a folder gone meanwhile
            watch.close()
            return NotWatched(len(folders), f"inotify refused a watch ({error.strerror})")
        return watch

    def _add(self, folder: str) -> None:
        self._folders[self._inotify.add_watch(folder, self._mask)] = folder

    def unchanged(self) -> bool:
        """Whether nothing changed the output since it was `settled`. Once False, False until
        it is settled again (a build that starts over asks again)."""
        try:
            if self._read():
                self._stale = True
        except OSError:  # the queue unreadable: nothing can be said, so the output is walked
            self._stale = True
        return not self._stale

    def settled(self) -> OutputWatch | NotWatched:
        """What to hold for the next build, once this build's own writes are done: this watch,
        the folders the build made (or moved in) watched too; or, after anything else (the
        output changed by someone else first, replaced whole, a queue overflow), a new watch
        of the whole output, or why there can be none."""
        try:
            while not self._stale and (events := self._read()):
                for event in events:
                    self._follow(event)
        except OSError:
            self._stale = True
        if self._stale:
            self.close()
            return OutputWatch.arm(self.root)
        return self

    def _follow(self, event: Any) -> None:
        """Keep the folders watched as the build's own event `event` changed them."""
        folder = self._folders.get(event.wd)
        if event.mask & flags.Q_OVERFLOW or (
            folder == str(self.root)
            and event.mask & (flags.DELETE_SELF | flags.MOVE_SELF | flags.IGNORED)
        ):
            self._stale = True  # events lost, or the output replaced whole
        elif event.mask & flags.IGNORED:
            self._folders.pop(event.wd, None)  # a folder deleted, or unwatched below
        elif folder is not None and event.mask & flags.ISDIR:
            path = os.path.join(folder, event.name)
            if event.mask & flags.MOVED_FROM:  # its watches would name it by its old path
                for wd, watched in list(self._folders.items()):
                    if watched == path or watched.startswith(path + os.sep):
                        del self._folders[wd]
                        with contextlib.suppress(OSError):
                            self._inotify.rm_watch(wd)
            elif event.mask & (flags.CREATE | flags.MOVED_TO):
                made = _folders(Path(path))
                if made is None:
                    if os.path.lexists(path):  # there but not readable: not watched
                        self._stale = True
                    return
                for inside in made:
                    self._add(inside)

    def _read(self) -> list[Any]:
        events: list[Any] = []
        with contextlib.suppress(BlockingIOError):
            while batch := self._inotify.read(timeout=0):
                events += batch
        return events

    def close(self) -> None:
        self._closing()


class NotWatched(NamedTuple):
    """Why an output is not watched, and whether a later build may try again."""

    # The watches it wanted: tried again once that many are free (0: by the next build;
    # None: never, as no watch of it could be trusted).
    wanted: int | None
    reason: str

    def may_fit(self) -> bool:
        """Whether arming a watch is worth trying again: never where none could be trusted,
        and where watches were wanted, only once that many are free (counting them takes
        milliseconds, listing the output's folders ~0.5 s at 100k runs' pages)."""
        if self.wanted is None:
            return False
        return self.wanted == 0 or self.wanted <= _watch_budget()


def _short_of(wanted: int, budget: int) -> str:
    try:
        limit = f"{int(MAX_WATCHES.read_text()):,}"
    except (OSError, ValueError):
        limit = "unknown"
    free = max(budget, 0)
    return (
        f"its {wanted:,} folders want more inotify watches than this user has free ({free:,}"
        f" of fs.inotify.max_user_watches {limit}, less a quarter and those held)"
    )


def _folders(root: Path) -> list[str] | None:
    """`root` and every folder in it (links not followed); None if it cannot be read."""
    found = [str(root)]
    try:
        for folder in found:  # grows as it goes: a folder's folders are looked in after it
            with os.scandir(folder) as entries:
                found += [entry.path for entry in entries if entry.is_dir(follow_symlinks=False)]
    except OSError:
        return None
    return found


def _watch_budget() -> int:
    """How many watches may be added: the user's limit, less those their processes hold and
    the share left free."""
    try:
        limit = int(MAX_WATCHES.read_text())
    except (OSError, ValueError):
        return 0
    return int(limit * (1 - WATCHES_LEFT_FREE)) - watches_held()


def watches_held() -> int:
    """The inotify watches this user's processes hold, as far as /proc lets them be counted
    (a process that cannot be read is not: adding past the limit then fails, and is undone)."""
    user, held = os.getuid(), 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        with contextlib.suppress(OSError):
            if os.stat(f"/proc/{pid}").st_uid != user:
                continue
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    if os.readlink(f"/proc/{pid}/fd/{fd}") == "anon_inode:inotify":
                        with open(f"/proc/{pid}/fdinfo/{fd}", "rb") as info:
                            held += sum(line.startswith(b"inotify wd:") for line in info)
    return held


def _local(root: Path) -> bool:
    """Whether `root` is on a file system LOCAL_FILE_SYSTEMS names (its mount's, the longest
    mount point above it)."""
    try:
        lines = MOUNTS.read_text().splitlines()
        target = str(root.resolve())
    except OSError:
        return False
    best, kind = "", ""
    for line in lines:
        fields, _, rest = line.partition(" - ")
        parts = fields.split()
        if len(parts) < 5 or not rest:
            continue
        point = re.sub(r"\\([0-7]{3})", lambda escape: chr(int(escape[1], 8)), parts[4])
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, kind = point, rest.split()[0]
    return kind in LOCAL_FILE_SYSTEMS
