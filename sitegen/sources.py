"""Where the numbers come from: attribution per `sourceNative.source`, and import reports.

An importer may leave a JSON report in `content/_sources/*.json` (upstream repository, commit,
licence, skipped rows). It is content like any other, so it is read defensively: size-limited,
parsed strictly, and only recognised fields of the right type are kept; anything else is ignored.
The licence line of a known upstream is ours, not the report's, because crediting it is a duty.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

MAX_REPORT_BYTES = 1024 * 1024
MAX_TEXT = 300
MAX_REASONS = 20
_HEX = re.compile(r"^[0-9a-f]{7,64}$")


@dataclass(frozen=True)
class Attribution:
    """The credit line shown on every page that shows a source's numbers."""

    source: str  # sourceNative.source
    name: str
    licence: str
    copyright: str
    repository: str | None

    @property
    def text(self) -> str:
        return ", ".join(part for part in (self.name, self.licence, self.copyright) if part)


# Upstreams whose terms we know; FORMAT.md §5 and shared/data/liger/README.md.
KNOWN_SOURCES = {
    "liger-kernel-bench": Attribution(
        source="liger-kernel-bench",
        name="Liger-Kernel",
        licence="BSD-2-Clause",
        copyright="Copyright 2024 LinkedIn Corporation",
        repository="https://github.com/linkedin/Liger-Kernel",
    ),
}


@dataclass(frozen=True)
class SourceReport:
    """What an import report says, reduced to checked scalars."""

    file: str  # the report's file name, for display
    source: str
    name: str | None
    repository: str | None
    commit: str | None
    licence: str | None
    copyright: str | None
    imported: int | None
    skipped: int | None
    reasons: tuple[tuple[str, int], ...]  # why rows were skipped, most frequent first
    counts: tuple[tuple[str, int], ...]  # any other whole-number tallies the report gives


def attribution_for(source: str, reports: dict[str, SourceReport]) -> Attribution:
    if source in KNOWN_SOURCES:
        return KNOWN_SOURCES[source]
    report = reports.get(source)
    if report is None:
        return Attribution(source, source, "", "", None)
    return Attribution(
        source,
        report.name or source,
        report.licence or "",
        report.copyright or "",
        report.repository,
    )


def load_reports(content_dir: Path) -> tuple[dict[str, SourceReport], list[str]]:
    """Reports by source; plus a warning line per report that could not be used."""
    folder = content_dir / "_sources"
    reports: dict[str, SourceReport] = {}
    warnings: list[str] = []
    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            return reports, warnings
        names = sorted(os.listdir(folder))
    except OSError:
        return reports, warnings
    for name in names:
        path = folder / name
        if not name.endswith(".json") or name.startswith("."):
            continue
        try:
            mode = os.lstat(path)
            if not stat.S_ISREG(mode.st_mode) or mode.st_size > MAX_REPORT_BYTES:
                raise ValueError("not a regular file under 1 MiB")
            with open(path, "rb") as handle:
                data = json.loads(handle.read(MAX_REPORT_BYTES + 1).decode("utf-8"))
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
        except (OSError, ValueError, RecursionError) as error:
            warnings.append(f"_sources/{name}: ignored ({error})")
            continue
        report = _report(name, data)
        if report.source not in reports:
            reports[report.source] = report
    return reports, warnings


def _report(file_name: str, data: dict[str, Any]) -> SourceReport:
    upstream = data.get("upstream") if isinstance(data.get("upstream"), dict) else {}
    merged = {**upstream, **{k: v for k, v in data.items() if k != "upstream"}}

    def text(*keys: str) -> str | None:
        for key in keys:
            value = merged.get(key)
            if isinstance(value, str) and value.strip():
                return " ".join(value.split())[:MAX_TEXT]
        return None

    def whole(*keys: str) -> int | None:
        for key in keys:
            value = merged.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                return value
            if isinstance(value, list):
                return len(value)
        return None

    repository = text("repository", "repo", "url")
    if repository and not _is_https(repository):
        repository = None
    commit = text("commit", "revision", "sha")
    if commit and not _HEX.match(commit):
        commit = None
    source = text("source") or file_name.removesuffix(".json")
    reasons = _reasons(merged)
    skipped = whole("skipped", "skipped_rows", "skippedRows", "rows_skipped")
    if skipped is None and reasons:
        skipped = sum(count for _, count in reasons)
    counts = tuple(
        (key, value)
        for key, value in sorted(merged.items())
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0 and len(key) <= 60
    )
    return SourceReport(
        file=file_name[:MAX_TEXT],
        source=source,
        name=text("name", "title", "project"),
        repository=repository,
        commit=commit,
        licence=text("licence", "license"),
        copyright=text("copyright"),
        imported=whole("imported", "imported_rows", "importedRows", "rows_imported"),
        skipped=skipped,
        reasons=reasons,
        counts=counts[:MAX_REASONS],
    )


def _reasons(merged: dict[str, Any]) -> tuple[tuple[str, int], ...]:
    """Skipped rows as (reason, count): from a list of {reason} objects or a reason → count map."""
    tally: Counter[str] = Counter()
    for key in ("skipped", "skipped_rows", "skippedRows", "skips"):
        value = merged.get(key)
        if isinstance(value, list):
            for item in value:
                reason = item.get("reason") if isinstance(item, dict) else item
                if isinstance(reason, str) and reason.strip():
                    tally[" ".join(reason.split())[:MAX_TEXT]] += 1
        elif isinstance(value, dict):
            for reason, count in value.items():
                if isinstance(count, int) and not isinstance(count, bool) and count >= 0:
                    tally[" ".join(str(reason).split())[:MAX_TEXT]] += count
        if tally:
            break
    return tuple(sorted(tally.items(), key=lambda item: (-item[1], item[0]))[:MAX_REASONS])


def _is_https(value: str) -> bool:
    parts = urlsplit(value)
    return parts.scheme == "https" and bool(parts.hostname) and not any(c.isspace() for c in value)
