"""Every command runs under `guarded`: a failure is one printable line on stderr, naming the
file and what to do, and ends the command with the status exit_codes.py gives it. Ctrl-C and
SIGTERM interrupt any command the same way; a traceback is printed only under `--debug`."""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import sys
import traceback
from collections.abc import Callable

from sitegen import process
from sitegen.cli.exit_codes import EXIT_USAGE, CommandError, failure_code
from sitegen.model.problems import printable

# What to do when the file system refuses: by errno, the path being named in the line itself.
_WRITE_ELSEWHERE = "or write somewhere else (--out)"
OS_HINTS = {
    errno.EROFS: f"that file system is read-only: remount it writable, {_WRITE_ELSEWHERE}",
    errno.EACCES: f"sitegen may not write there: change its permissions, {_WRITE_ELSEWHERE}",
    errno.EPERM: f"sitegen may not write there: change its permissions, {_WRITE_ELSEWHERE}",
    errno.ENOSPC: f"the disk is full: free some space, {_WRITE_ELSEWHERE}",
    errno.EDQUOT: f"the disk quota is used up: free some space, {_WRITE_ELSEWHERE}",
    errno.EMFILE: "too many open files: raise the limit (ulimit -n) and run it again",
    errno.ENFILE: "too many open files on this system: close some and run it again",
    errno.ENOENT: "check the path",
    errno.ENOTDIR: "a part of the path is a file, not a folder: check the path",
    errno.EIO: "the disk reported an error: check it, or write somewhere else",
}
BUG_HINT = (
    "this is sitegen's bug, not a problem of the content: run it again with --debug for the "
    "traceback, and report it"
)


def guarded(args: argparse.Namespace) -> int:
    """Run the command `args` names; its exit status, whatever happens on the way."""
    name = f"sitegen {args.command}"
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        with process.stopped_by_signals():
            return int(handler(args))
    except BrokenPipeError:
        # Whoever read the output stopped reading (`| head`): nothing is left to tell them.
        _detach_stdout()
        return EXIT_USAGE
    except BaseException as error:
        code = failure_code(error)
        if isinstance(error, SystemExit | GeneratorExit) or (
            code is None and not isinstance(error, Exception)
        ):
            raise
        if args.debug:
            traceback.print_exception(error, file=sys.stderr)
        print(printable(f"{name}: {_explained(error, code, args)}"), file=sys.stderr, flush=True)
        return EXIT_USAGE if code is None else code


def _explained(error: BaseException, code: int | None, args: argparse.Namespace) -> str:
    """`what; hint: what to do`, for the line after the command's name."""
    if code is None:
        return f"internal error: {type(error).__name__}: {error}; hint: {BUG_HINT}"
    if isinstance(error, CommandError):
        return f"{error.message}; hint: {error.hint}" if error.hint else error.message
    if isinstance(error, KeyboardInterrupt):
        after: Callable[[KeyboardInterrupt], str] | None = getattr(args, "interrupted", None)
        return f"interrupted; {after(error)}" if after is not None else "interrupted"
    if isinstance(error, OSError) and error.errno is not None:
        return _os_failure(error)
    return str(error)


def os_reason(error: OSError) -> str:
    """The system's words for `error`, as the rest of a message: `no space left on device`."""
    reason = error.strerror or os.strerror(error.errno or 0)
    return reason[:1].lower() + reason[1:]


def _os_failure(error: OSError) -> str:
    reason = os_reason(error)
    paths = [
        os.path.abspath(os.fsdecode(path))
        for path in (error.filename, error.filename2)
        if isinstance(path, str | bytes)  # not a descriptor's number
    ]
    where = f"{' → '.join(paths)}: " if paths else ""
    hint = OS_HINTS.get(error.errno or 0, "check that path and run it again")
    return f"{where}{reason}; hint: {hint}"


def _detach_stdout() -> None:
    """Point stdout at /dev/null, so that flushing it at exit raises nothing more."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
