"""A run's page: its values spelled out, what was measured, how and where, its provenance and
identity, with the normalised document and derived links in its JSON twin."""

from __future__ import annotations

from typing import Any, NamedTuple

from sitegen.analysis.kernels import RunFacts
from sitegen.content.run_summary import Value
from sitegen.site.credits import attribution_for
from sitegen.site.facts import scalar_facts
from sitegen.site.format import Numbers, display_unit, exact, metric_name, when
from sitegen.site.lookup import SiteLookup
from sitegen.site.records import Fact, FactGroup, Identity, Page, PageMeta


class Headline(NamedTuple):
    """One metric of a run, spelled out: value, exact raw value, spread."""

    metric: str
    value: str
    exact: str
    spread: str


class Tensor(NamedTuple):
    name: str
    shape: str
    dtype: str


class RunContext(NamedTuple):
    meta: PageMeta
    headlines: tuple[Headline, ...]
    status: str
    observed: str
    observed_iso: str
    summary: tuple[Fact, ...]
    labels: tuple[Fact, ...]
    tensors: tuple[Tensor, ...]
    scalars: tuple[Fact, ...]
    provenance: tuple[Fact, ...]
    groups: tuple[FactGroup, ...]
    description: str | None
    identity: Identity


def run_page(lookup: SiteLookup, run: RunFacts) -> Page:
    entry = run.entry
    path = lookup.urls.path_of(run.digest) or ""
    document = entry.document  # a run's is parsed on each read: once here
    spec, metadata = document["spec"], document["metadata"]
    headlines = tuple(headline(value) for value in run.values)
    tensors, scalars = lookup.memo(workload_tables)(run.workload)
    kernel = lookup.kernel_of(run)
    gpu = lookup.gpu_label(run.environment)
    summary = (
        Fact("Kernel", kernel.title, lookup.urls.link(kernel.key)),
        reference(lookup, "Implementation", run.implementation, run.provider),
        Fact("Pass", run.pass_name),
        reference(lookup, "GPU", run.environment, gpu),
        reference(lookup, "Workload", run.workload, run.shape.label()),
        reference(lookup, "Protocol", run.protocol),
    )
    labels = tuple(Fact(k, v) for k, v in sorted((metadata.get("labels") or {}).items()))
    groups = [
        FactGroup("Protocol", lookup.protocol_facts(run.protocol)),
        FactGroup("Environment", lookup.environment_facts(run.environment)),
    ]
    if "correctness" in spec:
        correctness = tuple(Fact(k, str(v)) for k, v in spec["correctness"].items())
        groups.append(FactGroup("Correctness", correctness))
    if "evidence" in spec:
        evidence = tuple(
            Fact(k, str(v), v if k == "logUrl" else None, code=k == "artifactDigest")
            for k, v in spec["evidence"].items()
        )
        groups.append(FactGroup("Evidence", evidence))
    meta = lookup.meta(
        run.title,
        path,
        f"{run.title}: {headlines[0].value if headlines else run.status} "
        f"on {gpu}, {run.shape.label()}.",
        "runs",
        [run],
    )
    context = RunContext(
        meta=meta,
        headlines=headlines,
        status=run.status,
        observed=when(run.observed_at),
        observed_iso=run.observed_at,
        summary=summary,
        labels=labels,
        provenance=provenance_facts(lookup, run, spec, metadata),
        tensors=tensors,
        scalars=scalars,
        groups=tuple(g for g in groups if g.facts),
        description=metadata.get("description"),
        identity=lookup.identity(entry, spec),
    )
    links = {
        "implementation": lookup.urls.link(run.implementation),
        "workload": lookup.urls.link(run.workload),
        "protocol": lookup.urls.link(run.protocol),
        "environment": lookup.urls.link(run.environment),
    }
    twin = lookup.resource_twin(
        entry,
        document,
        derived={
            "kernel": {"title": kernel.title, "url": lookup.urls.link(kernel.key)},
            "pass": run.pass_name,
            "implementationLabel": run.provider,
            "gpu": gpu,
            "links": links,
        },
    )
    return Page(path, "run.html", context, twin)


def headline(value: Value) -> Headline:
    numbers = Numbers(value.metric, value.unit)
    centre, low, high = numbers.aligned(value)
    spread = ""
    if value.spread and low and high:
        spread = f"{value.spread[0]} {low} / {value.spread[1]} {high} {numbers.unit}"
    return Headline(
        metric=f"{value.statistic} {metric_name(value.metric)}",
        value=f"{centre} {numbers.unit}",
        exact=exact(value.centre, display_unit("", value.unit)) if numbers.divisor != 1.0 else "",
        spread=spread,
    )


def workload_tables(
    lookup: SiteLookup, digest_value: str
) -> tuple[tuple[Tensor, ...], tuple[Fact, ...]]:
    """A workload's tensors and scalars, as each of its runs' pages shows them."""
    workload = lookup.catalog.get(digest_value, "WorkloadCase")
    if workload is None:
        return (), ()
    spec = workload.spec
    tensors = tuple(
        Tensor(name, " × ".join(str(d) for d in t["shape"]) or "scalar", t["dtype"])
        for name, t in spec["tensors"].items()
    )
    return tensors, scalar_facts(spec)


def reference(lookup: SiteLookup, label: str, digest_value: str, text: str | None = None) -> Fact:
    """A link to a referenced resource, or its digest when the catalog lacks it (exports)."""
    href = lookup.urls.link(digest_value)
    if href is None:
        return Fact(label, f"{digest_value} (not in this catalog)", code=True)
    return Fact(label, text or lookup.link(digest_value).text, href)


def provenance_facts(
    lookup: SiteLookup, run: RunFacts, spec: dict[str, Any], metadata: dict[str, Any]
) -> tuple[Fact, ...]:
    native = spec.get("sourceNative")
    facts: list[Fact] = []
    if native is not None:
        facts.append(Fact("Source", native["source"], code=True))
        repository = attribution_for(native["source"], lookup.reports).repository
        if repository:
            facts.append(Fact("Upstream repository", repository, repository))
        if "benchmark" in native:
            facts.append(Fact("Benchmark", native["benchmark"], code=True))
        if "externalId" in native:
            facts.append(Fact("External id", native["externalId"], code=True))
        for key, value in sorted(native.get("metrics", {}).items()):
            facts.append(Fact(f"Raw {key}", repr(value), code=True))
    facts.append(Fact("Name", run.entry.name, code=True))
    for ref in metadata.get("sourceRefs") or ():
        facts.append(Fact("Source reference", ref["url"], ref["url"]))
    return tuple(facts)
