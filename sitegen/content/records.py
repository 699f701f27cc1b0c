"""Record histories: who held the record of a comparison, and since when, as an importer left
them in `_records/*.json` (docs/kernelindex-import.md describes the form). Like import
reports they are content, so they are read defensively: size-limited, parsed strictly, and an
event whose fields are not of the right form is dropped, with one warning for the file.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from pathlib import Path
from typing import Any, NamedTuple

from sitegen.content.reports import data_folders, read_data_file

FORMAT = "kernelindex-record-history/1"
MAX_RECORDS_BYTES = 64 * 1024 * 1024
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
_INSTANT = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$")
_TOKEN = re.compile(r"^[a-z][a-z0-9_.-]{0,99}$")


class RecordEvent(NamedTuple):
    """From `at` on, `run` held the record of its comparison (taking it from `previous`)."""

    comparison: str  # the comparison's key, as the source names it
    at: str  # an instant
    cause: str  # `new_run`, …
    run: str  # the run's digest
    previous: str | None  # the digest of the run that held it before


class RecordHistory(NamedTuple):
    comparisons: dict[str, tuple[RecordEvent, ...]]  # key → its events, oldest first
    by_run: dict[str, tuple[str, ...]]  # run digest → the comparisons it held or lost

    def of_run(self, digest_value: str) -> tuple[tuple[str, tuple[RecordEvent, ...]], ...]:
        return tuple((key, self.comparisons[key]) for key in self.by_run.get(digest_value, ()))


NO_RECORDS = RecordHistory({}, {})


def load_records(content_dir: Path) -> tuple[RecordHistory, list[str]]:
    """Every record history of the tree, and a warning per file or event that was not used."""
    events: dict[str, list[RecordEvent]] = defaultdict(list)
    warnings: list[str] = []
    for folder, shown in data_folders(content_dir, "_records"):
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".json") or name.startswith("."):
                continue
            path = folder / name
            try:
                data = read_data_file(path, MAX_RECORDS_BYTES, "64 MiB")
                if not isinstance(data, dict) or data.get("format") != FORMAT:
                    raise ValueError(f"not a record history (format {FORMAT})")
            except (OSError, ValueError, RecursionError) as error:
                warnings.append(f"{shown}/{name}: ignored ({error})")
                continue
            dropped = _read(data, events)
            if dropped:
                warnings.append(f"{shown}/{name}: {dropped} malformed event(s) ignored")
    comparisons = {
        key: tuple(sorted(set(found), key=lambda e: (e.at, e.run)))
        for key, found in sorted(events.items())
    }
    by_run: dict[str, set[str]] = defaultdict(set)
    for key, found in comparisons.items():
        for event in found:
            by_run[event.run].add(key)
            if event.previous:
                by_run[event.previous].add(key)
    return (
        RecordHistory(comparisons, {run: tuple(sorted(keys)) for run, keys in by_run.items()}),
        warnings,
    )


def _read(data: dict[str, Any], events: dict[str, list[RecordEvent]]) -> int:
    """Add the file's well-formed events; how many were not."""
    dropped = 0
    comparisons = data.get("comparisons")
    for comparison in comparisons if isinstance(comparisons, list) else []:
        key = comparison.get("key") if isinstance(comparison, dict) else None
        found = comparison.get("events") if isinstance(comparison, dict) else None
        if not isinstance(key, str) or not _DIGEST.match(key) or not isinstance(found, list):
            dropped += 1
            continue
        for event in found:
            if not isinstance(event, dict):
                dropped += 1
                continue
            at, cause, run = event.get("at"), event.get("cause"), event.get("run")
            previous = event.get("previous")
            if not (
                isinstance(at, str)
                and _INSTANT.match(at)
                and isinstance(cause, str)
                and _TOKEN.match(cause)
                and isinstance(run, str)
                and _DIGEST.match(run)
                and (previous is None or (isinstance(previous, str) and _DIGEST.match(previous)))
            ):
                dropped += 1
                continue
            events[key].append(RecordEvent(key, at, cause, run, previous))
    return dropped
