"""Index resources by digest and kind, resolve every reference, and record who uses what."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from sitegen.content.loaded import LoadedResource
from sitegen.model.digest import canonical_json
from sitegen.model.problems import Problem, Severity
from sitegen.model.resources import KINDS, reference_values

# A kernelindex.dev export carries only {run, protocol, environment}: a run whose workload or
# implementation is absent is still built (a warning, counted in the summary), unless --strict
# (FORMAT.md §4).
OPTIONAL_TARGETS = frozenset(
    {"WorkloadCase", "WorkloadSuite", "ImplementationRevision", "OperationSpec"}
)


@dataclass(frozen=True)
class Catalog:
    """Every resource once, by digest; the files that repeat a digest; reverse references."""

    by_digest: dict[str, LoadedResource]  # in digest order
    also_in: dict[str, tuple[LoadedResource, ...]]  # digest → the other copies, sorted
    used_by: dict[str, tuple[str, ...]]  # digest → digests of the resources that reference it
    _by_kind: dict[str, tuple[LoadedResource, ...]] = field(repr=False)

    def get(self, digest_value: str, kind: str | None = None) -> LoadedResource | None:
        entry = self.by_digest.get(digest_value)
        if entry is None or (kind is not None and entry.kind != kind):
            return None
        return entry

    def of_kind(self, kind: str) -> tuple[LoadedResource, ...]:
        """Resources of one kind, sorted by name then digest."""
        return self._by_kind.get(kind, ())

    def users(self, digest_value: str, kind: str | None = None) -> list[LoadedResource]:
        found = (self.by_digest[d] for d in self.used_by.get(digest_value, ()))
        return [entry for entry in found if kind is None or entry.kind == kind]

    def __len__(self) -> int:
        return len(self.by_digest)


# Each kind's references: (json path, the kinds it may point at), in `references`' order.
_REFERENCES = {
    kind: tuple((".".join(location), targets) for location, targets in model.references.items())
    for kind, model in KINDS.items()
}


def references_of(entry: LoadedResource) -> list[tuple[str, tuple[str, ...], str]]:
    """(json path, the kinds it may point at, digest) for each digest field the resource
    holds."""
    summary = entry.held_summary  # a run summarised by its load worker: not parsed again
    if summary is not None:
        values = summary.references
    else:
        values = reference_values(entry.kind, entry.spec)
    return [
        (location, targets, value)
        for (location, targets), value in zip(_REFERENCES[entry.kind], values, strict=True)
    ]


def resolve(resources: list[LoadedResource], strict: bool = False) -> tuple[Catalog, list[Problem]]:
    """Index `resources`, check each reference, and report what does not resolve."""
    problems: list[Problem] = []
    copies: dict[str, list[LoadedResource]] = defaultdict(list)
    for entry in resources:
        copies[entry.digest].append(entry)

    by_digest: dict[str, LoadedResource] = {}
    also_in: dict[str, tuple[LoadedResource, ...]] = {}
    for digest_value, entries in copies.items():
        # Deterministic whatever the file order: the first by (path, place) is the one we keep.
        ordered = sorted(entries, key=lambda e: (e.path, e.where))
        keeper = ordered[0]
        by_digest[digest_value] = keeper
        if len(ordered) > 1:
            also_in[digest_value] = tuple(ordered[1:])
            problems.extend(_metadata_conflicts(keeper, ordered[1:]))

    used_by: dict[str, set[str]] = defaultdict(set)
    dangling: list[tuple[LoadedResource, str, tuple[str, ...], str]] = []
    for entry in by_digest.values():
        resolved: dict[str, LoadedResource] = {}
        for location, targets, value in references_of(entry):
            found = by_digest.get(value)
            if found is None:
                dangling.append((entry, location, targets, value))
            elif found.kind not in targets:
                expected = " or ".join(f"{_article(target)} {target}" for target in targets)
                problems.append(
                    Problem(
                        entry.path,
                        entry.at(location),
                        f"expected {expected}, but {value} is "
                        f"{_article(found.kind)} {found.kind} "
                        f"({found.name!r} in {found.path})",
                    )
                )
            else:
                used_by[value].add(entry.digest)
                resolved[found.kind] = found
        if entry.kind == "BenchmarkRun":
            problems += _operations_disagree(entry, resolved, by_digest)

    hints = _DanglingHints(by_digest, used_by)
    for entry, location, targets, value in dangling:
        # Copies of a repeated resource reference the same digests: report the keeper only.
        optional = OPTIONAL_TARGETS.issuperset(targets) and not strict
        severity = Severity.WARNING if optional else Severity.ERROR
        hint = hints.hint(value, targets)
        named = " or ".join(targets)
        problems.append(
            Problem(
                entry.path, entry.at(location), f"no {named} with digest {value}", hint, severity
            )
        )

    by_kind: dict[str, list[LoadedResource]] = defaultdict(list)
    for entry in by_digest.values():
        by_kind[entry.kind].append(entry)
    catalog = Catalog(
        by_digest=dict(sorted(by_digest.items())),
        also_in=also_in,
        used_by={d: tuple(sorted(users)) for d, users in sorted(used_by.items())},
        _by_kind={k: tuple(sorted(v, key=_name_order)) for k, v in by_kind.items()},
    )
    return catalog, problems


def _operations_disagree(
    run: LoadedResource, resolved: dict[str, LoadedResource], by_digest: dict[str, LoadedResource]
) -> list[Problem]:
    """A run measures one operation: a workload and an implementation of different ones is a
    warning (kernelindex.dev's catalog has such runs: one implementation measured on the cases
    of several operations)."""
    workload = resolved.get("WorkloadCase") or resolved.get("WorkloadSuite")
    implementation = resolved.get("ImplementationRevision")
    if workload is None or implementation is None:
        return []
    of_workload = workload.spec["operationSpecDigest"]
    of_implementation = implementation.spec["operation"]["specDigest"]
    if of_workload == of_implementation:
        return []

    def named(value: str) -> str:
        found = by_digest.get(value)
        return f"{found.name!r}" if found is not None else value

    return [
        Problem(
            run.path,
            run.at("spec.workloadDigest"),
            f"the workload {workload.name!r} is {_WORKLOAD_OF[workload.kind]} OperationSpec "
            f"{named(of_workload)}, "
            f"but the implementation {implementation.name!r} implements "
            f"{named(of_implementation)}",
            "a run measures one operation: its workload and implementation should share it",
            Severity.WARNING,
        )
    ]


_WORKLOAD_OF = {"WorkloadCase": "a case of", "WorkloadSuite": "a suite of cases of"}


def _name_order(entry: LoadedResource) -> tuple[str, str]:
    return (entry.name, entry.digest)


def _metadata_conflicts(keeper: LoadedResource, others: list[LoadedResource]) -> list[Problem]:
    problems = []
    kept = keeper.metadata
    for other in others:
        if other.metadata != kept:
            problems.append(
                Problem(
                    other.path,
                    other.at("metadata"),
                    f"same {other.kind} ({other.digest}) as {keeper.path} with different metadata; "
                    f"the site shows {keeper.path}'s",
                    "keep one file per resource",
                    Severity.WARNING,
                )
            )
    return problems


class _DanglingHints:
    """Why a digest may not resolve, computed from one index per target kind, made on first use.

    Each kind's candidates are hashed once, not once per dangling reference: every run of an
    export carries dangling optional references, and a scan per reference would be quadratic.
    """

    def __init__(self, by_digest: dict[str, LoadedResource], used_by: dict[str, set[str]]):
        self._by_digest = by_digest
        self._used_by = used_by
        self._indexes: dict[tuple[str, ...], _KindIndex] = {}

    def hint(self, value: str, targets: tuple[str, ...]) -> str:
        """Where a likely cause can be computed, say it."""
        target = " or ".join(targets)
        index = self._indexes.get(targets)
        if index is None:
            index = self._indexes[targets] = _KindIndex.of(targets, self._by_digest, self._used_by)
        hashed = index.hashed.get(value)
        if hashed is not None:
            # A digest computed over the wrong bytes is a common authoring mistake.
            entry, whole = hashed
            if whole:
                return (
                    f"that is the hash of {entry.path} including metadata; identity hashes only "
                    f"apiVersion, kind and spec: {entry.digest}"
                )
            return (
                f"that is the hash of {entry.path}'s spec alone; identity hashes apiVersion, "
                f"kind and spec: {entry.digest}"
            )
        orphans = index.orphans
        if len(orphans) == 1:
            orphan = orphans[0]
            return (
                f"{target} {orphan.name!r} ({orphan.path}) is used by nothing and now has digest "
                f"{orphan.digest}: was it edited after the run was recorded?"
            )
        if orphans:
            return (
                f"{len(orphans)} {target} resources are used by nothing "
                f"(e.g. {orphans[0].path}): was one edited after the run was recorded?"
            )
        if not index.holds_any:
            return f"the content holds no {target} at all"
        return ""


@dataclass(frozen=True)
class _KindIndex:
    """One kind's resources as a dangling hint needs them."""

    # sha256 of a whole document or of its spec alone → (the first such resource, whole?)
    hashed: dict[str, tuple[LoadedResource, bool]]
    orphans: list[LoadedResource]  # used by nothing, in catalog order
    holds_any: bool

    @classmethod
    def of(
        cls,
        kinds: tuple[str, ...],
        by_digest: dict[str, LoadedResource],
        used_by: dict[str, set[str]],
    ) -> _KindIndex:
        candidates = [e for e in by_digest.values() if e.kind in kinds]
        hashed: dict[str, tuple[LoadedResource, bool]] = {}
        for entry in candidates:
            whole = entry.document
            hashed.setdefault(_sha256(whole), (entry, True))
            hashed.setdefault(_sha256(whole["spec"]), (entry, False))
        orphans = [e for e in candidates if e.digest not in used_by]
        return cls(hashed, orphans, bool(candidates))


def _article(word: str) -> str:
    return "an" if word[0] in "AEIOU" else "a"


def _sha256(value: Any) -> str:
    return "sha256:" + hashlib.sha256(canonical_json(value)).hexdigest()
