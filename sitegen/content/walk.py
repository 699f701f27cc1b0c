"""The content tree on disk: walked without following a link, read without trusting a byte.

Content comes from strangers' pull requests: symlinks, special files, files swapped between the
walk and the read, huge files and bad bytes are problems tied to the file, never crashes.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from sitegen.content.bulk import is_bulk
from sitegen.model.problems import Problem

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
            # The type the directory listing gives (no system call a file where the file system
            # records it); a symlink to a folder is not a folder here. The read checks again.
            if entry.is_dir(follow_symlinks=False):
                subdirectories.append((entry.path, f"{relative}/"))
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


def _entry_name(entry: os.DirEntry[str]) -> str:
    return entry.name


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


def open_file(
    path: str | Path, shown: str, limit: int, problems: list[Problem]
) -> IO[bytes] | None:
    """A regular file of at most `limit` bytes opened to read (the caller closes it), else None
    and the problem."""
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
    return os.fdopen(descriptor, "rb")


def read_bytes(path: str | Path, shown: str, limit: int, problems: list[Problem]) -> bytes | None:
    try:
        descriptor = os.open(path, _READ_FLAGS)
    except OSError as error:
        problems.append(Problem(shown, "-", f"cannot read file: {error.strerror}"))
        return None
    try:
        found = os.fstat(descriptor)
        if refusal := refuse_special(
            shown, stat.S_ISLNK(found.st_mode), stat.S_ISREG(found.st_mode)
        ):
            problems.append(refusal)
            return None
        size = found.st_size
        if size > limit:
            problems.append(
                Problem(shown, "-", f"file is {size:,} bytes, over the limit of {limit:,}")
            )
            return None
        data = os.read(descriptor, size + 1)  # one call: a regular file reads whole
        if len(data) > size:  # it grew since fstat: read on, up to the limit
            with os.fdopen(os.dup(descriptor), "rb") as handle:
                data += handle.read(limit + 1 - len(data))
    finally:
        os.close(descriptor)
    if len(data) > limit:
        problems.append(Problem(shown, "-", f"file grew over the limit of {limit:,} bytes"))
        return None
    return data


def decode(data: bytes, shown: str, problems: list[Problem]) -> str | None:
    if data.startswith(b"\xef\xbb\xbf"):
        problems.append(
            Problem(shown, "-", "file starts with a byte order mark", "save as UTF-8 without BOM")
        )
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        problems.append(
            Problem(
                shown,
                f"line {line}",
                f"not valid UTF-8 (byte 0x{data[error.start]:02x} at offset {error.start})",
            )
        )
        return None
