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
from tests.conftest import SHARED, read_json


def implementation(seed_row: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(seed_row["implementation"]["resource"])


def test_every_reference_operation_validates() -> None:
    files = sorted(glob.glob(str(SHARED / "reference" / "liger-operations" / "*.json")))
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


# --- what kernelindex.dev's schema accepts ------------------------------------------------------


def run_with(seed_row: dict[str, Any], *where: Any, value: Any) -> dict[str, Any]:
    run = copy.deepcopy(seed_row["run"]["resource"])
    parent = run
    for step in where[:-1]:
        parent = parent.setdefault(step, {})
    parent[where[-1]] = value
    return run


@pytest.mark.parametrize(
    ("written", "nanoseconds"),
    [
        ("0.008 ms", 8000),  # 0.008 × 1e6 in doubles is exactly 8000
        ("1.005 us", None),  # 1.005 × 1000 in doubles is 1004.9999999999999: the schema refuses
        ("3\tms", 3_000_000),  # one JavaScript `\s` between number and unit
        ("3  ms", None),
        (3.0, 3),  # a JSON number is a number
        ("١٢ ms", None),
    ],
)
def test_durations_are_read_as_the_schema_reads_them(
    seed_row: dict[str, Any], written: Any, nanoseconds: int | None
) -> None:
    run = run_with(seed_row, "spec", "timing", "latencyNs", "median", value=written)
    if nanoseconds is None:
        with pytest.raises(ValidationError):
            KINDS["BenchmarkRun"].model_validate(run)
    else:
        spec = KINDS["BenchmarkRun"].model_validate(run).spec_json()
        assert spec["timing"]["latencyNs"]["median"] == nanoseconds
        assert type(spec["timing"]["latencyNs"]["median"]) is int


@pytest.mark.parametrize(
    ("instant", "accepted"),
    [
        ("2024-02-29T23:59Z", True),  # seconds are optional
        ("2024-02-29T23:59:59.123456789012Z", True),  # as many fraction digits as written
        ("2023-02-29T00:00:00Z", False),
        ("2024-01-01T24:00:00Z", False),
        ("2024-01-01T00:00:60Z", False),
        ("2024-01-01T00:00:00+00:00", False),
        ("2024-01-01T00:00:00", False),
    ],
)
def test_instants_are_zods_datetimes(
    seed_row: dict[str, Any], instant: str, accepted: bool
) -> None:
    run = run_with(seed_row, "spec", "observedAt", value=instant)
    if accepted:
        KINDS["BenchmarkRun"].model_validate(run)
    else:
        with pytest.raises(ValidationError):
            KINDS["BenchmarkRun"].model_validate(run)


@pytest.mark.parametrize(
    ("url", "accepted"),
    [
        ("https://github.com/linkedin/Liger-Kernel", True),
        ("HTTPS://example.com/x?y=1#z", True),
        ("http://example.com", False),
        ("https:example.com", False),  # no `//`: a page would read it as a relative link
        ("https://exa<mple.com/", False),
        ("https://example.com/a b", False),  # sitegen's own: the parser would encode the space
        ("https://example.com:99999/", False),
    ],
)
def test_urls_are_https_with_a_host(seed_row: dict[str, Any], url: str, accepted: bool) -> None:
    implementation_ = implementation(seed_row)
    implementation_["metadata"]["sourceRefs"] = [{"url": url}]
    if accepted:
        KINDS["ImplementationRevision"].model_validate(implementation_)
    else:
        with pytest.raises(ValidationError):
            KINDS["ImplementationRevision"].model_validate(implementation_)


def test_the_shapes_kernelindex_dev_defines_validate(seed_row: dict[str, Any]) -> None:
    artifact = {"uri": "s3://bucket/log.txt", "digest": "sha256:" + "a" * 64}
    run = copy.deepcopy(seed_row["run"]["resource"])
    run["spec"]["status"] = "runtime_error"
    run["spec"]["correctness"] = {
        "comparator": "allclose",
        "maximumAbsoluteError": 0.001,
        "maximumRelativeError": 0,
        "matchedRatio": 1,
    }
    run["spec"]["timing"]["rawSamples"] = artifact
    run["spec"]["evidence"] = {
        "logs": artifact,
        "rawSamples": artifact,
        "harness": {"repository": "https://github.com/gpu-mode/kernelbot", "commit": "c" * 40},
    }
    spec = KINDS["BenchmarkRun"].model_validate(run).spec_json()
    assert spec["evidence"]["logs"] == artifact
    model = KINDS["BenchmarkRun"].model_validate(run)
    assert model.spec.evidence is not None and model.spec.evidence.logs is not None  # type: ignore[attr-defined]
    assert model.spec.evidence.logs.digest == artifact["digest"]  # type: ignore[attr-defined]

    implementation_ = implementation(seed_row)
    implementation_["spec"]["source"] = {
        "contentDigest": "sha256:" + "b" * 64,
        "fileName": "submission.py",
        "sizeBytes": 4575,
    }
    implementation_["spec"]["buildVariants"] = [
        {"name": "pip", "install": {"kind": "pip"}, "requirements": {"torch": ">=2.4"}}
    ]
    implementation_["spec"]["licensing"] = {"evidence": {"path": "LICENSE"}}
    KINDS["ImplementationRevision"].model_validate(implementation_)
    implementation_["spec"]["source"] = {"repository": "https://github.com/x/y"}
    with pytest.raises(ValidationError):
        KINDS["ImplementationRevision"].model_validate(implementation_)


def test_a_workload_suite_lists_cases_and_how_they_aggregate(seed_row: dict[str, Any]) -> None:
    operation = seed_row["run"]["resource"]["spec"]["implementationDigest"]  # any digest
    suite = {
        "apiVersion": "kernelindex.dev/v1alpha1",
        "kind": "WorkloadSuite",
        "metadata": {"name": "amd-fp8-mm-suite"},
        "spec": {
            "operationSpecDigest": operation,
            "cases": [{"externalId": "m1024", "axes": {"m": 1024, "n": 1536}}],
            "correctness": {"comparator": "allclose"},
            "aggregation": {"metric": "score", "statistic": "geomean"},
        },
    }
    model = KINDS["WorkloadSuite"].model_validate(suite)
    assert model.spec_json()["cases"][0]["axes"] == {"m": 1024, "n": 1536}
    suite["spec"]["cases"] = []
    with pytest.raises(ValidationError, match="at least 1"):
        KINDS["WorkloadSuite"].model_validate(suite)


def test_libraries_map_a_token_to_a_version(seed_row: dict[str, Any]) -> None:
    environment = copy.deepcopy(seed_row["environment"]["resource"])
    environment["spec"]["software"]["libraries"] = {"liger_kernel": "0.8.5", "triton": "3.6.0"}
    KINDS["ExecutionEnvironment"].model_validate(environment)
    for refused in ([{"name": "triton", "version": "3.6.0"}], {"liger-kernel": "0.8.5"}):
        environment["spec"]["software"]["libraries"] = refused
        with pytest.raises(ValidationError):
            KINDS["ExecutionEnvironment"].model_validate(environment)


def test_set_like_lists_sort_in_utf16_order(seed_row: dict[str, Any]) -> None:
    implementation_ = implementation(seed_row)
    implementation_["spec"]["support"]["productsTested"] = ["\uff21", "\U0001f600", "B"]
    model = KINDS["ImplementationRevision"].model_validate(implementation_)
    # JavaScript compares UTF-16 code units: a surrogate pair (D83D …) sorts before U+FF21.
    assert model.spec_json()["support"]["productsTested"] == ["B", "\U0001f600", "\uff21"]


def test_what_the_schema_allows_and_a_reader_should_see_is_a_warning(
    seed_row: dict[str, Any],
) -> None:
    operation = read_json(
        sorted(
            __import__("pathlib").Path(SHARED / "reference" / "liger-operations").glob("*.json")
        )[0]
    )
    operation["spec"]["axes"]["half"] = {
        "role": "derived",
        "type": "integer",
        "expression": "a / 2",
    }
    model = KINDS["OperationSpec"].model_validate(operation)
    assert model.warnings() == [
        ("spec.axes.half.expression", "unexpected character at 3 in expression 'a / 2'")
    ]
