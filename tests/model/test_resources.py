"""The models: strictness, normalisation that identity depends on, and every kind's rules."""

from __future__ import annotations

import copy
import glob
import json
from typing import Any

import pytest
from pydantic import ValidationError

from sitegen.model.digest import digest
from sitegen.model.resources import KINDS, json_schemas
from tests.conftest import REFERENCE, read_json


def implementation(seed_row: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(seed_row["implementation"]["resource"])


def test_every_reference_operation_validates() -> None:
    files = sorted(glob.glob(str(REFERENCE / "liger-operations" / "*.json")))
    assert len(files) == 35
    digests = set()
    for file in files:
        resource = read_json(__import__("pathlib").Path(file))
        model = KINDS["OperationSpec"].model_validate(resource)
        digests.add(digest("OperationSpec", model.spec_json()))
    assert len(digests) == 31  # FORMAT.md §5: 35 files, 31 identities


def test_set_like_lists_are_sorted_and_deduplicated(seed_row: dict[str, Any]) -> None:
    a = implementation(seed_row)
    a["spec"]["support"] = {
        "hardwareArchitectures": ["sm_90", "sm_80", "sm_90"],
        "dtypes": ["fp32"],
    }
    b = implementation(seed_row)
    b["spec"]["support"] = {"hardwareArchitectures": ["sm_80", "sm_90"], "dtypes": ["fp32"]}
    model_a = KINDS["ImplementationRevision"].model_validate(a)
    model_b = KINDS["ImplementationRevision"].model_validate(b)
    assert model_a.spec_json()["support"]["hardwareArchitectures"] == ["sm_80", "sm_90"]
    assert digest("ImplementationRevision", model_a.spec_json()) == digest(
        "ImplementationRevision", model_b.spec_json()
    )


def test_ordered_lists_keep_their_order(seed_row: dict[str, Any]) -> None:
    run = copy.deepcopy(seed_row["run"]["resource"])
    run["spec"]["measurements"].reverse()
    model = KINDS["BenchmarkRun"].model_validate(run)
    assert [m["statistic"] for m in model.spec_json()["measurements"]] == ["p80", "p20"]


@pytest.mark.parametrize(
    ("written", "nanoseconds"),
    [
        ("0.008 ms", 8000),
        ("577632", None),
        ("1.5 us", 1500),
        ("2 s", 2_000_000_000),
        (577632, 577632),
    ],
)
def test_durations_normalise_to_whole_nanoseconds(
    seed_row: dict[str, Any], written: Any, nanoseconds: int | None
) -> None:
    run = copy.deepcopy(seed_row["run"]["resource"])
    run["spec"]["timing"]["latencyNs"]["median"] = written
    if nanoseconds is None:
        with pytest.raises(ValidationError):
            KINDS["BenchmarkRun"].model_validate(run)
        return
    model = KINDS["BenchmarkRun"].model_validate(run)
    assert model.spec_json()["timing"]["latencyNs"]["median"] == nanoseconds


def test_authored_duration_hashes_like_its_normal_form(seed_row: dict[str, Any]) -> None:
    run = copy.deepcopy(seed_row["run"]["resource"])
    run["spec"]["timing"]["latencyNs"]["median"] = "577.632 us"
    model = KINDS["BenchmarkRun"].model_validate(run)
    assert digest("BenchmarkRun", model.spec_json()) == seed_row["run"]["digest"]


@pytest.mark.parametrize(
    ("where", "value"),
    [
        (("spec", "status"), "fast"),
        (("spec", "timing", "latencyNs", "median"), True),
        (("spec", "timing", "latencyNs", "median"), 1.5),
        (("spec", "measurements", 0, "value"), "575347"),
        (("spec", "observedAt"), "2025-07-17T18:18:16+00:00"),
        (("spec", "protocolDigest"), "sha256:" + "A" * 64),
        (("metadata", "name"), "-leading-dash"),
        (("metadata", "labels"), {"liger_version": 6}),
        (("spec", "sourceNative", "source"), "Liger"),
    ],
)
def test_no_coercion_and_no_bad_values(
    seed_row: dict[str, Any], where: tuple[Any, ...], value: Any
) -> None:
    run = copy.deepcopy(seed_row["run"]["resource"])
    parent = run
    for step in where[:-1]:
        parent = parent[step]
    parent[where[-1]] = value
    with pytest.raises(ValidationError):
        KINDS["BenchmarkRun"].model_validate(run)


def test_latency_needs_a_median_or_a_mean(seed_row: dict[str, Any]) -> None:
    run = copy.deepcopy(seed_row["run"]["resource"])
    run["spec"]["timing"]["latencyNs"] = {"mean": 10}
    KINDS["BenchmarkRun"].model_validate(run)
    run["spec"]["timing"]["latencyNs"] = {"p05": 10}
    with pytest.raises(ValidationError, match="median or a mean"):
        KINDS["BenchmarkRun"].model_validate(run)


def test_every_kind_publishes_a_json_schema() -> None:
    for kind, model in KINDS.items():
        schema = model.model_json_schema(by_alias=True)
        assert "apiVersion" in schema["properties"], kind
        assert schema.get("additionalProperties") is False, kind


def test_published_schemas_speak_json_schema_only() -> None:
    """Every constraint in /schemas/ is a JSON Schema keyword: a constraint pydantic cannot
    express there (on a union, say) leaks as its own name (`"ge": 0`), which readers ignore."""
    leaked = set()

    def walk(value: object) -> None:
        if isinstance(value, dict):
            leaked.update(value.keys() & {"ge", "gt", "le", "lt", "allow_inf_nan", "strict"})
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    documents = json_schemas()
    assert set(documents) >= {"BenchmarkRun", "WorkloadCase"}
    walk(documents)
    assert not leaked
    run = json.dumps(documents["BenchmarkRun"])
    assert '"minimum": 0' in run  # error bounds: never negative
