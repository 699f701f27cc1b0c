"""The one shape of a problem report."""

from __future__ import annotations

from sitegen.model.problems import Problem, Severity, format_report, json_path, promote_warnings


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
