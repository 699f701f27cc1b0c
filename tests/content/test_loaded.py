"""LoadedResource: a validated resource as the build holds it."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from sitegen.content.documents import validate_resource
from sitegen.content.loaded import LoadedResource
from sitegen.model.problems import Problem
from sitegen.model.resources import BenchmarkProtocol, BenchmarkRun


def test_a_resource_reads_as_its_kinds_model_with_typed_attributes(
    example_bundle: dict[str, Any],
) -> None:
    problems: list[Problem] = []
    loaded = validate_resource(example_bundle["run"], "x.json", "run", problems)
    assert loaded is not None and problems == []
    run = loaded.model(BenchmarkRun)
    assert run.spec.status == "passed"
    assert run.spec.timing is not None and run.spec.timing.latency_ns.median == 577632
    compact = LoadedResource.compact(
        loaded.path,
        loaded.where,
        loaded.digest,
        orjson.dumps(loaded.document),
        "BenchmarkRun",
        loaded.name,
        loaded.title,
    )
    assert compact.model(BenchmarkRun).spec == run.spec  # rebuilt from the document
    with pytest.raises(TypeError, match="a BenchmarkRun, not a BenchmarkProtocol"):
        loaded.model(BenchmarkProtocol)
