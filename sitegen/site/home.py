"""The home page: what the catalog holds, its kernels and GPUs, whom it credits, newest runs."""

from __future__ import annotations

import functools
import operator
from collections import defaultdict
from typing import NamedTuple

from sitegen.analysis.kernels import Kernel, derived
from sitegen.content.reports import Attribution, SourceReport, report_matches
from sitegen.model.wording import counted
from sitegen.site.credits import attribution_for
from sitegen.site.format import when
from sitegen.site.lookup import SiteLookup
from sitegen.site.quality import share, unmarked_share
from sitegen.site.records import Fact, Link, Page, PageMeta, RunRow
from sitegen.site.urls import DATA_QUALITY

HOME_RECENT = 10
DESCRIPTION = (
    "Which GPU kernel implementation is fastest for an operation, on which GPU, "
    "at which shape, and how it was measured."
)
_COUNTED = (
    ("GPUs", "ExecutionEnvironment", "gpus/"),
    ("Implementations", "ImplementationRevision", "implementations/"),
    ("Runs", "BenchmarkRun", "runs/"),
    ("Workloads", "WorkloadCase", "workloads/"),
    ("Protocols", "BenchmarkProtocol", "protocols/"),
    ("Projects", "SoftwareProject", "projects/"),
)


class KernelRow(NamedTuple):
    kernel: Link
    implementations: int
    gpus: str
    passes: str
    runs: int
    newest: str


class SourceBlock(NamedTuple):
    """An upstream credited: its runs, and what its import reports say."""

    attribution: Attribution
    runs: int
    facts: tuple[Fact, ...]
    reasons: tuple[tuple[str, int], ...]  # why rows were skipped, most frequent first
    sources: tuple[str, ...] = ()  # the `sourceNative.source` ids it credits
    report: SourceReport | None = None  # the first import report describing it

    @property
    def runs_counted(self) -> str:
        return counted(self.runs, "run")


class HomeContext(NamedTuple):
    meta: PageMeta
    counts: tuple[Fact, ...]
    newest: RunRow | None
    kernels: tuple[KernelRow, ...]
    gpus: tuple[Fact, ...]
    sources: tuple[SourceBlock, ...]
    recent: tuple[RunRow, ...]
    # `87.5 %` of runs carry no data-quality mark, linked to the data-quality page
    unmarked: Link | None = None


def home_page(lookup: SiteLookup) -> Page:
    runs = lookup.analysis.newest
    kernels = lookup.analysis.kernels
    catalog, urls = lookup.catalog, lookup.urls
    sources = source_blocks(lookup)
    counts = [Fact("Kernels", f"{len(kernels):,}", urls.href("kernels/"))]
    for label, kind, path in _COUNTED:
        count = len(lookup.runs) if kind == "BenchmarkRun" else len(catalog.of_kind(kind))
        counts.append(Fact(label, f"{count:,}", urls.href(path)))
    counts.append(Fact("Sources", f"{len(sources):,}"))
    environments = sorted(
        catalog.of_kind("ExecutionEnvironment"),
        key=lambda e: (lookup.gpu_label(e.digest), e.digest),
    )
    gpus = tuple(
        Fact(
            lookup.gpu_label(e.digest),
            f"{lookup.run_counts[e.digest]:,} runs",
            urls.link(e.digest),
        )
        for e in environments
    )
    # Every run's credits, summed by source, not read from each run.
    meta = lookup.meta("kernelindex", "", DESCRIPTION, "")._replace(
        attributions=lookup.every_attribution()
    )
    # Planned first, in the main process: the marks are made here, once, before any fork.
    unmarked, total = unmarked_share(lookup)
    context = HomeContext(
        meta=meta,
        counts=tuple(counts),
        newest=lookup.run_row(runs[0]) if runs else None,
        kernels=tuple(kernel_row(lookup, k) for k in kernels),
        gpus=gpus,
        sources=sources,
        recent=tuple(lookup.run_row(r) for r in runs[:HOME_RECENT]),
        unmarked=Link(share(unmarked, total), urls.href(DATA_QUALITY)) if total else None,
    )
    twin = {
        "counts": {f.label.lower(): int(f.value.replace(",", "")) for f in counts},
        "newest": runs[0].digest if runs else None,
        "runsWithoutMark": unmarked,
        "kernels": [
            {"title": k.title, "url": urls.link(k.key), "runs": len(k.runs)} for k in kernels
        ],
        "sources": [
            {"source": s.attribution.source, "attribution": s.attribution.text, "runs": s.runs}
            for s in sources
        ],
    }
    return Page("", "home.html", context, twin)


def kernel_row(lookup: SiteLookup, kernel: Kernel) -> KernelRow:
    # Held for a kernel that is the same object (`sitegen serve`): ~0.1 s at 100k runs to read.
    newest = derived(
        lookup.analysis.held, "newest", kernel, None, functools.partial(_newest, kernel)
    )
    return KernelRow(
        kernel=Link(kernel.title, lookup.urls.link(kernel.key)),
        implementations=len(kernel.series),
        gpus=lookup.gpu_labels(kernel.environments),
        passes=", ".join(kernel.pass_names),
        runs=len(kernel.runs),
        newest=when(newest) if newest else "—",
    )


def _newest(kernel: Kernel) -> str:
    return max(map(operator.attrgetter("observed_at"), kernel.runs), default="")


def source_blocks(lookup: SiteLookup) -> tuple[SourceBlock, ...]:
    """One block per upstream credited, then one per import report no run's source matches."""
    reports = lookup.reports
    by_attribution: dict[Attribution, int] = defaultdict(int)
    for source, count in lookup.source_counts.items():
        if source:
            by_attribution[attribution_for(source, reports)] += count
    # Sources differing only by backend tag share one upstream and one credit line.
    merged: dict[tuple[str, str, str, str | None], tuple[list[str], int]] = {}
    for attribution, count in by_attribution.items():
        key = (attribution.name, attribution.licence, attribution.copyright, attribution.repository)
        sources, total = merged.get(key, ([], 0))
        merged[key] = ([*sources, attribution.source], total + count)
    blocks = []
    used: set[str] = set()
    for (name, licence, copyright_text, repository), (sources, count) in sorted(
        merged.items(), key=lambda item: (item[0][0], item[0][3] or "")
    ):
        attribution = Attribution(min(sources), name, licence, copyright_text, repository)
        facts = [Fact("Source ids", ", ".join(sorted(sources)), code=True)]
        reasons: tuple[tuple[str, int], ...] = ()
        described: SourceReport | None = None
        for file_name, report in sorted(reports.items()):
            if not any(report_matches(report, attribution_for(s)) for s in sources):
                continue
            used.add(file_name)
            facts += report_facts(report, file_name)
            reasons = reasons or report.reasons
            described = described or report
        blocks.append(
            SourceBlock(
                attribution, count, tuple(facts), reasons, tuple(sorted(sources)), described
            )
        )
    for file_name, report in sorted(reports.items()):
        if file_name in used:
            continue
        attribution = Attribution(
            report.source or file_name,
            report.name or file_name,
            report.licence or "",
            report.copyright or "",
            report.repository,
        )
        shown = tuple(report_facts(report, file_name))
        blocks.append(SourceBlock(attribution, 0, shown, report.reasons, (), report))
    return tuple(blocks)


def report_facts(report: SourceReport, path: str) -> list[Fact]:
    """`path`: the report's key in the site's reports (`_sources/` is implied for a bare name)."""
    shown = path if "/" in path else f"_sources/{path}"
    facts = [Fact("Import report", shown, code=True)]
    if report.repository:
        facts.append(Fact("Upstream repository", report.repository, report.repository))
    if report.commit:
        facts.append(Fact("Upstream commit", report.commit, code=True))
    if report.licence:
        facts.append(Fact("Licence (as reported)", report.licence))
    if report.terms:
        facts.append(Fact("Terms", report.terms, report.url))
    if report.verified:
        facts.append(Fact("Terms verified", report.verified))
    facts += [Fact(label, text, link) for label, text, link in report.facts]
    if report.skipped is not None:
        facts.append(Fact("Rows skipped", f"{report.skipped:,}"))
    return facts
