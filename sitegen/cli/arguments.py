"""The paths commands are given, checked alike: the same one-line usage error everywhere."""

from __future__ import annotations

import os
from pathlib import Path

from sitegen.cli.exit_codes import CommandError


def content_directory(path: Path, command: str) -> Path:
    """`path` when it is a directory (not a link to one); else the usage error every command
    gives, with the full path (the default `content` is relative to wherever the command was
    started)."""
    if path.is_symlink():
        raise CommandError(
            f"{full_path(path)}: a symbolic link, and content is never read through one",
            f"name the folder it leads to: sitegen {command} {os.path.realpath(path)}",
        )
    if path.is_dir():
        return path
    what = "not a directory" if os.path.lexists(path) else "no such directory"
    raise CommandError(
        f"{full_path(path)}: {what}",
        f"name the content directory: sitegen {command} CONTENT_DIR (default: content/ here)",
    )


def existing_files(paths: list[Path]) -> list[Path]:
    """`paths` when each exists; else the usage error naming the first that does not."""
    for path in paths:
        if not os.path.lexists(path):
            raise CommandError(f"{full_path(path)}: no such file", "check the path")
    return paths


def full_path(path: Path) -> str:
    """Absolute, `..` folded, links left as they are: the path the user would type."""
    return os.path.abspath(path)
