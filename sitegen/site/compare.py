"""The compare page: `/compare/?runs=<id>,<id>…`, 2 to 8 runs side by side.

The page is static; its script (templates/assets/compare.js) reads `?runs=`, fetches each run's
JSON twin and, from the links in it, the twins of its implementation, workload, protocol and
environment, aligns their fields and marks each that differs. Runs are comparable as the
kernel pages rank them: the same workload, protocol and environment (one cohort), else the page
says which differs. Links to it come from run pages and kernel pages (`compare_href`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from sitegen.analysis.kernels import RunFacts
from sitegen.model.digest import short
from sitegen.site.lookup import SiteLookup
from sitegen.site.records import Page, PageMeta
from sitegen.site.urls import RUN_ID_HEX, json_twin, run_path

PATH = "compare/"
MIN_RUNS, MAX_RUNS = 2, 8
DESCRIPTION = (
    "Compare 2 to 8 kernelindex runs side by side: kernel, workload, protocol, environment and "
    "software aligned, every field that differs marked, and the ratio of runs that are comparable."
)


class CompareContext(NamedTuple):
    meta: PageMeta
    base: str  # the site's path prefix: a run's twin is at <base>runs/<id>/index.json
    min_runs: int
    max_runs: int
    example: str  # a comparison to try (a cohort of the newest run); "" when there is none


def compare_href(lookup: SiteLookup, runs: Sequence[RunFacts]) -> str:
    """The compare page with these runs side by side, in this order (the first MAX_RUNS);
    "" for fewer than two."""
    ids = [short(run.digest, RUN_ID_HEX) for run in runs[:MAX_RUNS]]
    if len(ids) < MIN_RUNS:
        return ""
    return lookup.urls.href(PATH) + "?runs=" + ",".join(ids)


def compare_hrefs(lookup: SiteLookup, run: RunFacts, others: Sequence[RunFacts]) -> list[str]:
    """`compare_href(lookup, [run, other])` for each of `others`, its part before the other
    run's id made once: a run page links each of its cohort's rows."""
    before = lookup.urls.href(PATH) + "?runs=" + short(run.digest, RUN_ID_HEX) + ","
    return [before + short(other.digest, RUN_ID_HEX) for other in others]


def compare_page(lookup: SiteLookup) -> Page:
    urls = lookup.urls
    example = ""
    newest = lookup.analysis.newest
    if newest:
        cohort = lookup.analysis.cohorts.get(newest[0].cohort, ())
        example = compare_href(lookup, sorted(cohort, key=lambda r: r.digest))
    meta = lookup.meta("Compare runs", PATH, DESCRIPTION, "")
    context = CompareContext(meta, urls.prefix, MIN_RUNS, MAX_RUNS, example)
    twin = {
        "title": "Compare runs",
        "query": urls.href(PATH) + "?runs=<id>,<id>",
        "runs": {
            "min": MIN_RUNS,
            "max": MAX_RUNS,
            "id": f"the first {RUN_ID_HEX} hex digits of a run's digest (its page's address), "
            "or the whole sha256 digest",
        },
        "runTwin": urls.href(json_twin(run_path("sha256:<id>"))),
        "comparable": "the same workload, protocol and environment",
        "example": example or None,
    }
    return Page(PATH, "compare.html", context, twin)
