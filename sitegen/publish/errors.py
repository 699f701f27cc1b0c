"""What goes wrong when a command writes its tree: each an OutputError, with the path in its
message, for the command line to print on one line (exit status 2: the environment, not the
content)."""

from __future__ import annotations

from pathlib import Path


class OutputError(Exception):
    """The output path is one we refuse to write to, or writing it failed."""


class OutputBusy(OutputError):
    """Another command holds the output's lock (publish/lock.py)."""


class WriteError(OutputError):
    """The file system refused a write: read-only, full, no permission …"""

    def __init__(self, message: str, errno: int | None = None) -> None:
        super().__init__(message)
        self.errno = errno

    @classmethod
    def of(cls, error: OSError, path: str | Path) -> WriteError:
        reason = error.strerror or str(error) or type(error).__name__
        return cls(f"cannot write {path}: {reason}", error.errno)
