"""The page of a workload, implementation, project, protocol or GPU environment: its facts, who
uses it, and its runs (continued on numbered pages past the lookup's runs_per_page)."""

from __future__ import annotations

import functools
import json
from typing import NamedTuple

from sitegen.analysis.kernels import Cohort, Kernel, RunFacts, per_kernel_of_cohorts
from sitegen.content.loaded import LoadedResource
from sitegen.site.facts import (
    implementation_groups,
    project_facts,
    suite_groups,
    workload_groups,
)
from sitegen.site.format import KIND_WORDS, title_of
from sitegen.site.leaderboard import gpu_leaders
from sitegen.site.lists import RUN_LIST_COLUMNS, pager, run_list_page
from sitegen.site.lookup import SiteLookup, run_references
from sitegen.site.methodology import GpuPeaks, gpu_peaks
from sitegen.site.records import (
    Fact,
    FactGroup,
    Identity,
    Link,
    Page,
    PageMeta,
    RunRow,
    SearchTags,
)
from sitegen.site.search import PAGE, run_tags, search_tags
from sitegen.site.urls import SECTIONS
from sitegen.site.verdicts import WinsLine, gpu_wins

# What the search page's "Page" filter calls each kind's pages.
PAGE_KINDS = {
    "WorkloadCase": "Workload",
    "WorkloadSuite": "Workload",
    "ImplementationRevision": "Implementation",
    "SoftwareProject": "Project",
    "BenchmarkProtocol": "Protocol",
    "ExecutionEnvironment": "GPU",
}
# The kinds with a resource page, in the order their pages are planned.
KINDS = (
    "WorkloadCase",
    "WorkloadSuite",
    "ImplementationRevision",
    "SoftwareProject",
    "BenchmarkProtocol",
    "ExecutionEnvironment",
)


class ResourceContext(NamedTuple):
    meta: PageMeta
    kind_word: str
    description: str | None
    groups: tuple[FactGroup, ...]
    notes: str | None  # Markdown: protocol comparability notes
    runs: tuple[RunRow, ...]  # the first page of its runs
    users: tuple[Link, ...]  # non-run users (workloads, implementations)
    users_title: str
    identity: Identity
    run_total: int = 0  # all its runs
    pager: tuple[Link, ...] = ()  # the pages listing the rest; () when `runs` holds them all
    wins: tuple[WinsLine, ...] = ()  # a GPU's: who is fastest where, per kernel and pass
    leaders: tuple[WinsLine, ...] = ()  # a GPU's: who leads each leaderboard measured on it
    peaks: GpuPeaks | None = None  # a GPU's: its row of the reviewed GPU table, or why none


def resource_page(lookup: SiteLookup, entry: LoadedResource) -> Page:
    path = lookup.urls.path_of(entry.digest) or ""
    kind = entry.kind
    users = lookup.used_by(entry.digest)
    ordered = lookup.resource_runs(entry)
    by_digest = lookup.catalog.by_digest
    others = [by_digest[str(u["digest"])] for u in users if u["kind"] != "BenchmarkRun"]
    groups: list[FactGroup] = []
    notes = None
    extra_links: list[Link] = []
    users_title = "Used by"
    wins: tuple[WinsLine, ...] = ()
    leaders: tuple[WinsLine, ...] = ()
    peaks = None
    spec = entry.spec
    if kind == "BenchmarkProtocol":
        groups.append(FactGroup("How it was measured", lookup.protocol_facts(entry.digest)[1:]))
        notes = spec.get("comparability", {}).get("notes")
        if "correctness" in spec:
            correctness = spec["correctness"]
            checked = (
                Fact("Reference", correctness["reference"]),
                Fact("Comparator", correctness["comparator"], code=True),
            )
            groups.append(FactGroup("Correctness", checked))
        if "devicePolicy" in spec:
            policy = tuple(Fact(k, json.dumps(v)) for k, v in spec["devicePolicy"].items())
            groups.append(FactGroup("Device policy", policy))
    elif kind == "ExecutionEnvironment":
        facts = lookup.environment_facts(entry.digest)[1:]
        groups.append(FactGroup("Hardware and software", facts))
        wins = gpu_wins(lookup, entry.digest)
        leaders = gpu_leaders(lookup, entry.digest)
        peaks = gpu_peaks(lookup, entry.digest)
    elif kind == "WorkloadCase":
        operation = spec["operationSpecDigest"]
        kernel = lookup.kernel_link(operation)
        groups += workload_groups(spec, kernel, operation in lookup.kernels)
    elif kind == "WorkloadSuite":
        operation = spec["operationSpecDigest"]
        kernel = lookup.kernel_link(operation)
        groups += suite_groups(spec, kernel, operation in lookup.kernels)
    elif kind == "ImplementationRevision":
        operation = spec["operation"]["specDigest"]
        kernel = lookup.kernel_link(operation)
        project = lookup.projects.get(entry.digest)
        groups += implementation_groups(entry, kernel, operation in lookup.kernels, project)
    elif kind == "SoftwareProject":
        groups.append(FactGroup("Project", project_facts(spec)))
        users_title = "Implementations"
        extra_links = [lookup.link(d) for d in lookup.project_implementations(entry)]
    if lookup.analysis.held is None:
        meta = lookup.meta(
            title_of(entry),
            path,
            description(lookup, entry, ordered),
            SECTIONS[kind],
            ordered,
            search=search_tags(lookup, PAGE_KINDS[kind], ordered),
        )
    else:
        meta = _held_meta(lookup, entry, path, len(ordered))
    used_by = [
        Link(f"{KIND_WORDS[u.kind]}: {title_of(u)}", lookup.urls.link(u.digest)) for u in others
    ]
    context = ResourceContext(
        meta=meta,
        kind_word=KIND_WORDS[kind],
        description=entry.metadata.get("description"),
        groups=tuple(g for g in groups if g.facts),
        notes=notes,
        runs=tuple(lookup.run_row(r) for r in ordered[: lookup.runs_per_page]),
        users=(*extra_links, *used_by),
        users_title=users_title,
        identity=lookup.identity(entry),
        run_total=len(ordered),
        pager=pager(lookup, lookup.resource_page_paths(entry), 1),
        wins=wins,
        leaders=leaders,
        peaks=peaks,
    )
    twin = lookup.resource_twin(entry, usedBy=users)
    if wins:
        twin["wins"] = [
            {
                "kernel": w.kernel.href,
                "pass": w.pass_name,
                "section": w.section.href,
                "text": w.text,
            }
            for w in wins
        ]
    if leaders:
        twin["leaderboards"] = [
            {
                "kernel": w.kernel.href,
                "board": w.section.href,
                "measured": w.pass_name,
                "text": w.text,
            }
            for w in leaders
        ]
    if peaks is not None:
        twin["peaks"] = {
            "note": peaks.note,
            "rows": [
                {"form": r.form, "bandwidth": r.bandwidth, "source": r.source.href}
                for r in peaks.rows
            ],
        }
    if kind == "SoftwareProject":
        twin["implementations"] = [link.href for link in extra_links]
    return Page(path, "resource.html", context, twin)


def description(lookup: SiteLookup, entry: LoadedResource, runs: list[RunFacts]) -> str:
    """`GPU environment NVIDIA H100 80GB HBM3 in kernelindex: 40 runs of 2 kernels on 1 GPU.`"""
    kernels = len({run.kernel_key for run in runs})
    gpus = len({lookup.gpu_label(run.environment) for run in runs})
    return _described(entry, len(runs), kernels, gpus)


def _described(entry: LoadedResource, runs: int, kernels: int, gpus: int) -> str:
    said = f"{KIND_WORDS[entry.kind].capitalize()} {title_of(entry)} in kernelindex"
    if not runs:
        return said + "."
    return (
        f"{said}: {runs:,} run{'s' * (runs != 1)} of {kernels} "
        f"kernel{'s' * (kernels != 1)} on {gpus} GPU{'s' * (gpus != 1)}."
    )


class RunsTally(NamedTuple):
    """What a resource page's head says of its runs, beside their count."""

    tags: frozenset[tuple[str, str]]  # `run_tags` of each
    sources: frozenset[str]
    kernels: frozenset[str]
    environments: frozenset[str]


def _held_meta(lookup: SiteLookup, entry: LoadedResource, path: str, runs: int) -> PageMeta:
    """`resource_page`'s head with a held analysis: its description, credits and search tags
    from its runs' tallies, held per kernel (`_tallies_by_kernel`), where reading a GPU's
    or a protocol's ~15k or ~100k runs took ~0.1 s a page at 100k runs."""
    by_kernel = lookup.memo(_tallies_by_kernel)(None)
    digests = lookup.run_sources(entry)
    parts = [
        tally for by_digest in by_kernel.values() for d in digests if (tally := by_digest.get(d))
    ]
    tally = RunsTally(
        frozenset().union(*(part.tags for part in parts)),
        frozenset().union(*(part.sources for part in parts)),
        frozenset().union(*(part.kernels for part in parts)),
        frozenset().union(*(part.environments for part in parts)),
    )
    gpus = len({lookup.gpu_label(environment) for environment in tally.environments})
    meta = lookup.meta(
        title_of(entry),
        path,
        _described(entry, runs, len(tally.kernels), gpus),
        SECTIONS[entry.kind],
        search=SearchTags(tuple(sorted({(PAGE, PAGE_KINDS[entry.kind]), *tally.tags})), ""),
    )
    return meta._replace(attributions=lookup.credits(tally.sources))


def held_tallies(lookup: SiteLookup) -> None:
    """Every kernel's tallies (`_tallies_by_kernel`) made where the held analysis holds none
    yet (`SiteLookup.held_first`): the resource pages' heads."""
    lookup.held_first(TALLIES, _tallies_by_kernel)


TALLIES = "resource tallies"  # what the held analysis holds the resource pages' tallies by


def _tallies_by_kernel(lookup: SiteLookup, _: None) -> dict[str, dict[str, RunsTally]]:
    """Each kernel's runs tallied by the resources they reference (by digest), held while the
    kernel is the very same object, and each cohort's part while its runs are."""
    part = functools.partial(_cohort_tallies, lookup)
    return per_kernel_of_cohorts(lookup.analysis, TALLIES, part, _kernel_tallies)


# What the runs referencing a resource are tagged with, come from and measured on: as
# tallied, and while being tallied.
_Tallied = tuple[frozenset[tuple[str, str]], frozenset[str], frozenset[str]]
_Tallying = tuple[set[tuple[str, str]], set[str], set[str]]


def _tallying(found: dict[str, _Tallying], digest: str) -> _Tallying:
    tally = found.get(digest)
    if tally is None:
        tally = found[digest] = (set(), set(), set())
    return tally


def _cohort_tallies(
    lookup: SiteLookup, kernel: Kernel, runs: list[RunFacts]
) -> dict[str, _Tallied]:
    found: dict[str, _Tallying] = {}
    for run in runs:
        tags = run_tags(lookup, run)
        for digest in run_references(run):
            tally = _tallying(found, digest)
            tally[0].update(tags)
            tally[1].add(run.source)
            tally[2].add(run.environment)
    return {
        digest: (frozenset(tags), frozenset(sources), frozenset(environments))
        for digest, (tags, sources, environments) in found.items()
    }


def _kernel_tallies(
    kernel: Kernel, parts: list[tuple[Cohort, dict[str, _Tallied]]]
) -> dict[str, RunsTally]:
    found: dict[str, _Tallying] = {}
    for _, by_digest in parts:
        for digest, (tags, sources, environments) in by_digest.items():
            tally = _tallying(found, digest)
            tally[0].update(tags)
            tally[1].update(sources)
            tally[2].update(environments)
    kernels = frozenset({kernel.key})
    return {
        digest: RunsTally(frozenset(tags), frozenset(sources), kernels, frozenset(environments))
        for digest, (tags, sources, environments) in found.items()
    }


def resource_continuation(lookup: SiteLookup, entry: LoadedResource, number: int) -> Page:
    """Page `number` (from 2) of a resource's runs."""
    title = title_of(entry)
    paths = lookup.resource_page_paths(entry)
    return run_list_page(
        lookup,
        paths[number - 1],
        f"{title} · runs",
        f"The runs of {KIND_WORDS[entry.kind]} {title}, as on its page.",
        SECTIONS[entry.kind],
        lookup.resource_runs(entry),
        paths,
        number,
        RUN_LIST_COLUMNS,
        {"of": lookup.urls.link(entry.digest)},
    )
