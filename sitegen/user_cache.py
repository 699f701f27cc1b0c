"""The user's cache folder: what sitegen keeps between runs that must not live in a checkout,
where a pull request could commit it (compiled templates, incremental builds' state), and the
key that signs that state.

`$XDG_CACHE_HOME/sitegen`, else `~/.cache/sitegen`; folders made 0700, the key 0600. A folder
or key that cannot be made or read, or that another user could have written, only means no
cache: the build is a full one.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

KEY_FILE = "state.key"
KEY_BYTES = 32


def user_cache_dir() -> Path | None:
    """`$XDG_CACHE_HOME/sitegen`, else `~/.cache/sitegen`; None where there is no home."""
    cache_home = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(cache_home):  # the XDG rule: unset, empty or relative is ignored
        try:
            cache_home = os.path.join(Path.home(), ".cache")
        except RuntimeError:  # no home folder (no HOME, no passwd entry)
            return None
    return Path(cache_home, "sitegen")


def private_folder(path: Path) -> Path | None:
    """`path`, made 0700 if missing, if it is a real folder of this user's that no one else
    can write; None otherwise."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        found = os.lstat(path)
    except OSError:
        return None
    return path if _private(found, stat.S_ISDIR) else None


def state_key() -> bytes | None:
    """This user's key for signing incremental state, made on first use; None if there is no
    cache folder or the key is not this user's alone."""
    folder = user_cache_dir()
    folder = private_folder(folder) if folder is not None else None
    if folder is None:
        return None
    path = folder / KEY_FILE
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_CLOEXEC | nofollow)
    except FileNotFoundError:
        return _new_key(path)
    except OSError:
        return None
    try:
        if not _private(os.fstat(descriptor), stat.S_ISREG):
            return None
        key = os.read(descriptor, KEY_BYTES + 1)
    finally:
        os.close(descriptor)
    return key if len(key) == KEY_BYTES else None


def _new_key(path: Path) -> bytes | None:
    key = os.urandom(KEY_BYTES)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    try:
        descriptor = os.open(path, flags, 0o600)
    except FileExistsError:  # another build made it first: use that one
        return state_key()
    except OSError:
        return None
    try:
        os.write(descriptor, key)
    finally:
        os.close(descriptor)
    return key


def _private(found: os.stat_result, is_kind: Callable[[int], bool]) -> bool:
    """Of the kind, this user's, and writable by no one else."""
    mine = not hasattr(os, "getuid") or found.st_uid == os.getuid()
    return is_kind(found.st_mode) and mine and not found.st_mode & 0o022
