"""Index resources by digest and kind, resolve every reference, and record who uses what."""

from __future__ import annotations

import bisect
import hashlib
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from sitegen.content.loaded import LoadedResource
from sitegen.content.stretches import changes
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

    # In no set order (a held resolution's puts a changed resource last): `resources` is the
    # order to go through them in.
    by_digest: dict[str, LoadedResource]
    # by_digest's resources, in digest order: one tuple the analysis, the manifest and the
    # export each go through (a tuple made of ~100k resources is a pass over their reference
    # counts)
    resources: tuple[LoadedResource, ...]
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

    def all_but(self, kind: str) -> list[LoadedResource]:
        """Every resource not of this kind, in digest order (as `resources` lists them): found
        by kind, so that the ~100k runs are not each looked at for the few others."""
        found = [e for other, same in self._by_kind.items() if other != kind for e in same]
        return sorted(found, key=_digest_of)

    def users(self, digest_value: str, kind: str | None = None) -> list[LoadedResource]:
        found = (self.by_digest[d] for d in self.used_by.get(digest_value, ()))
        return [entry for entry in found if kind is None or entry.kind == kind]

    def __len__(self) -> int:
        return len(self.by_digest)


def _digest_of(entry: LoadedResource) -> str:
    return entry.digest


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


def resolve(
    resources: list[LoadedResource], strict: bool = False, held: HeldResolution | None = None
) -> tuple[Catalog, list[Problem]]:
    """Index `resources`, check each reference, and report what does not resolve (problems
    sorted). With `held` (`sitegen serve`), only what changed since the last call with it is
    resolved again: the resources that are not the very objects of the last call, and those
    whose references point at a digest whose resource changed; `resources` is then held, to
    compare the next call's with: not to be changed after (the loader makes a list a load)."""
    return (held if held is not None else HeldResolution(tracked=False)).resolve(resources, strict)


class _Resolved(NamedTuple):
    """What one resource's references resolved to."""

    problems: tuple[Problem, ...]  # a reference to the wrong kind; a run's operations disagree
    dangling: tuple[tuple[str, tuple[str, ...], str], ...]  # (json path, target kinds, digest)
    used: tuple[str, ...]  # the digests it references that resolved
    looked_up: tuple[str, ...]  # every digest its outcome depends on


def _troubled(outcome: _Resolved) -> bool:
    return bool(outcome.problems or outcome.dangling)


def _resolved(entry: LoadedResource, by_digest: dict[str, LoadedResource]) -> _Resolved:
    problems: list[Problem] = []
    dangling = []
    used = []
    looked_up = []
    resolved: dict[str, LoadedResource] = {}
    for location, targets, value in references_of(entry):
        looked_up.append(value)
        found = by_digest.get(value)
        if found is None:
            dangling.append((location, targets, value))
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
            used.append(value)
            resolved[found.kind] = found
    if entry.kind == "BenchmarkRun":
        problems += _operations_disagree(entry, resolved, by_digest, looked_up)
    return _Resolved(tuple(problems), tuple(dangling), tuple(used), tuple(looked_up))


# More kept resources changed than this: their order is sorted anew rather than patched.
RESORT_AFTER = 1000


@dataclass
class HeldResolution:
    """What `resolve` made of each resource, held between the builds of `sitegen serve` so
    that a rebuild after a few changed files resolves only what they change. Keyed by object:
    content/load.py hands back the very resources of each unchanged file. A plain `resolve`
    is this, filled from nothing."""

    tracked: bool = True  # whether `dependents` is kept: a plain `resolve` has no next call
    strict: bool | None = None
    # Every resource of the last call, by id (held here, so no id is reused while it is kept).
    entries: dict[int, LoadedResource] = field(default_factory=dict)
    listed: list[LoadedResource] = field(default_factory=list)  # as the last call's caller did
    copies: dict[str, list[LoadedResource]] = field(default_factory=dict)  # by (path, place)
    kept: dict[str, LoadedResource] = field(default_factory=dict)  # each digest's first copy
    conflicts: dict[str, list[Problem]] = field(default_factory=dict)  # copies' metadata
    resolved: dict[str, _Resolved] = field(default_factory=dict)  # each kept resource's
    # The digests in `resolved` whose outcome has a problem or a dangling reference: those
    # alone are read for the problems (~0.05 s less at 100k resources than every outcome).
    troubled: set[str] = field(default_factory=set)
    # digest → the kept resources whose outcome depends on it, resolved or not
    dependents: defaultdict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    used_by: defaultdict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    sorted_users: dict[str, tuple[str, ...]] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)  # the kept digests, sorted
    in_order: list[LoadedResource] = field(default_factory=list)  # their resources, alike
    repeated: set[str] = field(default_factory=set)  # the digests of more than one copy
    by_kind: dict[str, list[LoadedResource]] = field(default_factory=dict)  # by _name_order

    def resolve(
        self, resources: list[LoadedResource], strict: bool
    ) -> tuple[Catalog, list[Problem]]:
        changes = None
        if self.tracked and strict == self.strict and self.entries:
            changes = self._changes(resources)
        if changes is None:
            # A resource listed twice (not something the loader does) starts over as well.
            self.__dict__.update(vars(HeldResolution(self.tracked, strict)))
            self.entries = dict(zip(map(id, resources), resources, strict=True))  # in C
            self._fill(resources)
            if len(self.entries) != len(resources):
                self.entries = {}  # the next call starts over again
        else:
            # Put in an order of their own: what is made of them does not depend on it.
            added, removed = sorted(changes[0], key=_place), sorted(changes[1], key=_place)
            changed = self._copies(added, removed)
            self._order(changed)
            self._references(changed)
        self.listed = resources
        catalog = self._catalog()
        return catalog, self._problems(catalog, strict)

    def _changes(
        self, resources: list[LoadedResource]
    ) -> tuple[list[LoadedResource], list[LoadedResource]] | None:
        """The resources added and removed since the last call, `entries` updated: found as
        stretches of the very objects the last call listed (the loader lists each file's in
        the same place), in C (~0.07 s less at 100k than told apart as sets of ids). None,
        `entries` no longer to be trusted, where a resource would be listed twice."""
        found = changes(self.listed, resources)
        if found is None:
            return None  # one of the last call's listed twice
        added, removed = found
        entries = self.entries
        for entry in removed:
            if entries.pop(id(entry), None) is not entry:
                return None
        for entry in added:
            if id(entry) in entries:  # kept in a stretch, or added twice
                return None
            entries[id(entry)] = entry
        return added, removed

    def _fill(self, resources: list[LoadedResource]) -> None:
        """Everything from nothing: what the updates below keep, made in bulk."""
        copies: dict[str, list[LoadedResource]] = defaultdict(list)
        for entry in resources:
            copies[entry.digest].append(entry)
        for digest, entries in copies.items():
            if len(entries) > 1:
                entries.sort(key=_place)
                self.conflicts[digest] = _metadata_conflicts(entries[0], entries[1:])
                self.repeated.add(digest)
        self.copies = dict(copies)
        self._order(set(self.copies))
        kept = self.kept
        resolved = self.resolved = {digest: _resolved(e, kept) for digest, e in kept.items()}
        self.troubled = {digest for digest, outcome in resolved.items() if _troubled(outcome)}
        used_by = self.used_by
        for digest, outcome in resolved.items():
            for value in outcome.used:
                used_by[value].add(digest)
        if self.tracked:
            dependents = self.dependents
            for digest, outcome in resolved.items():
                for value in outcome.looked_up:
                    dependents[value].add(digest)

    def _copies(self, added: list[LoadedResource], removed: list[LoadedResource]) -> set[str]:
        """Update each touched digest's copies and kept resource; the digests whose kept
        resource changed (or is gone)."""
        touched = {entry.digest for entry in added} | {entry.digest for entry in removed}
        for entry in removed:
            same = self.copies[entry.digest]
            del same[next(i for i, other in enumerate(same) if other is entry)]
        for entry in added:
            self.copies.setdefault(entry.digest, []).append(entry)
        changed = set()
        for digest in touched:
            entries = self.copies[digest]
            self.conflicts.pop(digest, None)
            self.repeated.discard(digest)
            if entries:
                # Deterministic whatever the file order: the first by (path, place) is kept.
                entries.sort(key=_place)
                if len(entries) > 1:
                    self.conflicts[digest] = _metadata_conflicts(entries[0], entries[1:])
                    self.repeated.add(digest)
            else:
                del self.copies[digest]
            keeper = entries[0] if entries else None
            if keeper is not self.kept.get(digest):
                changed.add(digest)
        return changed

    def _order(self, changed: set[str]) -> None:
        """Keep `order` and `by_kind` sorted, with the new kept resources in place."""
        if len(changed) > RESORT_AFTER or not self.kept:
            self.order = sorted(self.copies)
            # In digest order, where a patch puts a changed one last (`Catalog.by_digest`).
            self.kept = {digest: self.copies[digest][0] for digest in self.order}
            self.in_order = list(self.kept.values())
            by_kind: dict[str, list[LoadedResource]] = defaultdict(list)
            for entry in self.kept.values():
                by_kind[entry.kind].append(entry)
            self.by_kind = {kind: sorted(v, key=_name_order) for kind, v in by_kind.items()}
            return
        for digest in sorted(changed):
            before = self.kept.pop(digest, None)
            if before is not None:
                same_kind = self.by_kind[before.kind]
                del same_kind[bisect.bisect_left(same_kind, _name_order(before), key=_name_order)]
                at = bisect.bisect_left(self.order, digest)
                del self.order[at], self.in_order[at]
            entries = self.copies.get(digest)
            if entries:
                keeper = self.kept[digest] = entries[0]
                at = bisect.bisect_left(self.order, digest)
                self.order.insert(at, digest)
                self.in_order.insert(at, keeper)
                bisect.insort(self.by_kind.setdefault(keeper.kind, []), keeper, key=_name_order)

    def _references(self, changed: set[str]) -> None:
        """Resolve again the changed resources and those whose outcome depends on them."""
        again = set(changed)
        for digest in changed:
            again.update(self.dependents.get(digest, ()))
        for digest in again:
            before = self.resolved.pop(digest, None)
            self.troubled.discard(digest)
            if before is not None:
                for value in before.used:
                    _forget(self.used_by, value, digest)
                    self.sorted_users.pop(value, None)
                for value in before.looked_up:
                    _forget(self.dependents, value, digest)
            entry = self.kept.get(digest)
            if entry is None:
                continue
            outcome = self.resolved[digest] = _resolved(entry, self.kept)
            if _troubled(outcome):
                self.troubled.add(digest)
            for value in outcome.used:
                self.used_by[value].add(digest)
                self.sorted_users.pop(value, None)
            for value in outcome.looked_up:
                self.dependents[value].add(digest)

    def _catalog(self) -> Catalog:
        for value, users in self.used_by.items():
            if value not in self.sorted_users:
                self.sorted_users[value] = tuple(sorted(users))
        resources = tuple(self.in_order)
        return Catalog(
            # Copied, not made: a dict's copy reads no key (~0.05 s less at 100k resources).
            by_digest=self.kept.copy(),
            resources=resources,
            also_in={digest: tuple(self.copies[digest][1:]) for digest in sorted(self.repeated)},
            used_by={value: self.sorted_users[value] for value in sorted(self.used_by)},
            _by_kind={kind: tuple(entries) for kind, entries in self.by_kind.items() if entries},
        )

    def _problems(self, catalog: Catalog, strict: bool) -> list[Problem]:
        problems = [problem for found in self.conflicts.values() for problem in found]
        hints = _DanglingHints(catalog.by_digest, self.used_by)
        for digest in self.troubled:  # in no set order: the problems are sorted
            outcome = self.resolved[digest]
            problems += outcome.problems
            if not outcome.dangling:
                continue
            entry = self.kept[digest]
            for location, targets, value in outcome.dangling:
                # Copies of a repeated resource reference the same digests: the kept one only.
                optional = OPTIONAL_TARGETS.issuperset(targets) and not strict
                severity = Severity.WARNING if optional else Severity.ERROR
                named = " or ".join(targets)
                problems.append(
                    Problem(
                        entry.path,
                        entry.at(location),
                        f"no {named} with digest {value}",
                        hints.hint(value, targets),
                        severity,
                    )
                )
        return sorted(problems)


def _forget(index: dict[str, set[str]], value: str, digest: str) -> None:
    users = index.get(value)
    if users is not None:
        users.discard(digest)
        if not users:
            del index[value]


def _operations_disagree(
    run: LoadedResource,
    resolved: dict[str, LoadedResource],
    by_digest: dict[str, LoadedResource],
    looked_up: list[str],
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
    looked_up += (of_workload, of_implementation)  # their names are in the warning
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


def _place(entry: LoadedResource) -> tuple[str, str]:
    return (entry.path, entry.where)


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
    orphans: list[LoadedResource]  # used by nothing, by file
    holds_any: bool

    @classmethod
    def of(
        cls,
        kinds: tuple[str, ...],
        by_digest: dict[str, LoadedResource],
        used_by: dict[str, set[str]],
    ) -> _KindIndex:
        # By file, whatever order the catalog was made in: the example named is the first.
        candidates = sorted((e for e in by_digest.values() if e.kind in kinds), key=_place)
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
