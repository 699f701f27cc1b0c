"""Where the numbers come from: the credit line of a source, and import reports.

An importer may leave a JSON report in `content/_sources/*.json` (upstream repository, commit,
licence, skipped rows). It is content like any other, so it is read defensively: size-limited,
parsed strictly, and only recognised fields of the right type are kept; anything else is ignored.
The licence line of an upstream an importer knows is the importer's, not the report's, because
crediting it is a duty (site/credits.py).
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections import Counter
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urlsplit

MAX_REPORT_BYTES = 1024 * 1024
MAX_TEXT = 300
MAX_REASONS = 20
_HEX = re.compile(r"^[0-9a-f]{7,64}$")


class Attribution(NamedTuple):
    """The credit line shown on every page that shows a source's numbers."""

    source: str  # sourceNative.source
    name: str
    licence: str
    copyright: str
    repository: str | None

    @property
    def text(self) -> str:
        return ", ".join(part for part in (self.name, self.licence, self.copyright) if part)


class SourceReport(NamedTuple):
    """What an import report says, reduced to checked, display-ready scalars."""

    file: str  # the report's file name, for display
    source: str | None  # the sourceNative.source it names, if it names one
    name: str | None
    repository: str | None
    commit: str | None
    licence: str | None
    copyright: str | None
    facts: tuple[tuple[str, str, str | None], ...]  # (label, text, https link or None)
    skipped: int | None
    reasons: tuple[tuple[str, int], ...]  # why rows were skipped, most frequent first
    terms: str | None = None  # the source's terms of use, in its words
    url: str | None = None  # an https page stating the terms
    verified: str | None = None  # when the terms were last checked (a date)
    freshness_days: int | None = None  # how many days old its newest data may be, as it promises
    newest_run: str | None = None  # the instant of the newest run imported


def report_matches(report: SourceReport, attribution: Attribution) -> bool:
    """A report describes a source if it names it, or names the same upstream repository."""
    if report.source is not None:
        return report.source == attribution.source
    return bool(report.repository and attribution.repository) and _same_repository(
        report.repository or "", attribution.repository or ""
    )


def data_folders(content_dir: Path, name: str) -> list[tuple[Path, str]]:
    """The folders named `name` an import may leave site data in, with their paths as shown:
    the tree's own (`_sources`), and one in each folder an importer owns (`kernelindex/_sources`).
    Links are not followed."""
    found: list[tuple[Path, str]] = []
    try:
        subfolders = sorted(
            entry.name
            for entry in os.scandir(content_dir)
            if entry.is_dir(follow_symlinks=False) and not entry.name.startswith((".", "_"))
        )
    except OSError:
        return found
    for shown in [name, *(f"{sub}/{name}" for sub in subfolders)]:
        folder = content_dir / shown
        try:
            if stat.S_ISDIR(os.lstat(folder).st_mode):
                found.append((folder, shown))
        except OSError:
            continue
    return found


def load_reports(content_dir: Path) -> tuple[dict[str, SourceReport], list[str]]:
    """Reports by path (`_sources/x.json`, `kernelindex/_sources/y.json`); plus a warning line
    per report that could not be used."""
    reports: dict[str, SourceReport] = {}
    warnings: list[str] = []
    for folder, shown in data_folders(content_dir, "_sources"):
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        _load_folder(folder, shown, names, reports, warnings)
    return reports, warnings


def read_data_file(path: Path, limit: int, limit_in_words: str) -> Any:
    """A data file an importer left beside the content (a report, a record history), read as
    content is: a regular file, never a link, of at most `limit` bytes, strict UTF-8 JSON.
    OSError or ValueError saying why not."""
    mode = os.lstat(path)
    if not stat.S_ISREG(mode.st_mode) or mode.st_size > limit:
        raise ValueError(f"not a regular file under {limit_in_words}")
    with open(path, "rb") as handle:
        return json.loads(handle.read(limit + 1).decode("utf-8"))


def _load_folder(
    folder: Path,
    shown: str,
    names: list[str],
    reports: dict[str, SourceReport],
    warnings: list[str],
) -> None:
    for name in names:
        path = folder / name
        if not name.endswith(".json") or name.startswith("."):
            continue
        try:
            data = read_data_file(path, MAX_REPORT_BYTES, "1 MiB")
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
        except (OSError, ValueError, RecursionError) as error:
            warnings.append(f"{shown}/{name}: ignored ({error})")
            continue
        # The tree's own reports keep their bare names, as before a folder could hold some.
        key = name if shown == "_sources" else f"{shown}/{name}"
        reports[key] = _report(name, data)


def _text(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return " ".join(value.split())[:MAX_TEXT]
    return None


def _count(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def _report(file_name: str, data: dict[str, Any]) -> SourceReport:
    upstream = data.get("upstream")
    merged = {**(upstream if isinstance(upstream, dict) else {})}
    merged |= {k: v for k, v in data.items() if k != "upstream"}

    def text(*keys: str) -> str | None:
        for key in keys:
            found = _text(merged.get(key))
            if found:
                return found
        return None

    licence_block = merged.get("licence", merged.get("license"))
    licence = _text(licence_block)
    copyright_text = text("copyright")
    if isinstance(licence_block, dict):
        licence = _text(licence_block.get("spdx")) or _text(licence_block.get("id"))
        copyright_text = copyright_text or _text(licence_block.get("copyright"))
    repository = text("repository", "repo")
    if repository and not _is_https(repository):
        repository = None
    commit = text("commit", "snapshot", "revision")
    if commit and not _HEX.match(commit):
        commit = None

    facts: list[tuple[str, str, str | None]] = []
    files = merged.get("files")
    for item in files[:MAX_REASONS] if isinstance(files, list) else []:
        if not isinstance(item, dict) or not _text(item.get("name")):
            continue
        parts = []
        rows = _count(item.get("rows"))
        if rows is not None:
            parts.append(f"{rows:,} rows")
        imported = item.get("imported")
        if isinstance(imported, dict):
            tallies = [
                f"{n:,} {str(k).replace('_', ' ')}"[:MAX_TEXT]
                for k, n in sorted(imported.items())
                if _count(n) is not None
            ]
            if tallies:
                parts.append("imported " + " + ".join(tallies))
        skipped_rows = _count(item.get("skipped"))
        if skipped_rows is not None:
            parts.append(f"{skipped_rows:,} skipped")
        link = _text(item.get("url"))
        facts.append(
            (
                _text(item.get("name")) or "",
                ", ".join(parts),
                link if link and _is_https(link) else None,
            )
        )
    runs = merged.get("runs")
    if isinstance(runs, dict):
        for metric, count in sorted(runs.items()):
            if _count(count) is not None:
                facts.append(
                    (f"Runs: {str(metric).replace('_', ' ')}"[:MAX_TEXT], f"{count:,}", None)
                )
    url = text("url")
    reasons = _reasons(merged)
    skipped = _count(merged.get("skipped"))
    if skipped is None and reasons:
        skipped = sum(count for _, count in reasons)
    return SourceReport(
        file=file_name[:MAX_TEXT],
        source=text("source"),
        name=text("name", "title", "project"),
        repository=repository,
        commit=commit,
        licence=licence,
        copyright=copyright_text,
        facts=tuple(facts),
        skipped=skipped,
        reasons=reasons,
        terms=text("terms"),
        url=url if url and _is_https(url) else None,
        verified=text("verified"),
        freshness_days=_count(merged.get("freshnessDays")),
        newest_run=text("newestRun"),
    )


def _reasons(merged: dict[str, Any]) -> tuple[tuple[str, int], ...]:
    """Skipped rows as (reason, count): from a list of {reason} objects or a reason → count map."""
    tally: Counter[str] = Counter()
    # A reason → count map first (it counts every row); a list of rows may be cut short.
    for key in ("skipped", "skippedRows", "skipped_rows", "skips"):
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


def _same_repository(a: str, b: str) -> bool:
    return a.lower().rstrip("/").removesuffix(".git") == b.lower().rstrip("/").removesuffix(".git")


def _is_https(value: str) -> bool:
    parts = urlsplit(value)
    return parts.scheme == "https" and bool(parts.hostname) and not any(c.isspace() for c in value)
