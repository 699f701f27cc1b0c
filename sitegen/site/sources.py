"""The sources page: every upstream the catalog's runs come from, with its licence and the
credit it asks for, how much of the catalog is its (runs, kernels, GPUs), and how fresh it is
(its newest run, when its terms were verified, the freshness it promises)."""

from __future__ import annotations

from typing import NamedTuple

from sitegen.site.format import when
from sitegen.site.home import SourceBlock, source_blocks
from sitegen.site.lookup import SiteLookup, merged_tally
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
    tallies = lookup.sources
    rows = []
    for block in source_blocks(lookup):
        found = [tallies[s] for s in block.sources if s in tallies]
        tally = merged_tally(found) if found else None
        counts = [
            Fact("Runs", f"{tally.runs if tally else 0:,}"),
            Fact("Kernels", f"{len(tally.kernels) if tally else 0:,}"),
            Fact("GPUs", lookup.gpu_labels(tally.environments if tally else frozenset()) or "—"),
        ]
        if tally is not None and tally.failed:
            counts.append(Fact("Runs that did not pass", f"{tally.failed:,}"))
        freshness = []
        if tally is not None:
            freshness.append(Fact("Newest run", when(tally.newest)))
            freshness.append(Fact("Oldest run", when(tally.oldest)))
        report = block.report
        if report is not None and report.verified:
            freshness.append(Fact("Terms verified", report.verified))
        if report is not None and report.freshness_days is not None:
            freshness.append(Fact("Freshness promised", f"within {report.freshness_days} days"))
        rows.append(SourceRow(block, tuple(counts), tuple(freshness)))
    meta = lookup.meta("Sources", "sources/", INTRO, "sources")
    meta = meta._replace(attributions=lookup.every_attribution())
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
