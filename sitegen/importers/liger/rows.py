"""Reading upstream's CSVs: every record checked, a problem per malformed one."""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from sitegen.model.problems import Problem

COLUMNS = (
    "kernel_name",
    "kernel_provider",
    "kernel_operation_mode",
    "metric_name",
    "metric_unit",
    "x_name",
    "x_label",
    "x_value",
    "y_value_50",
    "y_value_20",
    "y_value_80",
    "extra_benchmark_config_str",
    "gpu_name",
    "timestamp",
    "liger_version",
)
Y_COLUMNS = ("y_value_50", "y_value_20", "y_value_80")  # median, p20, p80: do_bench's quantiles


TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}")
MAX_INTEGER_DIGITS = 30  # no axis or scalar is longer; int() of thousands of digits is refused


def _config_integer(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INTEGER_DIGITS:
        raise ValueError(f"an integer of {len(text):,} digits")
    return int(text)


_CONFIG = json.JSONDecoder(parse_int=_config_integer)


@dataclass(frozen=True)
class SourceFile:
    name: str
    rows: int


@dataclass(frozen=True)
class Row:
    """One well-formed CSV record: every field present, numbers parsed, config a JSON object."""

    file: str
    line: int
    values: Mapping[str, str]
    config: Mapping[str, Any]
    y: tuple[float, float, float]  # y_value_50, y_value_20, y_value_80

    def __getitem__(self, column: str) -> str:
        return self.values[column]


def read_csv(path: Path, name: str = "") -> tuple[SourceFile, list[Row], list[Problem]]:
    """Every record of one CSV, or a problem for each malformed one (`file:line`, column);
    `name` is what rows and problems call the file (default: its name)."""
    name = name or path.name
    rows: list[Row] = []
    problems: list[Problem] = []
    count = 0
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            reader = csv.reader(handle)
            header = next(reader, None)
            missing = [column for column in COLUMNS if column not in (header or [])]
            if missing:
                message = f"missing column(s): {', '.join(missing)}" if header else "empty file"
                return SourceFile(name, 0), [], [Problem(f"{name}:1", "header", message)]
            for fields in reader:
                if not fields:  # a blank line is no record
                    continue
                count += 1
                row, row_problems = _parse_record(name, reader.line_num, header or [], fields)
                problems.extend(row_problems)
                if row is not None:
                    rows.append(row)
    except (UnicodeDecodeError, csv.Error) as error:
        # An OSError (no such file, no permission) is the command line's or the machine's, not
        # the input's: the command's guard names the path (exit 2).
        problems.append(Problem(name, "file", f"cannot read: {error}"))
    return SourceFile(name, count), rows, problems


def _parse_record(
    file: str, line: int, header: list[str], fields: list[str]
) -> tuple[Row | None, list[Problem]]:
    at = f"{file}:{line}"
    if len(fields) != len(header):
        return None, [Problem(at, "row", f"expected {len(header)} fields, found {len(fields)}")]
    values = dict(zip(header, fields, strict=True))
    problems: list[Problem] = []
    y: list[float] = []
    for column in Y_COLUMNS:
        try:
            y.append(float(values[column]))
        except ValueError:
            problems.append(Problem(at, column, f"not a number: {values[column]!r}"))
    config: Any = {}
    try:
        config = _CONFIG.decode(values["extra_benchmark_config_str"])
    except json.JSONDecodeError as error:
        problems.append(
            Problem(
                at,
                "extra_benchmark_config_str",
                f"not valid JSON: {error.msg} (column {error.colno})",
            )
        )
    except (RecursionError, ValueError) as error:
        reason = "nested too deeply" if isinstance(error, RecursionError) else str(error)
        problems.append(Problem(at, "extra_benchmark_config_str", f"not readable: {reason}"))
    else:
        if not isinstance(config, dict):
            problems.append(Problem(at, "extra_benchmark_config_str", "not a JSON object"))
    if not values["gpu_name"].strip():
        problems.append(Problem(at, "gpu_name", "empty"))
    if not _is_timestamp(values["timestamp"]):
        problems.append(
            Problem(at, "timestamp", f"expected YYYY-MM-DD HH:MM:SS, found {values['timestamp']!r}")
        )
    if not values["liger_version"]:
        problems.append(Problem(at, "liger_version", "empty"))
    if problems:
        return None, problems
    return Row(file, line, values, config, (y[0], y[1], y[2])), []


def _is_timestamp(text: str) -> bool:
    if not TIMESTAMP.fullmatch(text):
        return False
    try:
        datetime.strptime(text, "%Y-%m-%d %H:%M:%S")
    except ValueError:  # 2025-02-30
        return False
    return True
