"""The user's cache folder: what sitegen keeps between runs that must not live in a checkout,
where a pull request could commit it (compiled templates, incremental builds' state), and the
key that signs that state.

`$XDG_CACHE_HOME/sitegen`, else `~/.cache/sitegen`. Everything in it is reached through
`private_cache_folder` and read or written through `read_private` and `write_private`, the
one way into it: every folder from `sitegen` down is a real folder (never a link) of this
user's that no one else can write (made 0700), the folder holding `sitegen` is one no one else
can rename it out of, and a file is a regular file of this user's, with no other name (a hard
link), written by no one else (made 0600). What is kept there decides what a build trusts
(compiled templates are code, the state says which outputs are valid), so a folder or file
that fails any of this is neither read nor written: there is no cache and the build is a full
one.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable
from pathlib import Path

KEY_FILE = "state.key"
KEY_BYTES = 32
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_WRITABLE_BY_OTHERS = 0o022


def user_cache_dir() -> Path | None:
    """`$XDG_CACHE_HOME/sitegen`, else `~/.cache/sitegen`; None where there is no home. Not
    checked: reach it through `private_cache_folder`."""
    cache_home = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(cache_home):  # the XDG rule: unset, empty or relative is ignored
        try:
            cache_home = os.path.join(Path.home(), ".cache")
        except RuntimeError:  # no home folder (no HOME, no passwd entry)
            return None
    return Path(cache_home, "sitegen")


def private_cache_folder(*names: str, make: bool = True) -> Path | None:
    """The user's cache folder, or the folder `names` inside it, if it and every folder on the
    way are private (the module's docstring); made 0700 where missing if `make`. None otherwise
    (missing and not `make`, a link, another user's, writable by others)."""
    folder = user_cache_dir()
    if folder is None:
        return None
    try:
        if make:
            folder.parent.mkdir(parents=True, exist_ok=True)
        if not _holds_safely(os.stat(folder.parent)):
            return None
        for name in ("", *names):
            if "/" in name or name in (".", ".."):
                return None
            folder = folder / name if name else folder
            if make:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(folder, 0o700)
            if not _private(os.lstat(folder), stat.S_ISDIR):
                return None
    except OSError:
        return None
    return folder


def read_private(path: Path, limit: int) -> bytes | None:
    """`path` in a private cache folder, if it is a private file (the module's docstring) of
    fewer than `limit` bytes; None otherwise or if it cannot be read."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | _NOFOLLOW)
    except OSError:
        return None
    with open(descriptor, "rb", buffering=0, closefd=True) as handle:
        try:
            found = os.fstat(descriptor)
            if not _private(found, stat.S_ISREG) or found.st_size >= limit:
                return None
            return handle.readall()
        except OSError:
            return None


def write_private(path: Path, data: bytes | list[bytes], replace: bool = True) -> None:
    """`data` (or its parts, one after another) as `path` in a private cache folder, made
    0600: under a temporary name renamed into place whole or, without `replace`, as a new file
    (FileExistsError if there is one). Raises OSError."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | _NOFOLLOW
    written = path.with_name(f".{path.name}.{os.getpid()}.tmp") if replace else path
    if replace:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(written)  # left by a killed process that had this id
    descriptor = os.open(written, flags, 0o600)
    try:
        with os.fdopen(descriptor, "wb", closefd=True) as handle:
            handle.writelines([data] if isinstance(data, bytes) else data)
        if replace:
            os.replace(written, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(written)
        raise


def state_key() -> bytes | None:
    """This user's key for signing incremental state, made on first use; None if there is no
    private cache folder or the key is not a private file."""
    folder = private_cache_folder()
    if folder is None:
        return None
    path = folder / KEY_FILE
    if not os.path.lexists(path):
        try:
            write_private(path, os.urandom(KEY_BYTES), replace=False)
        except FileExistsError:
            pass  # another build made it first: use that one
        except OSError:
            return None
    key = read_private(path, KEY_BYTES + 1)
    return key if key is not None and len(key) == KEY_BYTES else None


def _private(found: os.stat_result, is_kind: Callable[[int], bool]) -> bool:
    """Of the kind, this user's, writable by no one else and, for a file, its only name."""
    mine = not hasattr(os, "getuid") or found.st_uid == os.getuid()
    one_name = stat.S_ISDIR(found.st_mode) or found.st_nlink == 1
    return is_kind(found.st_mode) and mine and one_name and not found.st_mode & _WRITABLE_BY_OTHERS


def _holds_safely(found: os.stat_result) -> bool:
    """Whether no other user can rename or replace what a folder holds: writable by no one
    else, or sticky (as /tmp is: only an entry's owner may rename it)."""
    return not found.st_mode & _WRITABLE_BY_OTHERS or bool(found.st_mode & stat.S_ISVTX)
