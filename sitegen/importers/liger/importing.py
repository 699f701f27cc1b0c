"""Import Liger-Kernel's benchmark CSVs into a content tree (FORMAT.md §5–6, docs/liger-import.md).

`import_rows` reads and binds every row in memory; `main` writes the result. Each row is imported
as one BenchmarkRun (with the resources it points at) or skipped with a named reason; a malformed
file (missing columns, ragged rows, non-numeric values, bad config JSON, numbers no resource can
hold …) or environment file stops the import before anything is written. So does an import of no
run at all, and a tree that would not pass `sitegen check`: the tree is checked, in memory, by
the same pipeline before it is written. `--out` is replaced whole, as a build's output is
(publish/write.py): never a folder that is not a previous import, nor the root, the home or
the current directory, nor one holding a project.

Rows come from upstream's files, bound to a GPU by `gpu_name`, or from CSVs a contributor
measured on a machine they describe with an ExecutionEnvironment (`Measured`): each of those
rows binds to that environment (sources.py).
"""

from __future__ import annotations

import json
import math
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from sitegen.content.bulk import bulk_bytes
from sitegen.importers.liger.bindings import Unbound, bind
from sitegen.importers.liger.conventions import (
    COMMIT_DATE_LABEL,
    COMMIT_LABEL,
    GOLDEN_DATE_LABEL,
    GOLDEN_LABEL,
    RELEASE_TAG_LABEL,
)
from sitegen.importers.liger.gpus import gpu_of
from sitegen.importers.liger.history import (
    HISTORY_FOLDER,
    HISTORY_RUNS,
    History,
    HistoryFile,
    load_history,
    measured_at_commit,
)
from sitegen.importers.liger.import_reports import KINDS, build_reports
from sitegen.importers.liger.providers import PROVIDERS
from sitegen.importers.liger.resources import (
    METRICS,
    PASSES,
    Built,
    CodeRevision,
    Json,
    benchmark_run,
    environment,
    implementation,
    operation,
    project,
    protocol,
    with_labels,
    workload,
)
from sitegen.importers.liger.rows import Row, read_csv
from sitegen.importers.liger.sources import (
    MAIN_FILE,
    Origin,
    describes,
    load_environment,
    measured,
    upstream,
)
from sitegen.model.problems import Problem, Severity, errors
from sitegen.model.wording import counted
from sitegen.publish.write import Owner, check_output_dir, write_site

# A folder the import may replace: absent, empty, or holding a previous import's reports.
IMPORTED_CONTENT = Owner("a previous import", "_sources", None, "no _sources folder")


@dataclass(frozen=True)
class Measured:
    """CSVs measured on one machine, and the file describing it (`--environment HOST.json CSV…`)."""

    environment: Path
    csv_paths: tuple[Path, ...]


@dataclass(frozen=True)
class ImportedFile:
    origin: Origin
    name: str
    rows: int


@dataclass(frozen=True)
class ImportedRow:
    origin: Origin
    file: str
    line: int
    metric: str  # latency | peak_memory
    resources: Mapping[str, Built]  # run, workload, implementation, project, protocol, …

    @property
    def run(self) -> Built:
        return self.resources["run"]


@dataclass(frozen=True)
class SkippedRow:
    origin: Origin
    file: str
    line: int
    reason: str  # a short slug, counted in the report
    detail: str


@dataclass(frozen=True)
class ImportResult:
    sources: tuple[ImportedFile, ...]
    imported: tuple[ImportedRow, ...]
    skipped: tuple[SkippedRow, ...]
    problems: tuple[Problem, ...]  # malformed input: when any, nothing may be written
    warnings: tuple[Problem, ...] = ()  # imported, but the reader should know (a GPU by name)

    def resources(self) -> list[Built]:
        """Every resource once per digest, sorted by path.

        Identities collapse (swiglu and tiled_swiglu share an OperationSpec; providers the format
        cannot tell apart share an ImplementationRevision): the survivor is a copy upstream's
        rows make, if any (so measured rows never rename upstream's files), then the one whose
        `metadata.name` sorts first, then whose path does, whatever the order of the input. A
        shared ImplementationRevision is retitled to name every provider it stands for.
        """
        copies: dict[str, dict[str, Built]] = {}  # digest → path → copy
        upstream_paths: set[str] = set()
        for row in self.imported:
            for built in row.resources.values():
                copies.setdefault(built.digest, {})[built.path] = built
                if not row.origin.measured:
                    upstream_paths.add(built.path)
        survivors = []
        for same in copies.values():
            ordered = sorted(
                same.values(),
                key=lambda built: (built.path not in upstream_paths, built.name, built.path),
            )
            survivor = ordered[0]
            if survivor.kind == "ImplementationRevision":
                survivor = _shared_implementation(ordered)
            survivors.append(survivor)
        return sorted(survivors, key=lambda built: built.path)

    def tree(self) -> dict[str, Json | list[Json]]:
        """The content tree: relative path → JSON document (the resources and the reports), or
        the documents of a bulk file: the history's runs, tens of thousands, are written a
        kernel and pass a file (`runs/<kernel>/<pass>/history.jsonl.zst`)."""
        resources = self.resources()
        in_bulk = {row.run.digest for row in self.imported if row.file.startswith(HISTORY_FOLDER)}
        tree: dict[str, Json | list[Json]] = {}
        for built in resources:
            if built.path in tree:  # import_rows reports a clash: here it is our bug
                raise RuntimeError(f"two resources would be written to {built.path}")
            if built.kind == "BenchmarkRun" and built.digest in in_bulk:
                bulk = built.path.rsplit("/", 1)[0] + "/" + HISTORY_RUNS
                runs = tree.setdefault(bulk, [])
                assert isinstance(runs, list)
                runs.append(built.document)
                continue
            tree[built.path] = built.document
        tree.update(self.reports(resources))
        return tree

    def reports(self, resources: Iterable[Built] | None = None) -> dict[str, Json]:
        """Where each source's data came from and what became of every row, by report path."""
        written = self.resources() if resources is None else resources
        return build_reports(self.sources, self.imported, self.skipped, written)


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


def import_rows(
    csv_paths: Iterable[Path],
    measured_on: Iterable[Measured] = (),
    history_dir: Path | None = None,
) -> ImportResult:
    """Read and bind every row of the CSVs in memory; nothing touches the disk but the reading.

    `csv_paths` are upstream's files (a GPU by `gpu_name`); each `Measured` names CSVs measured on
    the machine its environment file describes; `history_dir`, upstream's published runs per
    commit (history.py), each row bound to the commit it measured. A history row that a main
    CSV also holds (same externalId: cell and timestamp) is that CSV's run, given the commit.
    """
    problems: list[Problem] = []
    inputs = [(upstream(path.name), path) for path in csv_paths]
    problems += _source_clashes([path for _, path in inputs])
    machines: list[tuple[Path, Origin]] = []
    for group in measured_on:
        environment_ = load_environment(group.environment, problems)
        # Without one, its CSVs are still read, so that one run reports every problem.
        origin = Origin("", "") if environment_ is None else measured(environment_)
        inputs += [(origin, path) for path in group.csv_paths]
        if environment_ is not None:
            machines.append((group.environment, origin))
    problems += _name_clashes(machines, [origin for origin, _ in inputs if not origin.measured])

    files: list[ImportedFile] = []
    imported: list[ImportedRow] = []
    skipped: list[SkippedRow] = []
    warnings: dict[tuple[str, str], Problem] = {}  # (file, gpu_name) → the first row's warning
    seen: dict[str, str] = {}  # externalId → file:line
    position: dict[str, int] = {}  # externalId → its row in `imported`
    read: dict[Path, str] = {}  # each file once, by where it is: given twice is a mistake
    # Sorted by source, then file name: nothing may depend on the order of the arguments.
    for origin, path in sorted(inputs, key=lambda item: (item[0].tag, item[1].name)):
        where = path.resolve()
        if where in read or any(f.origin == origin and f.name == path.name for f in files):
            problems.append(
                Problem(str(path), "file", "given twice (sources are told apart by name)")
            )
            continue
        read[where] = path.name
        source, rows, file_problems = read_csv(path)
        files.append(ImportedFile(origin, source.name, source.rows))
        problems.extend(file_problems)
        if not origin.source:  # its environment file has problems: nothing to bind to
            continue
        problems.extend(_mismatched_gpus(origin, path, rows))
        for row in rows:
            if not origin.measured:
                _warn_unknown_gpu(row, warnings)
            try:
                outcome = import_row(row, origin)
                external_id = outcome.run.document["spec"]["sourceNative"]["externalId"]
                if external_id in seen:
                    raise Unbound("duplicate-row", f"same externalId as {seen[external_id]}")
            except Unbound as unbound:
                skipped.append(
                    SkippedRow(origin, row.file, row.line, unbound.reason, unbound.detail)
                )
                continue
            except (ArithmeticError, ValueError) as error:  # numbers no resource can hold
                problems.append(Problem(f"{row.file}:{row.line}", "row", f"cannot import: {error}"))
                continue
            seen[external_id] = f"{row.file}:{row.line}"
            position[external_id] = len(imported)
            imported.append(outcome)
    if history_dir is not None:
        history = load_history(history_dir, problems)
        if history is not None:
            _import_history(history, files, imported, skipped, problems, warnings, seen, position)
    result = ImportResult(
        tuple(files), tuple(imported), tuple(skipped), tuple(problems), tuple(warnings.values())
    )
    clashes = _clashes(result)
    if clashes:
        result = ImportResult(
            result.sources, result.imported, result.skipped, (*problems, *clashes), result.warnings
        )
    return result


def _source_clashes(paths: list[Path]) -> list[Problem]:
    """Upstream's files are told apart by the source their name gives: two names that fold to
    one (`…_Foo.csv`, `…_foo.csv`) would share run ids, and the second file's rows would be
    skipped as duplicates of the first's; a name that gives none (`…_é.csv`) would pass for
    the main CSV."""
    first: dict[str, str] = {}  # source tag → the first file name giving it
    problems = []
    hint = (
        "name each file all_benchmark_data_<source>.csv with a source of letters, digits and "
        "dashes that no other file has (sources fold to lowercase)"
    )
    for path in sorted(paths, key=lambda p: p.name):
        tag = upstream(path.name).tag
        if not tag and path.name != MAIN_FILE:
            problems.append(
                Problem(str(path), "file", "its name gives no source: no letter a-z or digit", hint)
            )
            continue
        earlier = first.setdefault(tag, path.name)
        if earlier == path.name:
            continue  # the same name twice is reported where files are read
        problems.append(
            Problem(
                str(path),
                "file",
                f"its name gives source {tag!r}, as {earlier}'s does: their runs would share names",
                hint,
            )
        )
    return problems


def _import_history(
    history: History,
    files: list[ImportedFile],
    imported: list[ImportedRow],
    skipped: list[SkippedRow],
    problems: list[Problem],
    warnings: dict[tuple[str, str], Problem],
    seen: dict[str, str],
    position: dict[str, int],
) -> None:
    """Each history file's rows, bound to its commit, after every CSV: a row the main CSV holds
    too is one measurement published twice, so its run stays the main CSV's (its digest with
    it) and gains the commit's labels."""
    origin = upstream(MAIN_FILE)  # the same benchmark's published rows: the same source
    for at in history.files:
        source, rows, file_problems = read_csv(at.path, at.name)
        files.append(ImportedFile(origin, source.name, source.rows))
        problems.extend(file_problems)
        for row in rows:
            _warn_unknown_gpu(row, warnings)
            try:
                outcome = import_row(row, origin, at, history)
                external_id = outcome.run.document["spec"]["sourceNative"]["externalId"]
                if external_id in seen:
                    earlier = imported[position[external_id]]
                    if earlier.file != MAIN_FILE or earlier.origin != origin:
                        raise Unbound("duplicate-row", f"same externalId as {seen[external_id]}")
                    labels = dict(outcome.run.document["metadata"]["labels"])
                    run = with_labels(earlier.run, labels)
                    imported[position[external_id]] = ImportedRow(
                        earlier.origin,
                        earlier.file,
                        earlier.line,
                        earlier.metric,
                        {**earlier.resources, "run": run},
                    )
                    raise Unbound(
                        "published-twice",
                        f"the same measurement as {seen[external_id]}, whose run it dates",
                    )
            except Unbound as unbound:
                skipped.append(
                    SkippedRow(origin, row.file, row.line, unbound.reason, unbound.detail)
                )
                continue
            except (ArithmeticError, ValueError) as error:
                problems.append(Problem(f"{row.file}:{row.line}", "row", f"cannot import: {error}"))
                continue
            seen[external_id] = f"{row.file}:{row.line}"
            position[external_id] = len(imported)
            imported.append(outcome)


def revision_labels(row: Row, at: HistoryFile, history: History, kernel_key: str) -> dict[str, str]:
    """What a history row's run records of the code it measured (metadata: never its digest)."""
    labels: dict[str, str] = {}
    if measured_at_commit(row["timestamp"], at.commit):
        labels[COMMIT_LABEL] = at.commit.sha
        labels[COMMIT_DATE_LABEL] = at.commit.committed_at
    if at.release:
        labels[RELEASE_TAG_LABEL] = at.release
    golden = history.golden_of(kernel_key)
    if golden is not None:
        labels[GOLDEN_LABEL] = golden.sha
        labels[GOLDEN_DATE_LABEL] = golden.committed_at
    return labels


def _name_clashes(machines: list[tuple[Path, Origin]], upstream_: list[Origin]) -> list[Problem]:
    """A machine's name leads its runs' ids, names and files: no other source may share it."""
    taken = {origin.tag: "an upstream CSV's source" for origin in upstream_}
    seen: dict[str, tuple[Path, Origin]] = {}
    problems = []
    for path, origin in machines:
        earlier = seen.setdefault(origin.tag, (path, origin))
        if origin.tag in taken:
            clash = taken[origin.tag]
        elif earlier[1] != origin:
            clash = f"{earlier[0]}, which describes another machine"
        else:
            continue
        problems.append(
            Problem(
                str(path),
                "metadata.name",
                f"{origin.tag!r} also names {clash}",
                "give each machine's environment a name of its own",
            )
        )
    return problems


def _mismatched_gpus(origin: Origin, path: Path, rows: list[Row]) -> list[Problem]:
    """Rows of a measured CSV whose GPU is not the one its environment describes, once per GPU."""
    if origin.environment is None:
        return []
    product = origin.environment.document["spec"]["hardware"]["product"]
    first: dict[str, Row] = {}
    for row in rows:
        if not describes(origin.environment, row["gpu_name"]):
            first.setdefault(row["gpu_name"], row)
    return [
        Problem(
            f"{path}:{row.line}",
            "gpu_name",
            f"{gpu_name!r}, but the environment {origin.environment.name!r} describes "
            f"a {product!r}",
            "give each CSV after the --environment of the machine that measured it",
        )
        for gpu_name, row in sorted(first.items())
    ]


def _warn_unknown_gpu(row: Row, warnings: dict[tuple[str, str], Problem]) -> None:
    gpu_name = row["gpu_name"]
    if (row.file, gpu_name) in warnings:
        return
    gpu, known = gpu_of(gpu_name)
    if known:
        return
    warnings[(row.file, gpu_name)] = Problem(
        f"{row.file}:{row.line}",
        "gpu_name",
        f"{gpu_name!r} is not a GPU of upstream's data: hardware derived from its name "
        f"(architecture {gpu.architecture}), software not recorded",
        "describe the machine that measured with --environment HOST.json "
        "(`sitegen environment` prints one)",
        Severity.WARNING,
    )


def _clashes(result: ImportResult) -> list[Problem]:
    """Two identities that would be written to one file (a machine named like another)."""
    by_path: dict[str, list[Built]] = {}
    for built in result.resources():
        by_path.setdefault(built.path, []).append(built)
    return [
        Problem(
            path,
            "metadata.name",
            f"{len(copies)} different {copies[0].kind} resources would be written here",
            "give the environment a name of its own",
        )
        for path, copies in sorted(by_path.items())
        if len(copies) > 1
    ]


def import_row(
    row: Row,
    origin: Origin | None = None,
    at: HistoryFile | None = None,
    history: History | None = None,
) -> ImportedRow:
    """The resources one row imports to; raises Unbound when it does not bind. `at`: the
    history file the row is from, whose commit its Liger implementation is at."""
    origin = origin or upstream(row.file)
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
    revision = labels = None
    if at is not None and history is not None:
        labels = revision_labels(row, at, history, binding.key)
        revision = CodeRevision(labels.get(COMMIT_LABEL), row["liger_version"])
    implementation_ = implementation(binding.key, row["kernel_provider"], revision)
    refs = {
        "operation": operation(binding.kernel.operation),
        "workload": workload(binding),
        "project": project(PROVIDERS[row["kernel_provider"]].project),
        "implementation": implementation_,
        "protocol": protocol(metric, row["kernel_operation_mode"]),
        "environment": origin.environment or environment(row["gpu_name"]),
    }
    run = benchmark_run(row, binding, metric, refs, origin, labels)
    return ImportedRow(origin, row.file, row.line, metric, {**refs, "run": run})


def render(document: Json) -> str:
    """Pretty JSON: two-space indent, keys in the order built, UTF-8 as is, a final newline."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def rendered(tree: Mapping[str, Json | list[Json]]) -> dict[str, bytes]:
    """The tree's files as written, the reports first: a staging tree left by a killed import
    is known by its `_sources` folder (publish/write.py). A list is a bulk file's documents."""
    order = sorted(tree, key=lambda path: (not path.startswith("_sources/"), path))
    return {path: _file_bytes(tree[path]) for path in order}


def _file_bytes(content: Json | list[Json]) -> bytes:
    return bulk_bytes(content) if isinstance(content, list) else render(content).encode()


def write_tree(tree: Mapping[str, Json | list[Json]], out_dir: Path) -> None:
    """Replace `out_dir` with `tree`, all or nothing: staged beside it, then swapped in, under
    its lock. OutputError for a folder the import may not replace, or a failed write."""
    write_site(rendered(tree), out_dir, owner=IMPORTED_CONTENT)


def main(
    csv_paths: list[Path],
    out_dir: Path,
    measured_on: Iterable[Measured] = (),
    history_dir: Path | None = None,
) -> int:
    """`sitegen import liger CSV... [--environment HOST.json CSV...] --out DIR`: prints each file's
    counts, every skipped row and a summary; returns 0, or 1 for malformed input, an import of
    no run or content that would not check. Raises OutputError for an `--out` that may not be
    replaced, WriteError (an OSError) for one that cannot be written. Nothing is written unless
    it returns 0."""
    check_output_dir(out_dir, None, IMPORTED_CONTENT)
    result = import_rows(csv_paths, measured_on, history_dir)
    if result.problems:
        return _refuse(result.problems, "in the input")
    if not result.imported:
        for reason, count in sorted(Counter(row.reason for row in result.skipped).items()):
            print(f"skipped, {reason}: {count}", file=sys.stderr)
        print("nothing imported: every row was skipped; nothing written", file=sys.stderr)
        return 1
    for warning in result.warnings:
        print(warning.line(), file=sys.stderr)
    tree = result.tree()
    files = rendered(tree)
    # Checked as a tree named as `--out` is, so its problems name the files to be.
    from sitegen.pipeline import check_documents  # the whole pipeline: only to import

    checked = check_documents(files.items(), out_dir.resolve().name or "content")
    if errors(checked.problems):
        return _refuse(errors(checked.problems), "in what the import would write")
    write_site(files, out_dir, owner=IMPORTED_CONTENT)
    for source in result.sources:
        imported = sum(
            1 for row in result.imported if (row.origin, row.file) == (source.origin, source.name)
        )
        skipped = sum(
            1 for row in result.skipped if (row.origin, row.file) == (source.origin, source.name)
        )
        shown = (
            f"{source.name} (measured on {source.origin.tag})"
            if source.origin.measured
            else source.name
        )
        print(f"{shown}: {source.rows} rows, {imported} imported, {skipped} skipped")
    for reason, count in sorted(Counter(row.reason for row in result.skipped).items()):
        print(f"skipped, {reason}: {count}")
    for row in result.skipped:
        print(f"  {row.file}:{row.line}: {row.reason}: {row.detail}")
    runs = ", ".join(
        f"{count} {metric.replace('_', ' ')}"
        for metric, count in sorted(Counter(row.metric for row in result.imported).items())
    )
    written = Counter(built.kind for built in result.resources())
    kinds = ", ".join(f"{written[kind]} {kind}" for kind in KINDS)
    total = len(result.imported)
    plural = "s" if total != 1 else ""
    print(f"imported {total} run{plural} ({runs or 'none'}) into {out_dir}: {kinds}")
    return 0


def _refuse(problems: Iterable[Problem], where: str) -> int:
    found = list(problems)
    for problem in found:
        print(problem.line(), file=sys.stderr)
    print(f"{counted(len(found), 'problem')} {where}; nothing written", file=sys.stderr)
    return 1
