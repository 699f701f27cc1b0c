"""What goes wrong when a command writes its tree: each an OutputError, with the path in its
message, for the command line to print on one line (exit status 2: the environment, not the
content)."""

from __future__ import annotations

from pathlib import Path


class OutputError(Exception):
    """The output path is one we refuse to write to, or writing it failed."""


class OutputBusy(OutputError):
    """Another command holds the output's lock (publish/lock.py)."""


class WriteError(OutputError, OSError):
    """The file system refused a write (read-only, full, no permission …): an OSError with its
    errno, naming the path as the user knows it (in the output, not in the staging tree)."""

    @classmethod
    def of(cls, error: OSError, path: str | Path) -> WriteError:
        reason = error.strerror or str(error) or type(error).__name__
        return cls(error.errno or 0, reason, str(path))
