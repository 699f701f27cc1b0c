"""The sources page: every upstream the catalog's runs come from, with its licence and the
credit it asks for, how much of the catalog is its (runs, kernels, GPUs), and how fresh it is
(its newest run, when its terms were verified, the freshness it promises)."""

from __future__ import annotations

from collections import defaultdict
from typing import NamedTuple

from sitegen.site.format import when
from sitegen.site.home import SourceBlock, source_blocks
from sitegen.site.lookup import SiteLookup
from sitegen.site.records import Fact, Page, PageMeta

INTRO = (
    "Where the numbers come from: each source with its licence and the attribution it asks for "
    "(every page showing its numbers carries it), how much of the catalog it holds and how "
    "fresh it is."
)


class SourceRow(NamedTuple):
    block: SourceBlock
    counts: tuple[Fact, ...]  # runs, kernels, GPUs, runs that did not pass
    freshness: tuple[Fact, ...]  # newest run, terms verified, the freshness promised


class SourcesContext(NamedTuple):
    meta: PageMeta
    intro: str
    sources: tuple[SourceRow, ...]


def sources_page(lookup: SiteLookup) -> Page:
    runs_of: dict[str, list[str]] = defaultdict(list)  # source id → run digests
    for run in lookup.runs.values():
        runs_of[run.source].append(run.digest)
    rows = []
    for block in source_blocks(lookup):
        runs = [lookup.runs[d] for s in block.sources for d in runs_of.get(s, ())]
        counts = [
            Fact("Runs", f"{len(runs):,}"),
            Fact("Kernels", f"{len({r.kernel_key for r in runs}):,}"),
            Fact("GPUs", lookup.gpu_labels({r.environment for r in runs}) or "—"),
        ]
        failed = sum(1 for r in runs if r.status != "passed")
        if failed:
            counts.append(Fact("Runs that did not pass", f"{failed:,}"))
        freshness = []
        if runs:
            freshness.append(Fact("Newest run", when(max(r.observed_at for r in runs))))
            freshness.append(Fact("Oldest run", when(min(r.observed_at for r in runs))))
        report = block.report
        if report is not None and report.verified:
            freshness.append(Fact("Terms verified", report.verified))
        if report is not None and report.freshness_days is not None:
            freshness.append(Fact("Freshness promised", f"within {report.freshness_days} days"))
        rows.append(SourceRow(block, tuple(counts), tuple(freshness)))
    meta = lookup.meta("Sources", "sources/", INTRO, "sources", lookup.runs.values())
    twin = {
        "title": "Sources",
        "sources": [
            {
                "sources": list(row.block.sources),
                "name": row.block.attribution.name,
                "licence": row.block.attribution.licence,
                "attribution": row.block.attribution.copyright,
                "terms": row.block.report.terms if row.block.report else None,
                "termsUrl": row.block.report.url if row.block.report else None,
                **{fact.label: fact.value for fact in row.counts + row.freshness},
            }
            for row in rows
        ],
    }
    return Page("sources/", "sources.html", SourcesContext(meta, INTRO, tuple(rows)), twin)
