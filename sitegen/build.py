"""The pipeline: load → validate → resolve → plan → render → write.

`check` is the same pipeline stopped before planning, so the two can never drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sitegen.catalog import Catalog, resolve
from sitegen.load import load_content
from sitegen.problems import Problem, errors, promote_warnings


@dataclass(frozen=True)
class CheckedContent:
    catalog: Catalog
    problems: list[Problem]  # sorted; errors and warnings
    resource_count: int  # every resource read, copies included
    file_count: int

    @property
    def ok(self) -> bool:
        return not errors(self.problems)


def check_content(content_dir: Path, strict: bool = False) -> CheckedContent:
    """Load and validate every file, then resolve every reference."""
    loaded = load_content(content_dir)
    catalog, resolution_problems = resolve(loaded.resources, strict=strict)
    problems = [*loaded.problems, *resolution_problems]
    if strict:
        problems = promote_warnings(problems)
    return CheckedContent(catalog, sorted(problems), len(loaded.resources), loaded.file_count)
