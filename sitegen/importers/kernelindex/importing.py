"""`sitegen import kernelindex EXPORT.jsonl.zst`: kernelindex.dev's catalog export into a content
tree (docs/kernelindex-import.md).

The export is read whole (export.py), the chosen sources' runs and everything they name are
checked and linked (manifests.py), and the tree is written as a few zstd JSON Lines files, a
resource or a run's bundle a line, sorted by kind and digest so that importing twice writes the
same bytes, beside each source's report and record history (import_reports.py). The tree is
checked in memory by the same pipeline as `sitegen check` before it is written; `--out` is
replaced whole, as liger's is: never a folder that is not a previous import.
"""

from __future__ import annotations

import hashlib
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path

import orjson

from sitegen.content.bulk import bulk_bytes
from sitegen.importers.kernelindex.export import read_export
from sitegen.importers.kernelindex.import_reports import build_reports
from sitegen.importers.kernelindex.manifests import (
    NOT_IMPORTED,
    READ_TABLES,
    Document,
    Linked,
    Source,
    link,
    sources_of,
)
from sitegen.model.problems import Problem, errors
from sitegen.model.wording import counted
from sitegen.publish.write import Owner, check_output_dir, write_site

# A folder the import may replace: absent, empty, or holding a previous import's reports.
IMPORTED_CONTENT = Owner("a previous import", "_sources", None, "no _sources folder")
# The file each kind is written to; runs go to one file per source.
FILES = {
    "OperationSpec": "operations.jsonl.zst",
    "WorkloadCase": "workloads.jsonl.zst",
    "WorkloadSuite": "workloads.jsonl.zst",
    "ImplementationRevision": "implementations.jsonl.zst",
    "SoftwareProject": "projects.jsonl.zst",
}


def tree_files(
    documents: Iterable[Document], reports: dict[str, dict[str, object]]
) -> dict[str, bytes]:
    """The tree's files, the reports first: a staging tree left by a killed import is known by
    its `_sources` folder (publish/write.py)."""
    grouped: dict[str, list[Document]] = defaultdict(list)
    for document in documents:
        path = FILES.get(document.kind) or f"runs/{document.source}.jsonl.zst"
        grouped[path].append(document)
    files = {
        path: orjson.dumps(report, option=orjson.OPT_INDENT_2) + b"\n"
        for path, report in sorted(
            reports.items(), key=lambda i: (not i[0].startswith("_sources/"), i[0])
        )
    }
    for path in sorted(grouped):
        files[path] = bulk_bytes(document.value for document in grouped[path])
    return files


def main(export_path: Path, out_dir: Path, named: list[str]) -> int:
    """Import the export into `out_dir`; 0, or 1 for an export that does not check (every
    problem printed, nothing written). OutputError and WriteError as `write_site` raises them."""
    check_output_dir(out_dir, None, IMPORTED_CONTENT)
    export, problems = read_export(export_path)
    every, chosen, unknown = sources_of(export, named)
    problems += unknown
    if problems:
        return _refuse(problems, "in the export")
    linked, problems = link(export, chosen)
    if problems:
        return _refuse(problems, "in the export")
    if not linked.documents:
        print(f"{export.shown}: no run of the sources imported; nothing written", file=sys.stderr)
        return 1
    digest = hashlib.sha256(export_path.read_bytes()).hexdigest()
    reports = build_reports(linked, export_path.name, digest)
    files = tree_files(linked.documents, reports)
    # Checked as a tree named as `--out` is, so its problems name the files to be.
    from sitegen.pipeline import check_documents  # the whole pipeline: only to import

    checked = check_documents(files.items(), out_dir.resolve().name or "content")
    if errors(checked.problems):
        return _refuse(errors(checked.problems), "in what the import would write")
    write_site(files, out_dir, owner=IMPORTED_CONTENT)
    _summarise(every, linked, out_dir, export.tables.keys())
    return 0


def _summarise(every: list[Source], linked: Linked, out_dir: Path, tables: Iterable[str]) -> None:
    chosen = {source.slug for source in linked.sources}
    for source in every:
        if source.slug in chosen and source.slug not in linked.runs_by_source:
            print(f"{source.slug}: no benchmark run in the export; nothing of it imported")
        elif source.slug in chosen:
            statuses = linked.runs_by_source.get(source.slug, Counter())
            shown = ", ".join(f"{n:,} {status}" for status, n in sorted(statuses.items()))
            note = "" if source.policy is not None else " (states no policy: named with --source)"
            print(f"{source.slug}: {counted(sum(statuses.values()), 'run')} ({shown}){note}")
        else:
            print(
                f"{source.slug}: not imported: its row states no policy; "
                f"name it with --source {source.slug}"
            )
    if linked.skipped_tables:
        skipped = ", ".join(f"{name} ({rows:,} rows)" for name, rows in linked.skipped_tables)
        print(
            "skipped serving tables, not benchmark kinds (a later issue may render them): "
            + skipped
        )
    for name, rows in linked.unread_tables:
        print(f"not imported: {name} ({rows:,} rows): {NOT_IMPORTED[name]}")
    unknown = sorted(
        set(tables) - set(READ_TABLES) - set(NOT_IMPORTED) - {n for n, _ in linked.skipped_tables}
    )
    for name in unknown:
        print(f"not imported: {name}: a table this importer does not know")
    kinds = Counter(document.kind for document in linked.documents)
    shown = ", ".join(f"{kinds[kind]:,} {kind}" for kind in sorted(kinds))
    print(f"imported into {out_dir}: {shown}; {counted(len(linked.records), 'record event')}")


def _refuse(problems: Iterable[Problem], where: str) -> int:
    found = sorted(problems)
    for problem in found:
        print(problem.line(), file=sys.stderr)
    print(f"{counted(len(found), 'problem')} {where}; nothing written", file=sys.stderr)
    return 1
