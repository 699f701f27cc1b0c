"""The page of a workload, implementation, project, protocol or GPU environment: its facts, who
uses it, and its runs (continued on numbered pages past the lookup's runs_per_page)."""

from __future__ import annotations

import json
from typing import NamedTuple

from sitegen.analysis.kernels import RunFacts
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
from sitegen.site.lookup import SiteLookup
from sitegen.site.methodology import GpuPeaks, gpu_peaks
from sitegen.site.records import Fact, FactGroup, Identity, Link, Page, PageMeta, RunRow
from sitegen.site.search import search_tags
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
    users = lookup.users(entry.digest)
    ordered = lookup.resource_runs(entry)
    others = [u for u in users if u.kind != "BenchmarkRun"]
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
    meta = lookup.meta(
        title_of(entry),
        path,
        description(lookup, entry, ordered),
        SECTIONS[kind],
        ordered,
        search=search_tags(lookup, PAGE_KINDS[kind], ordered),
    )
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
    twin = lookup.resource_twin(
        entry,
        usedBy=[
            {"kind": u.kind, "digest": u.digest, "url": lookup.urls.link(u.digest)} for u in users
        ],
    )
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
    said = f"{KIND_WORDS[entry.kind].capitalize()} {title_of(entry)} in kernelindex"
    if not runs:
        return said + "."
    kernels = len({run.kernel_key for run in runs})
    gpus = len({lookup.gpu_label(run.environment) for run in runs})
    return (
        f"{said}: {len(runs):,} run{'s' * (len(runs) != 1)} of {kernels} "
        f"kernel{'s' * (kernels != 1)} on {gpus} GPU{'s' * (gpus != 1)}."
    )


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
