"""What the pages compare: kernels, passes, implementations and cohorts, derived once (a
kernel's charts and rankings, `passes_of`, where its page is planned).

FORMAT.md §4: a run's kernel, implementation and pass come from the resolved OperationSpec and
ImplementationRevision when present, otherwise from the run itself (title
`<Kernel> · <provider> · <pass>`, `sourceNative.benchmark` `<kernel>/<pass>`, the caseKey inside
`sourceNative.externalId`). A cohort is (workload, protocol, environment): only runs of one cohort
are ever ranked against each other. Everything here is plain data; pages.py formats it.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections import defaultdict
from collections.abc import Iterable
from typing import Any, NamedTuple

from sitegen.catalog import Catalog, merge_sorted
from sitegen.load import LoadedResource
from sitegen.run_summary import (
    LATENCY,
    TITLE_SEPARATOR,
    RunSummary,
    Shape,
    Value,
    case_key_shape,
)

PASS_ORDER = ("forward", "backward", "full")
_PASS_SUFFIX = re.compile(r"-(forward|backward|full)$")
_PASS_IN_TITLE = re.compile(r"·\s*([a-z]+) pass$")


# The analysis's records are named tuples (as pages.py's): made in C, a million times at 1M runs,
# and a class costs ~0.1 ms to define where a frozen dataclass cost ~1.3 ms at every start.
class RunFacts(NamedTuple):
    """A run with everything the site derives about it, computed once.

    What lists, charts and the manifest read of every run is kept here, so that they never
    parse a compact run's document (load.py); `spec` parses it, for the run's own page.
    """

    entry: LoadedResource
    kernel_key: str
    kernel_title: str
    kernel_slug: str
    pass_name: str
    provider: str
    shape: Shape
    values: tuple[Value, ...]
    observed_at: str
    status: str
    implementation: str
    workload: str
    protocol: str
    environment: str
    source: str  # sourceNative.source, or ""

    @property
    def spec(self) -> dict[str, Any]:
        return self.entry.spec

    @property
    def digest(self) -> str:
        return self.entry.digest

    @property
    def title(self) -> str:
        return self.entry.title or self.entry.name

    def value(self, metric: str, unit: str) -> Value | None:
        for value in self.values:
            if value.metric == metric and value.unit == unit:
                return value
        return None


class Implementation(NamedTuple):
    """An implementation as one kernel page shows it."""

    digest: str
    label: str
    baseline: bool
    entry: LoadedResource | None


class Cell(NamedTuple):
    """One implementation at one shape of one chart: ranked, unranked, or not measured."""

    implementation: Implementation
    run: RunFacts | None  # the newest run of the cohort, None when not measured
    value: Value | None  # None when not measured or not passed
    rank: int | None
    vs_best: float | None
    vs_baseline: float | None
    earlier: int  # older runs of the same cohort and implementation, not shown


class ShapeRow(NamedTuple):
    workload: str
    x: int | None  # the swept axis's value
    shape: Shape
    cells: tuple[Cell, ...]  # ranked first, then unranked, then not measured


class Series(NamedTuple):
    """One chart: a cohort family that differs only in the swept axis."""

    element_id: str  # derived from digests, stable across builds
    protocol: str
    environment: str
    metric: str
    unit: str
    swept: str | None
    fixed: Shape  # the shape without the swept axis
    rows: tuple[ShapeRow, ...]  # sorted by x
    implementations: tuple[Implementation, ...]  # the traces, sorted by label


class GpuSection(NamedTuple):
    environment: str
    series: tuple[Series, ...]
    missing: tuple[Implementation, ...]  # measured in this pass elsewhere, not on this GPU


class PassSection(NamedTuple):
    name: str
    gpus: tuple[GpuSection, ...]
    missing_gpus: tuple[str, ...]  # environments of the kernel not measured in this pass


class Kernel(NamedTuple):
    key: str  # the OperationSpec digest, or `kernel:<title>` when derived from runs
    title: str
    slug: str  # the URL name before disambiguation
    operation: LoadedResource | None
    runs: tuple[RunFacts, ...]  # sorted by title then digest
    implementations: tuple[Implementation, ...]
    pass_names: tuple[str, ...]  # in page order (forward, backward, full, others by name)
    environments: tuple[str, ...]


class Analysis(NamedTuple):
    runs: dict[str, RunFacts]  # by digest, sorted
    kernels: tuple[Kernel, ...]  # sorted by title then key
    newest: tuple[RunFacts, ...]  # every run, newest first (`newest_first`)


def kebab(text: str) -> str:
    """FORMAT.md §5: lowercase, runs outside [a-z0-9] become `-`, trimmed, cut to 100."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:100]


def short_hash(text: str, length: int = 12) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:length]


def pass_of(protocol: LoadedResource | None, summary: RunSummary) -> str:
    """The timed pass: from the protocol's name or title, else the run's title or benchmark."""
    if protocol is not None:
        match = _PASS_SUFFIX.search(protocol.name)
        if match:
            return match.group(1)
        match = _PASS_IN_TITLE.search(protocol.title or "")
        if match:
            return match.group(1)
    if summary.title_parts:
        return summary.title_parts[2]
    if summary.benchmark:
        return summary.benchmark[1]
    return "unspecified"


def _workload_shape(workload: LoadedResource) -> Shape:
    spec = workload.spec
    tensors = list(spec["tensors"].values())
    # The first tensor is the first input: its dtype is the row dtype of the benchmark.
    dtype = tensors[0]["dtype"] if tensors else ""
    scalars = tuple(
        (name, json.dumps(scalar["value"]))
        for name, scalar in sorted(spec.get("scalars", {}).items())
    )
    return Shape(tuple(spec["axes"].items()), dtype, scalars)


def analyse(catalog: Catalog) -> Analysis:
    """Derive every run's facts, then each kernel's runs, implementations, passes and GPUs."""
    shapes: dict[str, Shape] = {
        w.digest: _workload_shape(w) for w in catalog.of_kind("WorkloadCase")
    }
    facts: dict[str, RunFacts] = {}
    for entry in sorted(catalog.of_kind("BenchmarkRun"), key=lambda e: e.digest):
        facts[entry.digest] = _run_facts(entry, catalog, shapes)

    runs_by_kernel: dict[str, list[RunFacts]] = defaultdict(list)
    for run in facts.values():
        runs_by_kernel[run.kernel_key].append(run)
    kernels = []
    for operation in catalog.of_kind("OperationSpec"):
        runs_by_kernel.setdefault(operation.digest, [])
    for key, runs in runs_by_kernel.items():
        kernels.append(_kernel(key, runs, catalog))
    kernels.sort(key=lambda k: (k.title.lower(), k.key))
    return Analysis(facts, tuple(kernels), tuple(newest_first(facts.values())))


def reanalyse(
    analysis: Analysis, catalog: Catalog, removed: set[str], added: list[LoadedResource]
) -> Analysis | None:
    """`analyse(catalog)` after the runs `removed` went and `added` came (`catalog` already
    holds them): the added runs' facts and the kernels they touch are derived again, nothing
    else. None when the kernels themselves change (one appears, goes or is renamed): that
    moves pages and URLs, and the caller analyses everything.
    """
    shapes = {}
    for entry in added:
        workload = catalog.get(entry.summary.workload, "WorkloadCase")
        if workload is not None:
            shapes[workload.digest] = _workload_shape(workload)
    new = {entry.digest: _run_facts(entry, catalog, shapes) for entry in added}
    touched = {analysis.runs[d].kernel_key for d in removed} | {r.kernel_key for r in new.values()}
    kernels = {k.key: k for k in analysis.kernels}
    for key in touched:
        old = kernels.get(key)
        if old is None:
            return None
        runs = [r for r in old.runs if r.digest not in removed]
        runs += [r for r in new.values() if r.kernel_key == key]
        if not runs and old.operation is None:
            return None
        kernel = _kernel(key, runs, catalog)
        if (kernel.title, kernel.slug) != (old.title, old.slug):
            return None
        kernels[key] = kernel
    facts = merge_sorted(analysis.runs, removed, new)
    # Newest first, each removed and added run placed by bisection.
    newest = list(analysis.newest)
    for digest_value in removed:
        place = _newest_place(newest, analysis.runs[digest_value])
        if newest[place] is not analysis.runs[digest_value]:
            return None  # not the order `analyse` made: analyse everything
        del newest[place]
    for run in new.values():
        newest.insert(_newest_place(newest, run), run)
    return Analysis(facts, tuple(kernels[k.key] for k in analysis.kernels), tuple(newest))


def _run_facts(entry: LoadedResource, catalog: Catalog, shapes: dict[str, Shape]) -> RunFacts:
    # Taken, not read: a million summaries are not held beside the facts made from them.
    summary = entry.take_summary()
    workload = catalog.get(summary.workload, "WorkloadCase")
    implementation = catalog.get(summary.implementation, "ImplementationRevision")
    title_parts = summary.title_parts
    benchmark = summary.benchmark

    operation_digest = None
    if workload is not None:
        operation_digest = workload.spec["operationSpecDigest"]
    elif implementation is not None:
        operation_digest = implementation.spec["operation"]["specDigest"]
    operation = catalog.get(operation_digest, "OperationSpec") if operation_digest else None

    derived_title = (
        title_parts[0] if title_parts else benchmark[0] if benchmark else "Unknown kernel"
    )
    if operation is not None:
        key = operation.digest
        title = operation.title or operation.name
        slug = operation.name
    else:
        # Without an OperationSpec the kernel is what the run says it is (FORMAT.md §4).
        key = operation_digest or f"kernel:{derived_title}"
        title = derived_title
        slug = kebab(benchmark[0] if benchmark else derived_title) or "kernel"

    if title_parts:
        provider = title_parts[1]
    elif implementation is not None:
        impl_title = implementation.title or implementation.name
        provider = impl_title.split(TITLE_SEPARATOR)[-1]
    else:
        provider = "implementation " + summary.implementation.removeprefix("sha256:")[:12]

    shape = shapes.get(summary.workload) or case_key_shape(summary.external_id) or Shape((), "", ())
    protocol = catalog.get(summary.protocol, "BenchmarkProtocol")
    return RunFacts(
        entry=entry,
        kernel_key=key,
        kernel_title=title,
        kernel_slug=slug,
        pass_name=sys.intern(pass_of(protocol, summary)),
        provider=sys.intern(provider),
        shape=shape,
        values=summary.values,
        observed_at=summary.observed_at,
        # Interned: a few distinct values shared by many runs (the memory of millions of runs).
        status=sys.intern(summary.status),
        implementation=sys.intern(summary.implementation),
        workload=sys.intern(summary.workload),
        protocol=sys.intern(summary.protocol),
        environment=sys.intern(summary.environment),
        source=sys.intern(summary.source),
    )


def _pass_rank(name: str) -> tuple[int, str]:
    return (PASS_ORDER.index(name) if name in PASS_ORDER else len(PASS_ORDER), name)


def _kernel(key: str, runs: list[RunFacts], catalog: Catalog) -> Kernel:
    operation = catalog.get(key, "OperationSpec")
    runs.sort(key=lambda r: (r.title, r.digest))
    if operation is not None:
        title, slug = operation.title or operation.name, operation.name
    else:
        title, slug = runs[0].kernel_title, runs[0].kernel_slug
    return Kernel(
        key,
        title,
        slug,
        operation,
        tuple(runs),
        tuple(_implementations(runs, catalog).values()),
        tuple(sorted({run.pass_name for run in runs}, key=_pass_rank)),
        tuple(sorted({r.environment for r in runs})),
    )


def passes_of(kernel: Kernel) -> tuple[PassSection, ...]:
    """A kernel's passes, each GPU's charts and rankings: what its page shows.

    Derived when the page is planned, not with the analysis: in the render workers, beside
    the other pages (on the real catalog ~40 % of the analysis, which ran on one CPU), and
    dropped once the page is written.
    """
    implementations = {i.digest: i for i in kernel.implementations}
    by_pass: dict[str, list[RunFacts]] = defaultdict(list)
    for run in kernel.runs:
        by_pass[run.pass_name].append(run)
    return tuple(
        _pass_section(kernel.key, name, by_pass[name], implementations, kernel.environments)
        for name in kernel.pass_names
    )


def _implementations(runs: list[RunFacts], catalog: Catalog) -> dict[str, Implementation]:
    """One label per implementation digest: the first provider its runs' titles name."""
    providers: dict[str, set[str]] = defaultdict(set)
    for run in runs:
        providers[run.implementation].add(run.provider)
    found = []
    for digest_value, names in providers.items():
        entry = catalog.get(digest_value, "ImplementationRevision")
        labels = (entry.metadata.get("labels") or {}) if entry else {}
        found.append(
            Implementation(digest_value, sorted(names)[0], labels.get("role") == "baseline", entry)
        )
    found.sort(key=lambda i: (i.label, i.digest))
    return {i.digest: i for i in found}


def _pass_section(
    kernel_key: str,
    pass_name: str,
    runs: list[RunFacts],
    implementations: dict[str, Implementation],
    environments: tuple[str, ...],
) -> PassSection:
    by_environment: dict[str, list[RunFacts]] = defaultdict(list)
    for run in runs:
        by_environment[run.environment].append(run)
    # The implementations this pass knows, per metric: what a GPU or a shape may lack.
    universe: dict[tuple[str, str], set[str]] = defaultdict(set)
    for run in runs:
        for value in run.values:
            universe[(value.metric, value.unit)].add(run.implementation)
    everyone = {run.implementation for run in runs}
    gpus = []
    for environment in sorted(by_environment):
        env_runs = by_environment[environment]
        series = _series(kernel_key, env_runs, implementations, universe)
        present = {run.implementation for run in env_runs}
        missing = tuple(implementations[d] for d in implementations if d in everyone - present)
        gpus.append(GpuSection(environment, series, missing))
    missing_gpus = tuple(e for e in environments if e not in by_environment)
    return PassSection(pass_name, tuple(gpus), missing_gpus)


def _series(
    kernel_key: str,
    runs: list[RunFacts],
    implementations: dict[str, Implementation],
    universe: dict[tuple[str, str], set[str]],
) -> tuple[Series, ...]:
    """Charts of one pass on one GPU: per protocol and metric, one per fixed configuration."""
    # cohort → implementation → runs (newest first); cohort = (protocol, metric, unit, workload)
    cohorts: dict[tuple[str, str, str], dict[str, dict[str, list[RunFacts]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    shapes: dict[str, Shape] = {}
    for run in runs:
        shapes[run.workload] = run.shape
        for value in run.values:
            cohorts[(run.protocol, value.metric, value.unit)][run.workload][
                run.implementation
            ].append(run)
    found = []
    for (protocol, metric, unit), by_workload in sorted(
        cohorts.items(), key=lambda i: (i[0][1] != LATENCY, i[0])
    ):
        known = universe[(metric, unit)]
        traces = tuple(implementations[d] for d in implementations if d in known)
        for swept, fixed, members in _sweeps({w: shapes[w] for w in by_workload}):
            rows = []
            for workload in members:
                x = dict(shapes[workload].axes).get(swept) if swept else None
                rows.append(
                    ShapeRow(
                        workload,
                        x,
                        shapes[workload],
                        _rank(by_workload[workload], traces, metric, unit),
                    )
                )
            rows.sort(key=lambda r: (r.x if r.x is not None else -1, r.workload))
            identity = json.dumps(
                [
                    kernel_key,
                    protocol,
                    runs[0].environment,
                    metric,
                    unit,
                    swept,
                    fixed.label(),
                    members,
                ]
            )
            found.append(
                Series(
                    element_id="chart-" + short_hash(identity),
                    protocol=protocol,
                    environment=runs[0].environment,
                    metric=metric,
                    unit=unit,
                    swept=swept,
                    fixed=fixed,
                    rows=tuple(rows),
                    implementations=traces,
                )
            )
    return tuple(found)


def _sweeps(shapes: dict[str, Shape]) -> list[tuple[str | None, Shape, list[str]]]:
    """Group workloads into charts: the swept axis is the one whose value varies in a group.

    Every (axis, rest of the shape) pair is a candidate; the largest candidates are taken first,
    each while it still adds a workload, so a crossed sweep (rope's T and H) gives two charts
    sharing their corner and a grid of several fixed configurations gives one chart per row.
    """
    candidates: dict[tuple[str, Shape], list[str]] = defaultdict(list)
    for workload, shape in sorted(shapes.items()):
        if not shape.axes:
            candidates[("", shape)].append(workload)
        for axis, _ in shape.axes:
            rest = Shape(tuple(a for a in shape.axes if a[0] != axis), shape.dtype, shape.scalars)
            candidates[(axis, rest)].append(workload)
    covered: set[str] = set()
    chosen = []
    for (axis, rest), members in sorted(
        candidates.items(), key=lambda i: (-len(i[1]), i[0][0], _shape_key(i[0][1]))
    ):
        if not covered.issuperset(members):
            covered.update(members)
            chosen.append((axis or None, rest, members))
    chosen.sort(key=lambda c: (_shape_key(c[1]), c[0] or ""))
    return chosen


def _shape_key(shape: Shape) -> tuple[Any, ...]:
    return (shape.dtype, shape.axes, shape.scalars)


def _rank(
    by_implementation: dict[str, list[RunFacts]],
    traces: tuple[Implementation, ...],
    metric: str,
    unit: str,
) -> tuple[Cell, ...]:
    """Rank one cohort: the newest run of each implementation; lower is better."""
    measured: list[tuple[Implementation, RunFacts, Value | None, int]] = []
    for implementation in traces:
        runs = by_implementation.get(implementation.digest)
        if not runs:
            continue
        runs.sort(key=lambda r: (r.observed_at, r.digest), reverse=True)
        newest = runs[0]
        value = newest.value(metric, unit) if newest.status == "passed" else None
        measured.append((implementation, newest, value, len(runs) - 1))
    passed = sorted(
        (m for m in measured if m[2] is not None),
        key=lambda m: (m[2].centre, m[0].label, m[0].digest),  # type: ignore[union-attr]
    )
    best = passed[0][2].centre if passed else None  # type: ignore[union-attr]
    baseline = next((m[2].centre for m in passed if m[0].baseline), None)  # type: ignore[union-attr]
    cells = []
    for rank, (implementation, run, value, earlier) in enumerate(passed, start=1):
        centre = value.centre  # type: ignore[union-attr]
        cells.append(
            Cell(
                implementation,
                run,
                value,
                rank,
                centre / best if best else None,
                centre / baseline if baseline else None,
                earlier,
            )
        )
    cells += [Cell(i, r, None, None, None, None, e) for i, r, v, e in measured if v is None]
    seen = {m[0].digest for m in measured}
    cells += [Cell(i, None, None, None, None, None, 0) for i in traces if i.digest not in seen]
    return tuple(cells)


def newest_first(runs: Iterable[RunFacts]) -> list[RunFacts]:
    return sorted(runs, key=_age, reverse=True)


def _age(run: RunFacts) -> tuple[str, str]:
    return (run.observed_at, run.digest)


def _newest_place(runs: list[RunFacts], run: RunFacts) -> int:
    """Where `run` goes in `runs`, newest first (bisect's order is ascending)."""
    low, high, age = 0, len(runs), _age(run)
    while low < high:
        middle = (low + high) // 2
        if _age(runs[middle]) > age:
            low = middle + 1
        else:
            high = middle
    return low
