"""A run's summary: what its own document says, read once (by a load worker)."""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

from sitegen.analysis.kernels import analyse
from sitegen.content.catalog import references_of, resolve
from sitegen.content.load import load_content
from sitegen.content.run_summary import (
    RunSummary,
    Value,
    benchmark_parts,
    summarise,
    title_parts,
    values_of,
)
from sitegen.model.resources import BenchmarkRun
from tests.site.planned import CONTENT


def test_summary_of_the_published_example(example_bundle: dict[str, Any]) -> None:
    run = example_bundle["run"]
    spec = run["spec"]
    summary = summarise(run)
    # References in BenchmarkRun.references' order, each also by name.
    assert summary.references == tuple(spec[location[-1]] for location in BenchmarkRun.references)
    assert (summary.implementation, summary.workload, summary.protocol, summary.environment) == (
        spec["implementationDigest"],
        spec["workloadDigest"],
        spec["protocolDigest"],
        spec["environmentDigest"],
    )
    assert summary.title_parts == ("LayerNorm", "liger", "backward")
    assert summary.benchmark == ("layer_norm", "backward")
    assert summary.external_id == spec["sourceNative"]["externalId"]
    assert summary.values == (
        Value("latency", "ns", "median", 577632, 575347, 579891, ("p20", "p80")),
    )
    assert (summary.observed_at, summary.status, summary.source) == (
        "2025-07-17T18:18:16.000Z",
        "passed",
        "liger-kernel-bench",
    )


def test_summary_of_a_bare_run(example_bundle: dict[str, Any]) -> None:
    """No title parts, no benchmark, no source: each absent, nothing guessed."""
    run = copy.deepcopy(example_bundle["run"])
    run["metadata"]["title"] = "LayerNorm backward"
    del run["spec"]["sourceNative"]
    summary = summarise(run)
    assert (summary.title_parts, summary.benchmark, summary.external_id, summary.source) == (
        None,
        None,
        "",
        "",
    )


def test_title_and_benchmark_parts() -> None:
    assert title_parts(" RMSNorm ·  triton · forward ") == ("RMSNorm", "triton", "forward")
    assert title_parts("RMSNorm · triton") is None
    assert title_parts("RMSNorm ·  · forward") is None
    assert title_parts(None) is None
    assert benchmark_parts("rms_norm/forward") == ("rms_norm", "forward")
    assert benchmark_parts("rms_norm") is None and benchmark_parts("/forward") is None


def test_the_analysis_takes_each_summary_and_resolve_reads_it() -> None:
    """A summarised run's references are the ones its document gives; once the analysis
    made its facts, no run still holds a summary (a million would be ~0.5 GB)."""
    from tests.conftest import FIXTURES

    loaded = load_content(FIXTURES / "site" / "content")
    runs = [r for r in loaded.resources if r.kind == "BenchmarkRun"]
    unsummarised = [references_of(r) for r in runs]
    assert all(isinstance(r.summary, RunSummary) for r in runs)  # read and held now
    assert [references_of(r) for r in runs] == unsummarised
    catalog, _ = resolve(loaded.resources)
    analysis = analyse(catalog)
    assert set(analysis.runs) == {r.digest for r in runs}
    assert not any(r.held_summary for r in runs)
    # The facts are the summary's: the same values, the same references.
    for run in runs:
        facts = analysis.runs[run.digest]
        expected = summarise(run.document)
        assert facts.values == expected.values and facts.observed_at == expected.observed_at
        assert facts.implementation == expected.implementation


def test_a_chunk_of_summaries_pickles_each_repeated_string_once(
    example_bundle: dict[str, Any],
) -> None:
    """What repeats from run to run is interned, so a worker's chunk carries it once."""
    runs = []
    for index in range(50):
        run = json.loads(json.dumps(example_bundle["run"]))  # separate string objects
        run["spec"]["observedAt"] = f"2025-07-17T18:18:{index:02d}.000Z"
        runs.append(summarise(run))
    single = len(pickle.dumps([runs[0]]))
    assert len(pickle.dumps(runs)) < 50 * single / 3


def test_values_prefer_timing_and_attach_spread() -> None:
    spec = json.loads((CONTENT / "bundles" / "layer-norm-backward-liger-h100.json").read_text())
    (value,) = values_of(spec["run"]["spec"])
    assert (value.metric, value.centre, value.low, value.high) == (
        "latency",
        577632,
        575347,
        579891,
    )
    assert value.spread == ("p20", "p80")
