"""Import Liger-Kernel's benchmark CSVs into a content tree (FORMAT.md §5–6, docs/liger-import.md).

`import_rows` reads and binds every row in memory; `main` writes the result. Each row is imported
as one BenchmarkRun (with the resources it points at) or skipped with a named reason; a malformed
file (missing columns, ragged rows, non-numeric values, bad config JSON, an unknown GPU, numbers
no resource can hold …) stops the import before anything is written. So does an import of no
run at all, and a tree that would not pass `sitegen check`: the tree is checked, in memory, by
the same pipeline before it is written. `--out` is replaced whole, as a build's output is
(publish/write.py): never a folder that is not a previous import, nor the root, the home or
the current directory, nor one holding a project.
"""

from __future__ import annotations

import json
import math
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from sitegen.importers.liger.bindings import Unbound, bind
from sitegen.importers.liger.providers import PROVIDERS, REPOSITORY
from sitegen.importers.liger.resources import (
    METRICS,
    PASSES,
    Built,
    Json,
    benchmark_run,
    environment,
    implementation,
    operation,
    project,
    protocol,
    workload,
)
from sitegen.importers.liger.rows import Row, SourceFile, read_csv
from sitegen.model.problems import Problem, errors
from sitegen.publish.errors import OutputError
from sitegen.publish.write import Owner, check_output_dir, write_site

SNAPSHOT_COMMIT = "ead96b618e5c67bddc6a6e9bcb99bfe6b5ab661c"
# The last upstream commit touching each CSV (shared/data/liger/README.md).
FILE_COMMITS = {
    "all_benchmark_data.csv": "2120862ba532c9449e72d603ba6324310ae756e7",
    "all_benchmark_data_cutile.csv": "7a12e092579dba20fa02388bf80a2c39cbc9010a",
    "all_benchmark_data_cutedsl.csv": "4d899a0bdcd1b2b79241fd611e99c3fb1a6b1297",
}
LICENCE = {"spdx": "BSD-2-Clause", "copyright": "Copyright 2024 LinkedIn Corporation"}
REPORT_PATH = "_sources/liger-kernel.json"  # `_` folders are data for the site, not resources
# A folder the import may replace: absent, empty, or holding a previous import's report.
IMPORTED_CONTENT = Owner("a previous import", REPORT_PATH, None)


@dataclass(frozen=True)
class ImportedRow:
    file: str
    line: int
    metric: str  # latency | peak_memory
    resources: Mapping[str, Built]  # run, workload, implementation, project, protocol, …

    @property
    def run(self) -> Built:
        return self.resources["run"]


@dataclass(frozen=True)
class SkippedRow:
    file: str
    line: int
    reason: str  # a short slug, counted in the report
    detail: str


# Kinds in the order the report lists them.
KINDS = (
    "OperationSpec",
    "WorkloadCase",
    "SoftwareProject",
    "ImplementationRevision",
    "BenchmarkProtocol",
    "ExecutionEnvironment",
    "BenchmarkRun",
)


@dataclass(frozen=True)
class ImportResult:
    sources: tuple[SourceFile, ...]
    imported: tuple[ImportedRow, ...]
    skipped: tuple[SkippedRow, ...]
    problems: tuple[Problem, ...]  # malformed input: when any, nothing may be written

    def resources(self) -> list[Built]:
        """Every resource once per digest, sorted by path.

        Identities collapse (swiglu and tiled_swiglu share an OperationSpec; providers the format
        cannot tell apart share an ImplementationRevision): the survivor is the copy whose
        `metadata.name` sorts first, then whose path does, whatever the order of the input. A
        shared ImplementationRevision is retitled to name every provider it stands for.
        """
        copies: dict[str, dict[str, Built]] = {}  # digest → path → copy
        for row in self.imported:
            for built in row.resources.values():
                copies.setdefault(built.digest, {})[built.path] = built
        survivors = []
        for same in copies.values():
            ordered = sorted(same.values(), key=lambda built: (built.name, built.path))
            survivor = ordered[0]
            if survivor.kind == "ImplementationRevision":
                survivor = _shared_implementation(ordered)
            survivors.append(survivor)
        return sorted(survivors, key=lambda built: built.path)

    def tree(self) -> dict[str, Json]:
        """The content tree: relative path → JSON document (the resources and the report)."""
        resources = self.resources()
        tree: dict[str, Json] = {}
        for built in resources:
            if built.path in tree:  # two identities, one file: a naming rule is wrong
                raise RuntimeError(f"two resources would be written to {built.path}")
            tree[built.path] = built.document
        tree[REPORT_PATH] = self.report(resources)
        return tree

    def report(self, resources: Iterable[Built] | None = None) -> Json:
        """Where the data came from and what became of every row, for the site to show."""
        written = Counter(built.kind for built in (resources or self.resources()))
        files = []
        for source in self.sources:
            commit = FILE_COMMITS.get(source.name)
            upstream = f"benchmark/data/{source.name}"
            imported = [row for row in self.imported if row.file == source.name]
            entry: Json = {"name": source.name, "path": upstream}
            if commit:
                entry["commit"] = commit
                entry["url"] = f"{REPOSITORY}/blob/{commit}/{upstream}"
            entry["rows"] = source.rows
            entry["imported"] = dict(sorted(Counter(row.metric for row in imported).items()))
            entry["skipped"] = sum(1 for row in self.skipped if row.file == source.name)
            files.append(entry)
        return {
            "title": "Liger-Kernel benchmark data",
            "repository": REPOSITORY,
            "snapshot": SNAPSHOT_COMMIT,
            "licence": LICENCE,
            "files": files,
            "resources": {kind: written[kind] for kind in KINDS},
            "runs": dict(sorted(Counter(row.metric for row in self.imported).items())),
            "skipped": dict(sorted(Counter(row.reason for row in self.skipped).items())),
            "skippedRows": [
                {"row": f"{row.file}:{row.line}", "reason": row.reason, "detail": row.detail}
                for row in self.skipped
            ],
        }


def _shared_implementation(copies: list[Built]) -> Built:
    """One ImplementationRevision standing for several providers: its metadata names them all."""
    first = copies[0].document["metadata"]
    kernel_title = first["title"].rsplit(" · ", 1)[0]
    about: dict[str, str] = {}  # provider title → description, first seen first
    for copy in copies:
        provider_title = copy.document["metadata"]["title"].rsplit(" · ", 1)[1]
        about.setdefault(provider_title, copy.document["metadata"]["description"])
    if len(about) == 1:  # one provider under two kernel names (swiglu and tiled_swiglu)
        return copies[0]
    providers = list(about)
    parts = [f"{title}: {description}" for title, description in about.items()]
    metadata: Json = {
        "name": first["name"],
        "title": f"{kernel_title} · {' / '.join(providers)}",
        "description": (
            "The benchmark's providers "
            + ", ".join(providers)
            + " share this identity: the format tells implementations apart by operation, "
            "language, build and licence only, and these agree. Each run's title names its "
            "provider. " + " ".join(parts)
        ),
    }
    if all(copy.document["metadata"].get("labels") for copy in copies):
        metadata["labels"] = first["labels"]
    urls = dict.fromkeys(
        ref["url"] for copy in copies for ref in copy.document["metadata"]["sourceRefs"]
    )
    metadata["sourceRefs"] = [{"url": url} for url in urls]
    document = {**copies[0].document, "metadata": metadata}
    return Built(copies[0].path, document, copies[0].digest)


def import_rows(csv_paths: Iterable[Path]) -> ImportResult:
    """Read and bind every row of the CSVs in memory; nothing touches the disk but the reading."""
    sources: list[SourceFile] = []
    imported: list[ImportedRow] = []
    skipped: list[SkippedRow] = []
    problems: list[Problem] = []
    seen: dict[str, str] = {}  # externalId → file:line
    # Sorted by file name: the report and duplicate detection must not depend on argument order.
    for path in sorted(csv_paths, key=lambda p: p.name):
        if any(source.name == path.name for source in sources):
            problems.append(
                Problem(path.name, "file", "given twice (sources are told apart by name)")
            )
            continue
        source, rows, file_problems = read_csv(path)
        sources.append(source)
        problems.extend(file_problems)
        for row in rows:
            try:
                outcome = import_row(row)
                external_id = outcome.run.document["spec"]["sourceNative"]["externalId"]
                if external_id in seen:
                    raise Unbound("duplicate-row", f"same externalId as {seen[external_id]}")
            except Unbound as unbound:
                skipped.append(SkippedRow(row.file, row.line, unbound.reason, unbound.detail))
                continue
            except (ArithmeticError, ValueError) as error:  # numbers no resource can hold
                problems.append(Problem(f"{row.file}:{row.line}", "row", f"cannot import: {error}"))
                continue
            seen[external_id] = f"{row.file}:{row.line}"
            imported.append(outcome)
    return ImportResult(tuple(sources), tuple(imported), tuple(skipped), tuple(problems))


def import_row(row: Row) -> ImportedRow:
    """The resources one row imports to; raises Unbound when it does not bind."""
    metric = METRICS.get((row["metric_name"], row["metric_unit"]))
    if metric is None:
        found = f"{row['metric_name']} in {row['metric_unit']}"
        raise Unbound("unsupported-metric", f"{found}; known: speed in ms, memory in MB")
    if row["kernel_provider"] not in PROVIDERS:
        raise Unbound(
            "unknown-provider", f"no implementation for provider {row['kernel_provider']!r}"
        )
    if row["kernel_operation_mode"] not in PASSES:
        raise Unbound("unknown-pass", f"no protocol for pass {row['kernel_operation_mode']!r}")
    binding = bind(row)
    if not all(math.isfinite(value) for value in row.y):
        raise Unbound("non-finite-value", f"y values are {', '.join(map(str, row.y))}")
    implementation_ = implementation(binding.key, row["kernel_provider"])
    refs = {
        "operation": operation(binding.kernel.operation),
        "workload": workload(binding),
        "project": project(PROVIDERS[row["kernel_provider"]].project),
        "implementation": implementation_,
        "protocol": protocol(metric, row["kernel_operation_mode"]),
        "environment": environment(row["gpu_name"]),
    }
    return ImportedRow(
        row.file, row.line, metric, {**refs, "run": benchmark_run(row, binding, metric, refs)}
    )


def render(document: Json) -> str:
    """Pretty JSON: two-space indent, keys in the order built, UTF-8 as is, a final newline."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def rendered(tree: Mapping[str, Json]) -> dict[str, bytes]:
    """The tree's files as written, the report first: a staging tree left by a killed import
    is known by it (publish/write.py)."""
    order = sorted(tree, key=lambda path: (path != REPORT_PATH, path))
    return {path: render(tree[path]).encode() for path in order}


def write_tree(tree: Mapping[str, Json], out_dir: Path) -> None:
    """Replace `out_dir` with `tree`, all or nothing: staged beside it, then swapped in, under
    its lock. OutputError for a folder the import may not replace, or a failed write."""
    write_site(rendered(tree), out_dir, owner=IMPORTED_CONTENT)


def main(csv_paths: list[Path], out_dir: Path) -> int:
    """`sitegen import liger CSV... --out DIR`: prints counts per skip reason and a summary;
    returns the exit code: 0 ok, 1 malformed input or content that would not check, 2 an
    `--out` that may not be replaced or written. Nothing is written unless it returns 0."""
    try:
        check_output_dir(out_dir, None, IMPORTED_CONTENT)
    except OutputError as error:
        print(f"sitegen import liger: {error}", file=sys.stderr)
        return 2
    result = import_rows(csv_paths)
    if result.problems:
        return _refuse(result.problems, "in the input")
    if not result.imported:
        for reason, count in sorted(Counter(row.reason for row in result.skipped).items()):
            print(f"skipped, {reason}: {count}", file=sys.stderr)
        print("nothing imported: every row was skipped; nothing written", file=sys.stderr)
        return 1
    tree = result.tree()
    files = rendered(tree)
    # Imported into a memory tree named as `--out` is, so its problems name the files to be.
    from sitegen.pipeline import check_documents  # the whole pipeline: only to import

    checked = check_documents(files.items(), out_dir.resolve().name or "content")
    if errors(checked.problems):
        return _refuse(errors(checked.problems), "in what the import would write")
    try:
        write_site(files, out_dir, owner=IMPORTED_CONTENT)
    except OutputError as error:
        print(f"sitegen import liger: {error}", file=sys.stderr)
        return 2
    report = tree[REPORT_PATH]
    for source in report["files"]:
        imported, skipped = sum(source["imported"].values()), source["skipped"]
        print(f"{source['name']}: {source['rows']} rows, {imported} imported, {skipped} skipped")
    for reason, count in report["skipped"].items():
        print(f"skipped, {reason}: {count}")
    runs = ", ".join(
        f"{count} {metric.replace('_', ' ')}" for metric, count in report["runs"].items()
    )
    kinds = ", ".join(f"{count} {kind}" for kind, count in report["resources"].items())
    total = sum(report["runs"].values())
    plural = "s" if total != 1 else ""
    print(f"imported {total} run{plural} ({runs or 'none'}) into {out_dir}: {kinds}")
    return 0


def _refuse(problems: Iterable[Problem], where: str) -> int:
    found = list(problems)
    for problem in found:
        print(problem.line(), file=sys.stderr)
    count = len(found)
    print(f"{count} problem{'s' if count != 1 else ''} {where}; nothing written", file=sys.stderr)
    return 1
