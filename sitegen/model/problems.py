"""Problems found in content: one shape, `path: json.path: message[; hint]`."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import NamedTuple

from sitegen.model.wording import counted


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


class Problem(NamedTuple):
    """One mistake in the content, tied to a file and a place inside it."""

    path: str  # source path as shown to the author (relative to the content root's parent)
    where: str  # JSON path such as `spec.axes.rows.role`, or `line 3:14`, or `-` for the file
    message: str
    hint: str = ""
    severity: Severity = Severity.ERROR

    def line(self) -> str:
        """The problem as one printable line: file names and keys come from strangers."""
        prefix = "warning: " if self.severity is Severity.WARNING else ""
        text = f"{self.path}: {self.where}: {prefix}{self.message}"
        return printable(f"{text}; hint: {self.hint}" if self.hint else text)


def printable(text: str) -> str:
    """`text` with each character that is not printable written as Python writes it in a
    string literal (`\\n`, `\\x1b`, `\\u202e`): a file name or JSON key holding a newline, a
    terminal escape or a bidirectional override cannot forge a line (`::error …` in a CI log),
    move the cursor or reorder what is shown. Every message sitegen prints goes through here."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


class ContentError(Exception):
    """The content tree has problems; carries every one of them."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems = sorted(problems)
        super().__init__(f"{len(self.problems)} problem(s) in content")


MAX_KEY_SHOWN = 100  # a key is cut where a path shows it: content may hold keys of megabytes


def json_path(location: Iterable[str | int]) -> str:
    """`('spec', 'inputs', 0, 'name')` → `spec.inputs[0].name`."""
    text = ""
    for part in location:
        if isinstance(part, int):
            text += f"[{part}]"
            continue
        if len(part) > MAX_KEY_SHOWN:
            part = part[: MAX_KEY_SHOWN - 1] + "…"
        if text:
            text += f".{part}"
        else:
            text = str(part)
    return text or "$"


def errors(problems: Iterable[Problem]) -> list[Problem]:
    return [p for p in problems if p.severity is Severity.ERROR]


def warnings(problems: Iterable[Problem]) -> list[Problem]:
    return [p for p in problems if p.severity is Severity.WARNING]


def promote_warnings(problems: Iterable[Problem]) -> list[Problem]:
    """`--strict`: every warning becomes an error."""
    return [
        Problem(p.path, p.where, p.message, p.hint) if p.severity is Severity.WARNING else p
        for p in problems
    ]


def format_report(problems: Iterable[Problem], resource_count: int, file_count: int) -> str:
    """Every problem on its own line, sorted, then one summary line."""
    ordered = sorted(problems)
    lines = [p.line() for p in ordered]
    n_errors = len(errors(ordered))
    verdict = counted(n_errors, "error") if n_errors else "ok"
    summary = (
        f"{verdict}, {counted(len(warnings(ordered)), 'warning')}: "
        f"{counted(resource_count, 'resource')} in {counted(file_count, 'file')}"
    )
    return "\n".join([*lines, summary])
