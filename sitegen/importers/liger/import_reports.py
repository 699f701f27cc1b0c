"""The import reports of `content/_sources/`: one per source, saying where its data came from and
what became of every row, for the site's credits and provenance (content/reports.py reads them).

Upstream's files share one report, `liger-kernel.json`; runs measured for this catalog on a
machine a contributor described have one per machine, `<sourceNative.source>.json`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from sitegen.importers.liger.conventions import COPYRIGHT, LICENCE, MEASURED_NAME, SOURCE
from sitegen.importers.liger.history import HISTORY_FOLDER
from sitegen.importers.liger.providers import REPOSITORY
from sitegen.importers.liger.sources import Origin

if TYPE_CHECKING:
    from sitegen.importers.liger.importing import ImportedFile, ImportedRow, SkippedRow
    from sitegen.importers.liger.resources import Built

Json = dict[str, Any]

REPORT_PATH = "_sources/liger-kernel.json"  # `_` folders are data for the site, not resources
SNAPSHOT_COMMIT = "ead96b618e5c67bddc6a6e9bcb99bfe6b5ab661c"
# The last upstream commit touching each CSV (sources/liger/README.md).
FILE_COMMITS = {
    "all_benchmark_data.csv": "2120862ba532c9449e72d603ba6324310ae756e7",
    "all_benchmark_data_cutile.csv": "7a12e092579dba20fa02388bf80a2c39cbc9010a",
    "all_benchmark_data_cutedsl.csv": "4d899a0bdcd1b2b79241fd611e99c3fb1a6b1297",
}
# The gh-pages commit of the history's files (benchmarks/<folder>/benchmark.csv): README there.
HISTORY_COMMIT = "a4809939c2d8ba409d1c8025adeb8cad5f202f6a"
# Kinds in the order a report lists them.
KINDS = (
    "OperationSpec",
    "WorkloadCase",
    "SoftwareProject",
    "ImplementationRevision",
    "BenchmarkProtocol",
    "ExecutionEnvironment",
    "BenchmarkRun",
)


def report_path(origin: Origin) -> str:
    return f"_sources/{origin.source}.json" if origin.measured else REPORT_PATH


def build_reports(
    files: Iterable[ImportedFile],
    imported: Iterable[ImportedRow],
    skipped: Iterable[SkippedRow],
    resources: Iterable[Built],
) -> dict[str, Json]:
    """Every report, by its path in the content tree."""
    written = {built.digest: built for built in resources}
    groups: dict[str, tuple[Origin, list[ImportedFile], list[ImportedRow], list[SkippedRow]]] = {}
    for file in files:
        groups.setdefault(report_path(file.origin), (file.origin, [], [], []))[1].append(file)
    for row in imported:
        groups[report_path(row.origin)][2].append(row)
    for skip in skipped:
        groups[report_path(skip.origin)][3].append(skip)
    return {
        path: _report(origin, group_files, rows, skips, written)
        for path, (origin, group_files, rows, skips) in sorted(groups.items())
    }


def _report(
    origin: Origin,
    files: list[ImportedFile],
    imported: list[ImportedRow],
    skipped: list[SkippedRow],
    written: dict[str, Built],
) -> Json:
    # What this source's rows point at, each identity once (as written: the survivors).
    digests = {built.digest for row in imported for built in row.resources.values()}
    kinds = Counter(written[digest].kind for digest in digests)
    entries = []
    metrics: dict[str, Counter[str]] = {}  # file → imported runs per metric
    for row in imported:
        metrics.setdefault(row.file, Counter())[row.metric] += 1
    skips = Counter(row.file for row in skipped)
    for source in files:
        entry: Json = {"name": source.name}
        if source.name.startswith(HISTORY_FOLDER):  # gh-pages: every published CI run
            entry["path"] = source.name
            entry["commit"] = HISTORY_COMMIT
            entry["url"] = f"{REPOSITORY}/blob/{HISTORY_COMMIT}/{source.name}"
        elif not origin.measured:  # a file of upstream's repository
            upstream = f"benchmark/data/{source.name}"
            entry["path"] = upstream
            commit = FILE_COMMITS.get(source.name)
            if commit:
                entry["commit"] = commit
                entry["url"] = f"{REPOSITORY}/blob/{commit}/{upstream}"
        entry["rows"] = source.rows
        # A report's files have names of their own (one origin each): counted by name.
        entry["imported"] = dict(sorted(metrics.get(source.name, Counter()).items()))
        entry["skipped"] = skips[source.name]
        entries.append(entry)
    head: Json
    if origin.measured and origin.environment is not None:
        environment = origin.environment
        head = {
            "title": MEASURED_NAME,
            "source": origin.source,
            "repository": REPOSITORY,  # the scripts'
            "licence": {"spdx": LICENCE, "copyright": COPYRIGHT},
            "environment": {"name": environment.name, "digest": environment.digest},
        }
    else:
        head = {
            "title": "Liger-Kernel benchmark data",
            "source": SOURCE,  # every backend CSV's tagged source too
            "repository": REPOSITORY,
            "snapshot": SNAPSHOT_COMMIT,
            "licence": {"spdx": LICENCE, "copyright": COPYRIGHT},
        }
    return {
        **head,
        "files": entries,
        "resources": {kind: kinds[kind] for kind in KINDS},
        "runs": dict(sorted(Counter(row.metric for row in imported).items())),
        "skipped": dict(sorted(Counter(row.reason for row in skipped).items())),
        "skippedRows": [
            {"row": f"{row.file}:{row.line}", "reason": row.reason, "detail": row.detail}
            for row in skipped
        ],
    }
