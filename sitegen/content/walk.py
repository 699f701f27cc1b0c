"""The content tree on disk: walked without following a link, read without trusting a byte.

Content comes from strangers' pull requests: symlinks, special files, files swapped between the
walk and the read, and huge files are problems tied to the file, never crashes.
"""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from sitegen.content.bulk import is_bulk
from sitegen.model.problems import Problem
from sitegen.model.text import has_surrogate
from sitegen.superseded import asking_every

# A file as an incremental build remembers it: size, modification and change times, inode and
# device. The change time moves with every change and never back: a file whose key is the one
# remembered was not changed since.
StatKey = tuple[int, ...]

CONTENT_FILES = "content holds .json resources, .jsonl and .jsonl.zst bulk files and .md notes"


def walk(root: Path, problems: list[Problem], label: str) -> Iterator[tuple[str, str]]:
    """Regular `.json`, `.jsonl` and `.jsonl.zst` files in sorted order; never follows a
    symlink. Each as its path and its path below `root`, both plain strings: a `Path` per file
    cost more than the rest of the walk, and again each time a chunk of them was pickled for a
    load worker."""
    try:
        mode = os.lstat(root).st_mode
    except OSError as error:
        problems.append(Problem(label, "-", f"cannot read content directory: {error.strerror}"))
        return
    if stat.S_ISLNK(mode):
        problems.append(Problem(label, "-", "content path is a symbolic link, never followed"))
        return
    if not stat.S_ISDIR(mode):
        problems.append(Problem(label, "-", "content path is not a directory"))
        return
    stack = [(str(root), "")]
    while stack:
        directory, prefix = stack.pop()
        try:
            with os.scandir(directory) as found:
                entries = sorted(found, key=_entry_name)
        except OSError as error:
            problems.append(
                Problem(
                    f"{label}/{prefix}".rstrip("/"), "-", f"cannot list directory: {error.strerror}"
                )
            )
            continue
        subdirectories = []
        for entry in entries:
            name = entry.name
            relative = f"{prefix}{name}"
            shown = f"{label}/{relative}"
            # Dot-files are tooling; `_` folders hold site data (import reports), not resources.
            if name.startswith((".", "_")):
                continue
            # A byte that is not UTF-8 is listed as a lone surrogate: the manifest, the
            # export and every link name a file in UTF-8.
            if has_surrogate(name):
                problems.append(
                    Problem(
                        shown,
                        "-",
                        "a name that is not UTF-8: neither read nor walked into",
                        "rename it in UTF-8",
                    )
                )
                continue
            # The type the directory listing gives (no system call a file where the file system
            # records it); a symlink to a folder is not a folder here. The read checks again.
            if entry.is_dir(follow_symlinks=False):
                subdirectories.append((entry.path, f"{relative}/"))
                if name.endswith((".json", ".jsonl")):  # read as neither: say so
                    problems.append(
                        Problem(
                            f"{shown}/",
                            "-",
                            "a folder named as a resource file",
                            "rename it: a folder is walked into, never read as a resource",
                        )
                    )
            elif refusal := refuse_special(
                shown, entry.is_symlink(), entry.is_file(follow_symlinks=False)
            ):
                problems.append(refusal)
            elif name.endswith(".json") or is_bulk(name):
                yield entry.path, relative
            elif not name.endswith(".md"):
                problems.append(
                    Problem(
                        shown,
                        "-",
                        "unexpected file type",
                        CONTENT_FILES,
                    )
                )
        stack.extend(reversed(subdirectories))


def stat_key(path: str | Path) -> StatKey:
    return key_of(os.lstat(path))


def key_of(found: os.stat_result) -> StatKey:
    return (found.st_size, found.st_mtime_ns, found.st_ctime_ns, found.st_ino, found.st_dev)


def walk_differs(
    root: Path,
    label: str,
    files: Mapping[str, str],
    problems: Sequence[Problem],
    key: Callable[[str], StatKey],
) -> bool:
    """Whether the tree differs from a walk of it (its `files`, shown path → path, and its
    `problems`) or a file's stat from `key(shown path)`: ~0.9 s at 100k files."""
    found_problems: list[Problem] = []
    found = asking_every(walk(root, found_problems, label))
    now = {f"{label}/{relative}": path for path, relative in found}
    if now != files or found_problems != list(problems):
        return True
    try:
        return any(key(shown) != stat_key(path) for shown, path in asking_every(now.items()))
    except (OSError, KeyError):
        return True


def _entry_name(entry: os.DirEntry[str]) -> str:
    return entry.name


class OpenFile(NamedTuple):
    handle: io.FileIO  # unbuffered: a read is one system call
    size: int  # when it was opened


def refuse_special(shown: str, symlink: bool, regular: bool) -> Problem | None:
    """Symlinks are never followed and only regular files are read (the type from a directory
    listing, `os.lstat`, or `os.fstat` of a descriptor opened with O_NOFOLLOW)."""
    if symlink:
        return Problem(shown, "-", "symbolic links are not allowed in content")
    if not regular:
        return Problem(shown, "-", "not a regular file")
    return None


# The file could be swapped between the walk and the read: O_NOFOLLOW refuses a symlink, and
# O_NONBLOCK keeps a FIFO from blocking the open (fstat then refuses it).
_READ_FLAGS = (
    os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
)


def open_file(path: str | Path, shown: str, limit: int, problems: list[Problem]) -> OpenFile | None:
    """A regular file of at most `limit` bytes, opened to read (the caller closes it), and its
    size; else None and the problem."""
    try:
        descriptor = os.open(path, _READ_FLAGS)
    except OSError as error:
        problems.append(Problem(shown, "-", f"cannot read file: {error.strerror}"))
        return None
    try:
        found = os.fstat(descriptor)
        refusal = refuse_special(shown, stat.S_ISLNK(found.st_mode), stat.S_ISREG(found.st_mode))
        if refusal is None and found.st_size > limit:
            refusal = Problem(
                shown, "-", f"file is {found.st_size:,} bytes, over the limit of {limit:,}"
            )
    except BaseException:
        os.close(descriptor)
        raise
    if refusal:
        os.close(descriptor)
        problems.append(refusal)
        return None
    return OpenFile(io.FileIO(descriptor, "rb"), found.st_size)


def read_bytes(path: str | Path, shown: str, limit: int, problems: list[Problem]) -> bytes | None:
    """A regular file's bytes, at most `limit` of them; else None and the problem."""
    opened = open_file(path, shown, limit, problems)
    if opened is None:
        return None
    with opened.handle as handle:
        data = handle.read(opened.size + 1) or b""  # one system call: a regular file reads whole
        if len(data) > opened.size:  # it grew since it was opened: read on, up to the limit
            data += handle.read(limit + 1 - len(data)) or b""
    if len(data) > limit:
        problems.append(Problem(shown, "-", f"file grew over the limit of {limit:,} bytes"))
        return None
    return data
