"""What every command's exit status means, and which failure ends with which: the one contract.

0   done (warnings allowed).
1   the content has problems (or the templates, or a base it was compared with): fix them.
2   the command could not do its work: a wrong command line or option, a missing or refused
    path, a file system that refuses to be written, a port in use, an interrupt, or sitegen's
    own bug (as ruff's 2: anything that is not a problem of the input).
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_CONTENT = 1  # the content (or a base it was compared with) has problems
EXIT_USAGE = 2  # the command line, an option's value or the environment is wrong


class CommandError(Exception):
    """A failure a command explains itself, in one line: what and where, then what to do."""

    def __init__(self, message: str, hint: str = "", code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.code = code


def failure_code(error: BaseException) -> int | None:
    """The exit status of a command that raised `error`; None for an error no stage raises on
    purpose (sitegen's bug)."""
    # Imported here: only a failing command pays for the modules that define their errors.
    from sitegen.model.values import EpochError
    from sitegen.publish.baseline import BaseContentError, BaseError
    from sitegen.publish.deploy import DeployError
    from sitegen.publish.search import SearchError
    from sitegen.publish.write import OutputError
    from sitegen.render.errors import RenderError
    from sitegen.site.urls import PathClash, UrlError

    if isinstance(error, CommandError):
        return error.code
    if isinstance(error, RenderError | PathClash | BaseContentError):
        return EXIT_CONTENT
    if isinstance(
        error,
        OSError
        | KeyboardInterrupt
        | OutputError
        | UrlError
        | DeployError
        | EpochError
        | SearchError,
    ):
        return EXIT_USAGE
    if isinstance(error, BaseError):
        return EXIT_USAGE
    return None
