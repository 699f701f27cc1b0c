"""What the pages compare: kernels, passes, implementations and cohorts, derived once (a
kernel's charts and rankings, `passes_of`, where its page is planned).

FORMAT.md §4: a run's kernel, implementation and pass come from the resolved OperationSpec and
ImplementationRevision when present, otherwise from the run itself (title
`<Kernel> · <provider> · <pass>`, `sourceNative.benchmark` `<kernel>/<pass>`, the caseKey inside
`sourceNative.externalId`). A cohort is (workload, protocol, environment): only runs of one cohort
are ever ranked against each other. Everything here is plain data; site/ formats it.
"""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from collections.abc import Iterable
from typing import Any, NamedTuple

from sitegen.content.catalog import Catalog
from sitegen.content.loaded import LoadedResource
from sitegen.content.run_summary import (
    TITLE_SEPARATOR,
    RunSummary,
    Shape,
    Value,
)
from sitegen.importers.registry import shape_of
from sitegen.model.names import kebab

PASS_ORDER = ("forward", "backward", "full")
_PASS_SUFFIX = re.compile(r"-(forward|backward|full)$")
_PASS_IN_TITLE = re.compile(r"·\s*([a-z]+) pass$")


# Named tuples, as the site's records: made in C once per run, and cheap to define at start.
class RunFacts(NamedTuple):
    """A run with everything the site derives about it, computed once.

    What lists, charts and the manifest read of every run is kept here, so that they never
    parse a compact run's document (content/loaded.py); `spec` parses it, for the run's own
    page.
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

    shape = (
        shapes.get(summary.workload)
        or shape_of(summary.source, summary.external_id)
        or Shape((), "", ())
    )
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
        # Interned: a few distinct values shared by every run.
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


def newest_first(runs: Iterable[RunFacts]) -> list[RunFacts]:
    return sorted(runs, key=_age, reverse=True)


def _age(run: RunFacts) -> tuple[str, str]:
    return (run.observed_at, run.digest)
