"""The search page (`/search/`, Pagefind's own interface over the index publish/search.py
makes), and what the other pages tell the index: the filters a page is found under, and the
headings with ids that a chart's sub-result links to."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable
from typing import NamedTuple

from sitegen.analysis.kernels import RunFacts, per_kernel
from sitegen.site.format import anchor
from sitegen.site.lookup import SiteLookup
from sitegen.site.records import Page, PageMeta, SearchTags

PATH = "search/"
INDEX_PATH = "pagefind/"
# The filters of the search page, as Pagefind shows their names.
KERNEL, GPU, PASS, IMPLEMENTATION, PAGE = "Kernel", "GPU", "Pass", "Implementation", "Page"
FILTERS = (KERNEL, GPU, PASS, IMPLEMENTATION, PAGE)
DESCRIPTION = (
    "Search kernelindex: kernels, runs, GPUs, workloads and implementations by name, provider, "
    "GPU, dtype and shape words, filtered by kernel, GPU, pass and implementation."
)


class SearchContext(NamedTuple):
    meta: PageMeta
    bundle: str  # href of the index's folder, /pagefind/
    base: str  # what every result's URL starts with: the site's path prefix
    example: str  # words to try, from the catalog's newest run


def search_page(lookup: SiteLookup) -> Page:
    urls = lookup.urls
    example = example_words(lookup)
    meta = lookup.meta("Search", PATH, DESCRIPTION, "search")
    context = SearchContext(meta, urls.href(INDEX_PATH), urls.prefix, example)
    twin = {
        "title": "Search",
        "engine": "Pagefind",
        "index": urls.href(INDEX_PATH),
        "query": urls.href(PATH) + "?q=<words>",
        "filters": list(FILTERS),
        "example": urls.href(PATH) + "?q=" + example.replace(" ", "+"),
        "machineReadable": urls.href("llms.txt"),
    }
    return Page(PATH, "search.html", context, twin)


def example_words(lookup: SiteLookup) -> str:
    """`layernorm h100 fp32`: the kernel, GPU and dtype measured together most often."""
    found: Counter[tuple[str, str, str]] = Counter()
    for counted in lookup.memo(_words_by_kernel)(None).values():
        found.update(counted)
    if not found:
        return "layernorm"
    words = min(found, key=lambda key: (-found[key], key))
    return " ".join(word for word in words if word)


def _words_by_kernel(lookup: SiteLookup, _: None) -> dict[str, Counter[tuple[str, str, str]]]:
    """Each kernel's runs counted by (kernel, GPU model, dtype); with a held analysis, held
    while the kernel is the very same object."""
    analysis = lookup.analysis
    return per_kernel(
        analysis.held, "example words", analysis.kernels, functools.partial(_kernel_words, lookup)
    )


def _kernel_words(lookup: SiteLookup, key: str) -> Counter[tuple[str, str, str]]:
    found: Counter[tuple[str, str, str]] = Counter()
    for run in lookup.kernels[key].runs:
        gpu = lookup.gpu_label(run.environment).split()
        model = gpu[1] if len(gpu) > 1 and gpu[0].lower() in ("nvidia", "amd") else gpu[0]
        found[(run.kernel_title.split(",")[0].lower(), model.lower(), run.shape.dtype)] += 1
    return found


def search_tags(
    lookup: SiteLookup, page: str, runs: Iterable[RunFacts], kernel: str = "", title: str = ""
) -> SearchTags:
    """A page's filters: the kind of page, and the kernels, GPUs, passes and implementations
    of the runs it shows (with `kernel`, a kernel page's own title, runs or none)."""
    found: set[tuple[str, str]] = {(PAGE, page)}
    if kernel:
        found.add((KERNEL, kernel))
    for run in runs:
        found.update(run_tags(lookup, run))
    return SearchTags(tuple(sorted(found)), title)


def run_tags(lookup: SiteLookup, run: RunFacts) -> tuple[tuple[str, str], ...]:
    """The filters a run gives a page that shows it."""
    return (
        (KERNEL, run.kernel_title),
        (GPU, lookup.gpu_label(run.environment)),
        (PASS, run.pass_name),
        (IMPLEMENTATION, lookup.series_of(run).label),
    )


class ChartHeading(NamedTuple):
    id: str  # `chart-layernorm-nvidia-h100-80gb-hbm3-backward-latency-hidden-rows-4096-fp32`
    context: str  # what the heading says besides the chart's title, for search and readers


def chart_heading(
    kernel: str, gpu: str, pass_name: str, words: Iterable[str], taken: set[str]
) -> ChartHeading:
    """A chart's heading: an id of its kernel, GPU, pass, metric and shape words, so a search
    result links straight to it; `taken`, the ids given on the page so far (each once)."""
    found = base = anchor("chart", kernel, gpu, pass_name, *words)
    number = 1
    while found in taken:
        number += 1
        found = f"{base}-{number}"
    taken.add(found)
    return ChartHeading(found, f"{kernel} · {gpu} · {pass_name} pass")
