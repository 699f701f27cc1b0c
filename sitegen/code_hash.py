"""Which code and templates a process runs, as a hash of their files' paths and bytes: the
incremental state is used only by the code that wrote it (publish/incremental.py), the build
daemon runs builds only for clients of its own code (cli/daemon.py), and every page's key
names the templates and assets it was made with. Standard library only: a client of the
daemon hashes before it imports anything of the build."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import Any

PACKAGE_DIR = Path(__file__).resolve().parent
SOURCE_SUFFIXES = (".py", ".html", ".xml", ".css", ".js")


def hash_files(digest: Any, folders: tuple[Path, ...]) -> str:
    """`digest` (a hashlib object) updated with every source file under `folders`, by path."""
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path.suffix in SOURCE_SUFFIXES:
                digest.update(path.as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()  # type: ignore[no-any-return]


@functools.cache
def package_hash() -> str:
    """sitegen's own code (its templates and assets included), as this process found it."""
    return hash_files(hashlib.sha256(), (PACKAGE_DIR,))
