"""The one shape of a problem report."""

from __future__ import annotations

from sitegen.model.problems import (
    Problem,
    Severity,
    format_report,
    json_path,
    printable,
    promote_warnings,
)


def test_json_path_writes_keys_and_indexes() -> None:
    assert json_path(("spec", "inputs", 0, "name")) == "spec.inputs[0].name"
    assert json_path(()) == "$"
    assert json_path((3,)) == "[3]"


def test_problem_line_carries_hint_and_warning_marker() -> None:
    assert Problem("content/a.json", "spec", "bad").line() == "content/a.json: spec: bad"
    warning = Problem("content/a.json", "metadata", "odd", "fix it", Severity.WARNING)
    assert warning.line() == "content/a.json: metadata: warning: odd; hint: fix it"


def test_report_sorts_and_summarises() -> None:
    problems = [
        Problem("content/b.json", "spec", "second"),
        Problem("content/a.json", "spec", "first"),
        Problem("content/a.json", "metadata", "careful", severity=Severity.WARNING),
    ]
    assert format_report(problems, 5, 2).splitlines() == [
        "content/a.json: metadata: warning: careful",
        "content/a.json: spec: first",
        "content/b.json: spec: second",
        "2 errors, 1 warning: 5 resources in 2 files",
    ]
    assert format_report([], 1, 1) == "ok, 0 warnings: 1 resource in 1 file"
    assert format_report([], 4354, 4356) == "ok, 0 warnings: 4,354 resources in 4,356 files"


def test_strict_promotes_every_warning() -> None:
    warning = Problem("content/a.json", "metadata", "odd", severity=Severity.WARNING)
    assert [p.severity for p in promote_warnings([warning])] == [Severity.ERROR]


def test_a_problem_line_escapes_what_is_not_printable() -> None:
    """A file name or key from a stranger cannot forge a line (GitHub's `::error` commands),
    send a terminal escape or reverse the text; letters of any script stay as they are."""
    problem = Problem(
        "content/a\n::error file=x::forged.json",
        "spec.x\x1b[2J\u202e",
        "unknown field",
        "allowed here: durée, \u00a0tab\there",
        Severity.WARNING,
    )
    assert problem.line() == (
        "content/a\\n::error file=x::forged.json: spec.x\\x1b[2J\\u202e: warning: unknown field; "
        "hint: allowed here: durée, \\xa0tab\\there"
    )
    assert format_report([problem], 1, 1).count("\n") == 1
    assert printable("plain · ASCII and ünïcode") == "plain · ASCII and ünïcode"
    assert printable("\udcff") == "\\udcff"  # an undecodable byte of a file name
