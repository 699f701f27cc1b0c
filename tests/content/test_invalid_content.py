"""One folder per invalid content tree, each with the exact output `sitegen check` must print.

Regenerate the expected files with
`SITEGEN_REGENERATE=1 pytest tests/content/test_invalid_content.py` and read the diff.
"""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

import pytest

from sitegen.cli import main
from tests.conftest import FIXTURES, REGENERATE

CASES = sorted(p for p in (FIXTURES / "invalid").iterdir() if p.is_dir())


def run_check(case: Path) -> str:
    args_file = case / "args.txt"
    args = args_file.read_text().split() if args_file.exists() else []
    output = io.StringIO()
    previous = Path.cwd()
    os.chdir(case)  # paths are printed as the author sees them: content/…
    try:
        with contextlib.redirect_stdout(output):
            status = main(["check", "content", *args])
    finally:
        os.chdir(previous)
    return f"{output.getvalue()}[exit {status}]\n"


def test_there_are_enough_cases() -> None:
    assert len(CASES) >= 30


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_invalid_tree_reports_exactly(case: Path) -> None:
    actual = run_check(case)
    expected_file = case / "expected.txt"
    if REGENERATE:
        expected_file.write_text(actual, encoding="utf-8")
    assert actual == expected_file.read_text(encoding="utf-8")
    # Every invalid case fails, except the one whose only problem is a warning.
    assert actual.endswith("[exit 1]\n") or "warning" in actual
