"""The export's manifests, checked and linked: every run of the chosen sources with the
operation, workloads, implementation and project its row ids name, each manifest's digest
checked against the one kernelindex.dev recorded beside it.

A run row carries its `{run, protocol, environment}` bundle; the rows it names by id
(`implementationId`, `workloadId`, and theirs: `operationId`, `projectId`) carry theirs. A
recorded digest that the manifest does not hash to, a row id naming no row, or a manifest whose
digest reference disagrees with the row it is linked to is a problem naming the table, the row
id and both digests; nothing is written then.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any, NamedTuple

from sitegen.importers.kernelindex.export import Export, Json, Row
from sitegen.model.digest import digest
from sitegen.model.problems import Problem

# Tables of the serving side (model serving runs): not benchmark kinds, skipped whole.
SERVING_TABLES = ("model_revisions",)
SERVING_PREFIX = "serving_"
# Tables whose rows are read into something else, or carry nothing the content holds.
READ_TABLES = (
    "sources",
    "projects",
    "operations",
    "workloads",
    "implementations",
    "benchmark_runs",
    "record_events",
)
NOT_IMPORTED = {
    "measurements": "each run's measurements, as its own manifest holds them",
    "operation_aliases": "other names of operations, not part of any manifest",
    "artifacts": "source files and logs by digest; their bytes are not in the export",
}
# The label an implementation's project rides in (metadata: never part of its digest).
PROJECT_LABEL = "project"


class Source(NamedTuple):
    id: str
    slug: str
    name: str
    kind: str
    policy: Json | None  # license, terms, attribution, url, verified, freshnessDays


class Document(NamedTuple):
    """One line of a content file: a resource, or a run's bundle."""

    kind: str  # BenchmarkRun for a bundle
    digest: str
    name: str
    source: str  # the source slug of a run; "" for what runs share
    value: Json


class RecordEvent(NamedTuple):
    """Who held the record of a comparison, and since when (the `record_events` table)."""

    comparison: str  # kernelindex.dev's comparisonKey: one cohort of runs
    at: str
    cause: str
    policy: str
    run: str  # the run's digest
    previous: str | None  # the digest of the run that held it before, if any


class Linked(NamedTuple):
    sources: tuple[Source, ...]  # the sources imported, by slug
    documents: tuple[Document, ...]  # sorted by kind, digest, name; each identity once per name
    records: tuple[tuple[str, RecordEvent], ...]  # (source slug, event), by comparison, time
    runs_by_source: dict[str, Counter[str]]  # slug → status → runs
    skipped_tables: tuple[tuple[str, int], ...]  # serving tables, with their row counts
    unread_tables: tuple[tuple[str, int], ...]  # tables read into nothing (NOT_IMPORTED), counts


def sources_of(
    export: Export, named: Iterable[str]
) -> tuple[list[Source], list[Source], list[Problem]]:
    """Every source, those imported (stating a policy, or named with `--source`), and a
    problem for each name no source has."""
    every = []
    for row in export.rows("sources"):
        policy = row.row.get("policy")
        every.append(
            Source(
                row.id,
                str(row.row.get("slug", "")),
                str(row.row.get("name", "")),
                str(row.row.get("kind", "")),
                policy if isinstance(policy, dict) else None,
            )
        )
    wanted = set(named)
    problems = [
        Problem(
            export.shown,
            "sources",
            f"--source {slug}: no source has that slug",
            "the export's sources: " + ", ".join(sorted(s.slug for s in every)),
        )
        for slug in sorted(wanted - {s.slug for s in every})
    ]
    chosen = [s for s in every if s.policy is not None or s.slug in wanted]
    return sorted(every, key=lambda s: s.slug), sorted(chosen, key=lambda s: s.slug), problems


class _Linker:
    """Walks the chosen runs and everything their rows name, checking as it goes."""

    def __init__(self, export: Export) -> None:
        self.export = export
        self.rows: dict[str, dict[str, Row]] = {
            table: {row.id: row for row in export.rows(table)}
            for table in ("projects", "operations", "workloads", "implementations")
        }
        self.problems: list[Problem] = []
        self.documents: dict[tuple[str, str, str], Document] = {}
        self.done: set[tuple[str, str]] = set()

    def problem(self, table: str, row: Row, message: str, hint: str = "") -> None:
        self.problems.append(Problem(self.export.shown, f"{table} row {row.id}", message, hint))

    def manifest(self, table: str, row: Row, kinds: tuple[str, ...]) -> Json | None:
        manifest = row.row.get("manifest")
        if (
            not isinstance(manifest, dict)
            or manifest.get("kind") not in kinds
            or not isinstance(manifest.get("spec"), dict)
            or not isinstance(manifest.get("metadata"), dict)
        ):
            self.problem(table, row, f"manifest: not a {' or '.join(kinds)} manifest")
            return None
        return manifest

    def checked(self, table: str, row: Row, field: str, resource: Json) -> str | None:
        """The resource's digest, if it is the one recorded in `field` (or none is recorded)."""
        computed = digest(str(resource["kind"]), resource["spec"])
        if field:
            recorded = row.row.get(field)
            if recorded != computed:
                self.problem(
                    table,
                    row,
                    f"{field}: the export recorded {recorded}, the manifest hashes to {computed}",
                    "the manifest was changed after kernelindex.dev recorded it",
                )
                return None
        return computed

    def linked(self, table: str, row: Row, field: str, target: str) -> Row | None:
        target_id = row.row.get(field)
        found = self.rows[target].get(target_id) if isinstance(target_id, str) else None
        if found is None:
            self.problem(table, row, f"{field}: no {target} row with id {target_id}")
        return found

    def agree(self, table: str, row: Row, where: str, named: Any, found: str | None) -> None:
        """A manifest's digest reference and the digest of the row its link names agree."""
        if found is not None and named != found:
            self.problem(
                table,
                row,
                f"{where}: the manifest names {named}, the linked row's manifest is {found}",
                "a row id and a digest disagree on what is linked",
            )

    def keep(self, kind: str, computed: str, value: Json, source: str = "") -> None:
        named = value["run"] if kind == "BenchmarkRun" else value  # a run's bundle
        name = str(named["metadata"].get("name", ""))
        self.documents.setdefault(
            (kind, computed, name), Document(kind, computed, name, source, value)
        )

    def run(self, source: Source, row: Row) -> tuple[str, str] | None:
        """The run's digest and status, once its bundle and the rows it names are checked."""
        bundle = row.row.get("manifest")
        parts = ("run", "protocol", "environment")
        kinds = ("BenchmarkRun", "BenchmarkProtocol", "ExecutionEnvironment")
        if (
            not isinstance(bundle, dict)
            or set(bundle) != set(parts)
            or not all(
                isinstance(bundle[p], dict)
                and bundle[p].get("kind") == kind
                and isinstance(bundle[p].get("spec"), dict)
                and isinstance(bundle[p].get("metadata"), dict)
                for p, kind in zip(parts, kinds, strict=True)
            )
        ):
            self.problem(
                "benchmark_runs", row, "manifest: not a {run, protocol, environment} bundle"
            )
            return None
        run_digest = self.checked("benchmark_runs", row, "runDigest", bundle["run"])
        protocol = self.checked("benchmark_runs", row, "protocolKey", bundle["protocol"])
        environment = self.checked("benchmark_runs", row, "environmentKey", bundle["environment"])
        spec = bundle["run"]["spec"]
        implementation = self.implementation(
            self.linked("benchmark_runs", row, "implementationId", "implementations")
        )
        workload = self.workload(self.linked("benchmark_runs", row, "workloadId", "workloads"))
        self.agree(
            "benchmark_runs",
            row,
            "spec.implementationDigest",
            spec.get("implementationDigest"),
            implementation,
        )
        self.agree(
            "benchmark_runs", row, "spec.workloadDigest", spec.get("workloadDigest"), workload
        )
        if run_digest is None or protocol is None or environment is None:
            return None
        self.keep("BenchmarkRun", run_digest, bundle, source.slug)
        return run_digest, str(spec.get("status", ""))

    def implementation(self, row: Row | None) -> str | None:
        if row is None:
            return None
        manifest = self.manifest("implementations", row, ("ImplementationRevision",))
        if manifest is None:
            return None
        computed = self.checked("implementations", row, "implementationDigest", manifest)
        if computed is None or ("implementations", row.id) in self.done:
            return computed
        self.done.add(("implementations", row.id))
        operation = self.operation(self.linked("implementations", row, "operationId", "operations"))
        named = manifest["spec"].get("operation", {}).get("specDigest")
        self.agree("implementations", row, "spec.operation.specDigest", named, operation)
        project = self.project(self.linked("implementations", row, "projectId", "projects"))
        if project is not None:
            manifest = _with_project(manifest, project)
        self.keep("ImplementationRevision", computed, manifest)
        return computed

    def workload(self, row: Row | None) -> str | None:
        if row is None:
            return None
        manifest = self.manifest("workloads", row, ("WorkloadCase", "WorkloadSuite"))
        if manifest is None:
            return None
        computed = self.checked("workloads", row, "workloadDigest", manifest)
        if computed is None or ("workloads", row.id) in self.done:
            return computed
        self.done.add(("workloads", row.id))
        operation = self.operation(self.linked("workloads", row, "operationId", "operations"))
        named = manifest["spec"].get("operationSpecDigest")
        self.agree("workloads", row, "spec.operationSpecDigest", named, operation)
        self.keep(str(manifest["kind"]), computed, manifest)
        return computed

    def operation(self, row: Row | None) -> str | None:
        if row is None:
            return None
        manifest = self.manifest("operations", row, ("OperationSpec",))
        if manifest is None:
            return None
        computed = self.checked("operations", row, "semanticDigest", manifest)
        if computed is not None and ("operations", row.id) not in self.done:
            self.done.add(("operations", row.id))
            self.keep("OperationSpec", computed, manifest)
        return computed

    def project(self, row: Row | None) -> str | None:
        """The project's name, once its manifest is kept (no digest is recorded for it)."""
        if row is None:
            return None
        manifest = self.manifest("projects", row, ("SoftwareProject",))
        if manifest is None:
            return None
        if ("projects", row.id) not in self.done:
            self.done.add(("projects", row.id))
            self.keep(
                "SoftwareProject", self.checked("projects", row, "", manifest) or "", manifest
            )
        return str(manifest["metadata"].get("name", ""))


def _with_project(manifest: Json, project: str) -> Json:
    """The implementation naming its project in a label: no digest points at a project
    (FORMAT.md §3), and metadata is never hashed, so its digest is unchanged."""
    metadata = dict(manifest["metadata"])
    labels = dict(metadata.get("labels") or {})
    labels.setdefault(PROJECT_LABEL, project)
    metadata["labels"] = dict(sorted(labels.items()))
    return {**manifest, "metadata": metadata}


def link(export: Export, chosen: Iterable[Source]) -> tuple[Linked, list[Problem]]:
    """The chosen sources' runs and what they name, checked; problems if any did not check."""
    sources = {source.id: source for source in chosen}
    linker = _Linker(export)
    statuses: dict[str, Counter[str]] = defaultdict(Counter)
    run_ids: dict[str, tuple[str, str]] = {}  # run row id → (digest, source slug)
    for row in export.rows("benchmark_runs"):
        source = sources.get(str(row.row.get("sourceId")))
        if source is None:
            continue
        found = linker.run(source, row)
        if found is not None:
            run_ids[row.id] = (found[0], source.slug)
            statuses[source.slug][found[1]] += 1
    all_runs = {row.id: row.row.get("runDigest") for row in export.rows("benchmark_runs")}
    records = []
    for row in export.rows("record_events"):
        event = row.row
        held = run_ids.get(str(event.get("runId")))
        if held is None:
            continue
        previous = all_runs.get(str(event.get("previousRunId")))
        records.append(
            (
                held[1],
                RecordEvent(
                    str(event.get("comparisonKey", "")),
                    str(event.get("at", "")),
                    str(event.get("cause", "")),
                    str(event.get("policyVersion", "")),
                    held[0],
                    previous if isinstance(previous, str) else None,
                ),
            )
        )
    records.sort(key=lambda item: (item[1].comparison, item[1].at, item[1].run))
    skipped = tuple(
        (name, len(rows))
        for name, rows in sorted(export.tables.items())
        if name in SERVING_TABLES or name.startswith(SERVING_PREFIX)
    )
    unread = tuple(
        (name, len(rows)) for name, rows in sorted(export.tables.items()) if name in NOT_IMPORTED
    )
    documents = tuple(sorted(linker.documents.values(), key=lambda d: (d.kind, d.digest, d.name)))
    linked = Linked(
        tuple(sorted(sources.values(), key=lambda s: s.slug)),
        documents,
        tuple(records),
        dict(statuses),
        skipped,
        unread,
    )
    return linked, linker.problems
