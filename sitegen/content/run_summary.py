"""What a run's own document says, read once: its references, title parts, benchmark, values,
time, status and source (`RunSummary`), and the records they are read into (`Shape`, `Value`).

Nothing here looks at another resource, so the load workers summarise each run where they parse
it (content/load.py), beside one another: the main process resolves references and analyses runs
(content/catalog.py, analysis/kernels.py) without parsing a run again.
"""

from __future__ import annotations

import functools
import sys
from collections import defaultdict
from typing import Any, NamedTuple

from sitegen.model.resources import BenchmarkRun, reference_values

KIND = "BenchmarkRun"  # the kind summarised
LATENCY = "latency"
TITLE_SEPARATOR = " · "
# Spread statistics in order of preference: p20/p80 (triton's do_bench), then p05/p95.
SPREADS = (("p20", "p80"), ("p05", "p95"))


# Named tuples, as the site's records: made in C once per run, and cheap to define at start.
class Shape(NamedTuple):
    """A workload as the charts see it: axes in binding order, dtype, scalars."""

    axes: tuple[tuple[str, int], ...]
    dtype: str  # "" when unknown
    scalars: tuple[tuple[str, str], ...]  # name → JSON text of the value

    def label(self) -> str:
        return _shape_label(self)


@functools.lru_cache(maxsize=4096)  # a workload's shape is shown on each of its runs' pages
def _shape_label(shape: Shape) -> str:
    parts = [", ".join(f"{name}={value}" for name, value in shape.axes)]
    parts += [f"{name}={value}" for name, value in shape.scalars]
    parts.append(shape.dtype)
    return " · ".join(part for part in parts if part) or "unknown shape"


class Value(NamedTuple):
    """One metric of one run: a centre and, when recorded, a spread around it."""

    metric: str  # `latency` (ns) or a measurement metric such as `peak_memory`
    unit: str
    statistic: str  # median or mean
    centre: float
    low: float | None
    high: float | None
    spread: tuple[str, str] | None  # the statistics low/high came from, e.g. (p20, p80)


# Where each digest a run references sits in `RunSummary.references`.
_PATHS = tuple(BenchmarkRun.references)
_IMPLEMENTATION = _PATHS.index(("spec", "implementationDigest"))
_WORKLOAD = _PATHS.index(("spec", "workloadDigest"))
_PROTOCOL = _PATHS.index(("spec", "protocolDigest"))
_ENVIRONMENT = _PATHS.index(("spec", "environmentDigest"))


class RunSummary(NamedTuple):
    """What the analysis reads of one run's document. Held only until the analysis has made
    the run's facts (kernels.RunFacts) from it: `LoadedResource.take_summary`."""

    references: tuple[str, ...]  # the digest at each of BenchmarkRun.references' paths, in order
    title_parts: tuple[str, str, str] | None  # `<Kernel> · <provider> · <pass>`
    benchmark: tuple[str, str] | None  # sourceNative.benchmark: kernel and pass
    external_id: str  # sourceNative.externalId, or ""
    values: tuple[Value, ...]
    observed_at: str
    status: str
    source: str  # sourceNative.source, or ""
    labels: tuple[tuple[str, str], ...]  # metadata.labels, sorted: what importers read of them

    @property
    def implementation(self) -> str:
        return self.references[_IMPLEMENTATION]

    @property
    def workload(self) -> str:
        return self.references[_WORKLOAD]

    @property
    def protocol(self) -> str:
        return self.references[_PROTOCOL]

    @property
    def environment(self) -> str:
        return self.references[_ENVIRONMENT]


def summarise(document: dict[str, Any]) -> RunSummary:
    """The summary of a run's normalised document (LoadedResource.document).

    What repeats from run to run is interned: a load worker's chunk of summaries is pickled
    with each such string once, and unpickling them (in the main process, which waits for
    them) cost as much as half of what summarising there saved.
    """
    spec = document["spec"]
    native = spec.get("sourceNative", {})
    return RunSummary(
        references=tuple(map(sys.intern, reference_values(KIND, spec))),
        title_parts=title_parts(document["metadata"].get("title")),
        benchmark=benchmark_parts(native.get("benchmark", "")),
        external_id=native.get("externalId", ""),
        values=values_of(spec),
        observed_at=str(spec["observedAt"]),
        status=sys.intern(str(spec["status"])),
        source=sys.intern(str(native.get("source", ""))),
        labels=tuple(
            (sys.intern(key), sys.intern(value))
            for key, value in sorted((document["metadata"].get("labels") or {}).items())
        ),
    )


def title_parts(title: str | None) -> tuple[str, str, str] | None:
    """`<Kernel> · <provider> · <pass>` (FORMAT.md §4), and what may follow: a memory run's
    title goes on `· peak memory`."""
    parts = (title or "").split(TITLE_SEPARATOR)
    if len(parts) >= 3 and all(part.strip() for part in parts[:3]):
        kernel, provider, pass_name = (sys.intern(part.strip()) for part in parts[:3])
        return kernel, provider, pass_name
    return None


def benchmark_parts(benchmark: str) -> tuple[str, str] | None:
    kernel, _, pass_name = benchmark.partition("/")
    return (sys.intern(kernel), sys.intern(pass_name)) if kernel and pass_name else None


def values_of(spec: dict[str, Any]) -> tuple[Value, ...]:
    """Latency from `timing` (ns), every other metric from `measurements`, spreads attached."""
    by_metric: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    for measurement in spec.get("measurements", []):
        statistics = by_metric[(measurement["metric"], measurement["unit"])]
        statistics.setdefault(measurement["statistic"], measurement["value"])
    timing = spec.get("timing")
    if timing is not None:
        latency = by_metric[(LATENCY, "ns")]
        for statistic, value in timing["latencyNs"].items():
            if isinstance(value, int):
                latency[statistic] = value  # the timing block wins over a measurement
    found = []
    for (metric, unit), statistics in sorted(
        by_metric.items(), key=lambda i: (i[0][0] != LATENCY, i[0])
    ):
        statistic = "median" if "median" in statistics else "mean" if "mean" in statistics else None
        if statistic is None:
            continue
        low = high = None
        spread = None
        for low_name, high_name in SPREADS:
            if low_name in statistics and high_name in statistics:
                low, high, spread = (
                    statistics[low_name],
                    statistics[high_name],
                    (low_name, high_name),
                )
                break
        # Interned: the same few names in every one of maybe millions of runs.
        names = (sys.intern(metric), sys.intern(unit), sys.intern(statistic))
        found.append(Value(*names, statistics[statistic], low, high, spread))
    return tuple(found)
