"""Resolution: who points at what, copies of one identity, and the kinds references must have."""

from __future__ import annotations

import copy
import random
from typing import Any

from sitegen.content.catalog import HeldResolution, resolve
from sitegen.content.documents import validate_resource
from sitegen.content.load import load_content
from sitegen.content.loaded import LoadedResource
from sitegen.model.problems import Severity
from tests.conftest import FIXTURES

SITE_CONTENT = FIXTURES / "site" / "content"


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


def test_dangling_hints_hash_each_candidate_once(
    example_bundle: dict[str, Any], seed_row: dict[str, Any], monkeypatch: Any
) -> None:
    """Runs whose workload digests dangle beside unused WorkloadCases: each WorkloadCase is
    hashed for the hints once, not once per dangling reference (check stays linear)."""
    from sitegen.content import catalog as catalog_module

    hashed: list[object] = []
    real_sha256 = catalog_module._sha256

    def counted(value: Any) -> str:
        hashed.append(value)
        return real_sha256(value)

    monkeypatch.setattr(catalog_module, "_sha256", counted)
    entries = [loaded(example_bundle[r], "content/x.json", r) for r in ("protocol", "environment")]
    for index in range(30):
        run = copy.deepcopy(example_bundle["run"])
        run["metadata"]["name"] = f"run-{index}"
        run["spec"]["timing"]["latencyNs"]["median"] = 1000 + index
        entries.append(loaded(run, f"content/runs/{index}.json", "run"))
    for index in range(20):
        workload = copy.deepcopy(seed_row["workload"]["resource"])
        workload["spec"]["axes"]["rows"] = 1 + index
        entries.append(loaded(workload, f"content/workloads/{index:02d}.json"))
    problems = resolve(entries)[1]
    workload_hints = {p.hint for p in problems if p.where == "run.spec.workloadDigest"}
    assert workload_hints == {
        "20 WorkloadCase or WorkloadSuite resources are used by nothing "
        "(e.g. content/workloads/00.json): "
        "was one edited after the run was recorded?"
    }
    assert len(hashed) == 2 * 20  # each WorkloadCase whole and its spec alone


def test_a_held_resolution_gives_what_resolving_anew_gives() -> None:
    """`sitegen serve` resolves only what changed (HeldResolution): after each of a random
    walk of edits (copies added and dropped, metadata changed, references broken, pointed at
    the wrong kind or mended, referenced resources removed and put back), its catalog, in its
    orders, and its problems are those of resolving the same resources from nothing."""
    base = load_content(FIXTURES / "site" / "content").resources
    runs = [e for e in base if e.kind == "BenchmarkRun"]
    environment = next(e for e in base if e.kind == "ExecutionEnvironment")
    shared = [e for e in base if e.kind in ("OperationSpec", "WorkloadCase", "BenchmarkProtocol")]

    def variant(entry: LoadedResource, number: int) -> LoadedResource:
        document = copy.deepcopy(entry.document)
        change = number % 4
        if change == 0:  # the same resource in another file, titled otherwise: a copy
            document["metadata"]["title"] = f"copy {number}"
            return loaded(document, f"content/copies/{number}.json")
        if entry.kind == "BenchmarkRun" and change == 1:  # a dangling optional reference
            document["spec"]["workloadDigest"] = "sha256:" + f"{number:064x}"
        elif entry.kind == "BenchmarkRun" and change == 2:  # an environment as its protocol
            document["spec"]["protocolDigest"] = environment.digest
        return loaded(document, entry.path, entry.where)  # change 3: the same, a new object

    rng = random.Random(38)
    pool = [variant(e, n) for n, e in enumerate(rng.choices(runs + shared, k=60))]
    held = HeldResolution()
    current = list(base)
    troubled_steps = 0
    for step in range(40):
        for _ in range(rng.randint(1, 4)):
            if rng.random() < 0.5 and len(current) > len(base) // 2:
                current.remove(rng.choice(current))
            else:
                current.append(rng.choice([*pool, *base]))
        current = list({(e.path, e.where): e for e in current}.values())  # one a place
        if step % 3 == 0:  # else in place, as the loader lists them: found as stretches
            rng.shuffle(current)
        strict = step % 13 == 12
        # Once a resource listed twice (never by the loader): started over, as resolved anew.
        listed = [*current, current[0]] if step == 20 else current
        catalog, problems = resolve(list(listed), strict, held)  # its own: held, not changed
        fresh, fresh_problems = resolve(listed, strict)
        assert problems == fresh_problems, step
        # Only the outcomes with a problem are read for them: those, every time.
        troubled = {d for d, o in held.resolved.items() if o.problems or o.dangling}
        assert held.troubled == troubled, step
        troubled_steps += bool(troubled)
        assert catalog == fresh, step
        assert list(catalog.resources) == list(fresh.resources), step
        assert [e.digest for e in catalog.resources] == sorted(fresh.by_digest)
        assert list(catalog.used_by) == list(fresh.used_by)
        for kind in {e.kind for e in current}:
            assert catalog.of_kind(kind) == fresh.of_kind(kind)
    assert troubled_steps > 20  # the walk broke references and mended them


def test_all_but_a_kind_is_every_other_resource_in_digest_order() -> None:
    from sitegen.pipeline import check_content

    catalog = check_content(SITE_CONTENT).catalog
    others = catalog.all_but("BenchmarkRun")
    expected = [e for e in catalog.resources if e.kind != "BenchmarkRun"]
    assert [e.digest for e in others] == [e.digest for e in expected] and others
    assert len(catalog.all_but("nothing")) == len(catalog)
