"""Liger-Kernel's benchmark history: every CI run its `gh-pages` branch published, per commit.

The folder (`--history DIR`) holds `benchmarks/<short commit>[-v<release>]/benchmark.csv`,
`commits.tsv` (each folder's full commit, its date and subject) and
`benchmarks/golden_commits.json` (upstream's reference commit per kernel). Each CSV's rows were
measured at its folder's commit, except rows older than the commit: upstream's first CI folder
carried the older published rows over, and those are bound to their release alone.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sitegen.model.problems import Problem

COMMITS_FILE = "commits.tsv"
HISTORY_FOLDER = "benchmarks/"  # the history's CSVs, as rows and reports name them
HISTORY_RUNS = "history.jsonl.zst"  # the bulk file of a kernel and pass's history runs
GOLDEN_FILE = "benchmarks/golden_commits.json"
_FOLDER = re.compile(r"^([0-9a-f]{7,40})(?:-v([0-9][0-9A-Za-z.+-]*))?$")
_SHA = re.compile(r"^[0-9a-f]{40}$")
# The dyt script's two variants, as golden_commits.json keys them; every other kernel by name.
_GOLDEN_KEYS = {"dyt": "dyt_beta=True", "dyt_no_beta": "dyt_beta=False"}


@dataclass(frozen=True)
class Commit:
    sha: str  # the full commit
    committed_at: str  # an instant, UTC: `2025-11-21T22:48:25.000Z`


@dataclass(frozen=True)
class HistoryFile:
    path: Path
    name: str  # `benchmarks/<folder>/benchmark.csv`, as rows and reports name it
    commit: Commit
    release: str | None  # the release the run was made for (`…-v0.6.4`); None for a CI run


@dataclass(frozen=True)
class History:
    files: tuple[HistoryFile, ...]  # by folder name
    golden: dict[str, Commit]  # kernel key (bindings.py) → upstream's reference commit
    default_golden: Commit | None  # the reference of a kernel the file does not name

    def golden_of(self, kernel_key: str) -> Commit | None:
        return self.golden.get(_GOLDEN_KEYS.get(kernel_key, kernel_key), self.default_golden)


def _instant(text: str) -> str:
    """`2025-11-21T14:48:25-08:00` → `2025-11-21T22:48:25.000Z` (FORMAT.md §1's instants)."""
    moment = datetime.fromisoformat(text).astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def measured_at_commit(timestamp: str, commit: Commit) -> bool:
    """Whether a row (`YYYY-MM-DD HH:MM:SS`, UTC) can have been measured at `commit`: a row
    older than the commit was carried over from an earlier publication."""
    return timestamp.replace(" ", "T") + ".000Z" >= commit.committed_at


def load_history(folder: Path, problems: list[Problem]) -> History | None:
    """The history folder's runs and commits; a problem for each thing it lacks or misstates."""
    commits: dict[str, Commit] = {}  # folder → its commit
    commits_path = folder / COMMITS_FILE
    try:
        with commits_path.open(encoding="utf-8", newline="") as handle:
            reader = csv.DictReader(handle, delimiter="\t")
            missing = {"folder", "commit", "committed_at"} - set(reader.fieldnames or ())
            if missing:
                problems.append(
                    Problem(
                        f"{commits_path}:1",
                        "header",
                        f"missing column(s): {', '.join(sorted(missing))}",
                    )
                )
                return None
            for record in reader:
                where = f"{commits_path}:{reader.line_num}"
                sha = record["commit"] or ""
                if not _SHA.fullmatch(sha) or not sha.startswith(record["folder"].split("-")[0]):
                    problems.append(
                        Problem(where, "commit", f"not the folder's full commit: {sha!r}")
                    )
                    continue
                try:
                    commits[record["folder"]] = Commit(sha, _instant(record["committed_at"]))
                except (ValueError, TypeError):
                    problems.append(
                        Problem(
                            where,
                            "committed_at",
                            f"not an ISO 8601 time: {record['committed_at']!r}",
                        )
                    )
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        problems.append(Problem(str(commits_path), "file", f"cannot read: {error}"))
        return None

    files = []
    benchmarks = folder / "benchmarks"
    for csv_path in sorted(benchmarks.glob("*/benchmark.csv")):
        name = csv_path.parent.name
        match = _FOLDER.fullmatch(name)
        if match is None:
            problems.append(Problem(str(csv_path), "folder", "not <short commit>[-v<release>]"))
            continue
        if name not in commits:
            problems.append(
                Problem(
                    str(csv_path),
                    "folder",
                    f"{name!r} has no line in {COMMITS_FILE}",
                    "resolve the folder's commit in the Liger-Kernel repository",
                )
            )
            continue
        files.append(
            HistoryFile(csv_path, f"{HISTORY_FOLDER}{name}/benchmark.csv", commits[name], match[2])
        )
    if not files:
        problems.append(Problem(str(benchmarks), "folder", "no <folder>/benchmark.csv"))

    by_short = {commit.sha[:7]: commit for commit in commits.values()}
    golden: dict[str, Commit] = {}
    default = None
    golden_path = folder / GOLDEN_FILE
    if golden_path.exists():
        try:
            document = json.loads(golden_path.read_text(encoding="utf-8"))
            named = dict(document.get("golden_commits", {}))
            default_short = document.get("default_commit")
        except (OSError, ValueError, AttributeError, TypeError) as error:
            problems.append(Problem(str(golden_path), "file", f"cannot read: {error}"))
            named, default_short = {}, None
        for kernel, short in sorted(named.items()):
            if short not in by_short:
                where = f"golden_commits.{kernel}"
                problems.append(Problem(str(golden_path), where, f"unknown commit {short!r}"))
                continue
            golden[kernel] = by_short[short]
        default = by_short.get(default_short) if isinstance(default_short, str) else None
    return History(tuple(files), golden, default)
