"""kernelindex.dev's catalog export read into its tables: zstd-compressed JSON Lines, one
`{"table": NAME, "row": {...}}` a line (docs/kernelindex-import.md).

Nothing is trusted: a line that is not such an object is a problem naming the file and line,
and reading goes on, so that one run of the import reports every malformed line.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from sitegen.content.bulk import bulk_lines
from sitegen.model.problems import Problem

Json = dict[str, Any]


class Row(NamedTuple):
    line: int  # 1-based, in the decompressed export
    row: Json

    @property
    def id(self) -> str:
        found = self.row.get("id")
        return found if isinstance(found, str) else f"line {self.line}"


class Export(NamedTuple):
    shown: str  # the export's path, as problems name it
    tables: dict[str, list[Row]]  # by table name, rows in the export's order

    def rows(self, table: str) -> list[Row]:
        return self.tables.get(table, [])


def read_export(path: Path) -> tuple[Export, list[Problem]]:
    """Every table of the export, and a problem per line that is not a table row (or for a file
    that is not zstd, or inflates past the bulk files' limit). OSError is the caller's."""
    shown = str(path)
    tables: dict[str, list[Row]] = defaultdict(list)
    problems: list[Problem] = []
    with open(path, "rb") as stream:
        for number, line in bulk_lines(stream, True, shown, problems):
            _read_line(shown, number, line, tables, problems)
    return Export(shown, dict(tables)), problems


def _read_line(
    shown: str, number: int, line: bytes, tables: dict[str, list[Row]], problems: list[Problem]
) -> None:
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError as error:
        problems.append(Problem(f"{shown}:{number}", "-", f"not JSON: {error}"))
        return
    table = value.get("table") if isinstance(value, dict) else None
    row = value.get("row") if isinstance(value, dict) else None
    if not isinstance(table, str) or not isinstance(row, dict):
        problems.append(
            Problem(
                f"{shown}:{number}",
                "-",
                "not a table row",
                'each line of an export is {"table": NAME, "row": {...}}',
            )
        )
        return
    tables[table].append(Row(number, row))
