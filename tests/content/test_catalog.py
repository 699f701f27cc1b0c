"""Resolution: who points at what, copies of one identity, and the kinds references must have."""

from __future__ import annotations

import copy
import random
from typing import Any

from sitegen.content.catalog import resolve
from sitegen.content.documents import validate_resource
from sitegen.content.loaded import LoadedResource
from sitegen.model.problems import Severity


def loaded(resource: dict[str, Any], path: str, where: str = "") -> LoadedResource:
    problems: list[Any] = []
    entry = validate_resource(resource, path, where, problems)
    assert entry is not None, problems
    return entry


def seed_entries(seed_row: dict[str, Any]) -> list[LoadedResource]:
    return [loaded(v["resource"], f"content/{k}.json") for k, v in seed_row.items()]


def test_seed_row_resolves_and_records_users(seed_row: dict[str, Any]) -> None:
    catalog, problems = resolve(seed_entries(seed_row), strict=True)
    assert problems == []
    operation = seed_row["operation"]["digest"]
    assert {e.kind for e in catalog.users(operation)} == {"WorkloadCase", "ImplementationRevision"}
    assert [e.name for e in catalog.users(seed_row["protocol"]["digest"], "BenchmarkRun")] == [
        seed_row["run"]["resource"]["metadata"]["name"]
    ]
    assert catalog.get(operation, "WorkloadCase") is None
    assert [e.kind for e in catalog.of_kind("OperationSpec")] == ["OperationSpec"]


def test_copies_resolve_to_the_same_keeper_whatever_the_order(seed_row: dict[str, Any]) -> None:
    entries = seed_entries(seed_row)
    retitled = copy.deepcopy(seed_row["protocol"]["resource"])
    retitled["metadata"]["title"] = "Another title"
    entries.append(loaded(retitled, "content/a-copy.json"))
    keepers = set()
    for seed in range(5):
        random.Random(seed).shuffle(entries)
        catalog, problems = resolve(entries)
        keepers.add(catalog.get(seed_row["protocol"]["digest"]).path)  # type: ignore[union-attr]
        assert [p.severity for p in problems] == [Severity.WARNING]
        assert "content/a-copy.json" in problems[0].message
    assert keepers == {"content/a-copy.json"}


def test_identical_copies_are_silent(
    seed_row: dict[str, Any], example_bundle: dict[str, Any]
) -> None:
    # Every bundle of an export repeats its protocol and environment: that is no problem.
    entries = seed_entries(seed_row)
    entries.append(loaded(example_bundle["protocol"], "content/x.json", "protocol"))
    _, problems = resolve(entries)
    assert problems == []


def test_export_without_workloads_warns_unless_strict(example_bundle: dict[str, Any]) -> None:
    """An export's run names a workload and an implementation the tree does not hold: built,
    with a warning each (counted in the summary); under --strict, errors."""
    entries = [
        loaded(example_bundle[r], "content/x.json", r) for r in ("run", "protocol", "environment")
    ]
    problems = resolve(entries)[1]
    assert [(p.where, p.severity) for p in sorted(problems)] == [
        ("run.spec.implementationDigest", Severity.WARNING),
        ("run.spec.workloadDigest", Severity.WARNING),
    ]
    assert sorted(problems)[1].line() == (
        "content/x.json: run.spec.workloadDigest: warning: no WorkloadCase or WorkloadSuite "
        f"with digest {example_bundle['run']['spec']['workloadDigest']}; hint: the content "
        "holds no WorkloadCase or WorkloadSuite at all"
    )
    strict_problems = resolve(entries, strict=True)[1]
    assert [(p.where, p.severity) for p in sorted(strict_problems)] == [
        ("run.spec.implementationDigest", Severity.ERROR),
        ("run.spec.workloadDigest", Severity.ERROR),
    ]
