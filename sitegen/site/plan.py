"""The site as planned: every page, in path order, with the site-wide files.

Pages are planned where they are rendered (`LazyPage`): in the render workers on a big site.
Each reads the shared `SiteLookup`, never another page. In an incremental build each lazy page
has a key naming what it shows (its own resource and the runs on it; everything else is in the
site-wide fingerprint, publish/incremental.py), so an unchanged page is neither planned nor
rendered.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import operator
from collections.abc import Hashable, Iterable, Sequence
from typing import Any, NamedTuple

from sitegen.analysis.kernels import (
    HeldAnalysis,
    Kernel,
    RunFacts,
    Same,
    per_group,
    same_objects,
)
from sitegen.content.loaded import LoadedResource
from sitegen.site.changes import banner, changes_page, has_changes_page, previewed
from sitegen.site.compare import compare_page
from sitegen.site.feed import feed, not_found_page, sitemap
from sitegen.site.history import every_step, history_pages, kernel_history, step_key
from sitegen.site.home import home_page
from sitegen.site.kernel import kernel_page
from sitegen.site.leaderboard import leaderboard_page
from sitegen.site.lists import list_pages
from sitegen.site.llms import llms_txt
from sitegen.site.lookup import SiteInputs, SiteLookup, run_references
from sitegen.site.methodology import methodology_page
from sitegen.site.quality import marks_key, quality_page, series_qualities
from sitegen.site.records import LazyPage, Page, Planner, Site, held_planner, kept_pages
from sitegen.site.regressions import regressions_feed, regressions_page
from sitegen.site.resource import KINDS, held_tallies, resource_continuation, resource_page
from sitegen.site.run import run_key, run_page
from sitegen.site.search import search_page
from sitegen.site.sources import sources_page
from sitegen.site.verdicts import held_gpu_wins, leaderboard_kernel
from sitegen.superseded import asking_every, stop_if_superseded


class KernelKeys(NamedTuple):
    """A kernel's page key and its runs' (run digest → key)."""

    page: str | None
    runs: dict[str, str | None]


def run_pages(
    lookup: SiteLookup,
    runs: Iterable[RunFacts],
    held: dict[str, KernelKeys] | None = None,
    placed: bool = True,
    planner: Planner | None = None,
) -> list[LazyPage]:
    """The pages of these runs, as the site plans them; `held`: their keys, made already;
    `placed`: each with its place in memory, for render workers to take in that order;
    `planner`: the one that plans them (a new one, by default)."""
    # Where each run sits in load order (its document's place in memory): ~0.04 s at 100k.
    loaded = lookup.memo(_load_order)("") if placed else {}
    plan_run = planner or Planner(run_page, lookup)
    urls = lookup.urls
    return [
        LazyPage(
            urls.path_of(r.digest) or "",
            "run.html",
            plan_run,
            run_key(lookup, r) if held is None else held[r.kernel_key].runs[r.digest],
            locality=loaded.get(r.digest, -1),
            subject=r,
        )
        for r in runs
    ]


def kernel_pages(
    lookup: SiteLookup, kernels: Iterable[Kernel], held: dict[str, KernelKeys] | None = None
) -> list[LazyPage]:
    """The pages of these kernels (a leaderboard's where its runs are ranked), as the site
    plans them; `held`: their keys, made already."""
    urls = lookup.urls
    pages = []
    for k in kernels:
        ranks = lookup.memo(leaderboard_kernel)(k.key)
        pages.append(
            LazyPage(
                urls.path_of(k.key) or "",
                "leaderboard.html" if ranks else "kernel.html",
                functools.partial(leaderboard_page if ranks else kernel_page, lookup, k),
                _kernel_key(lookup, k) if held is None else held[k.key].page,
            )
        )
    return pages


def _kernel_key(lookup: SiteLookup, kernel: Kernel) -> str | None:
    return lookup.page_key("kernel", kernel.key, marks_key(lookup, kernel.runs), runs=kernel.runs)


def held_keys(lookup: SiteLookup) -> dict[str, KernelKeys] | None:
    """With `sitegen serve`'s held analysis, each kernel's page key and its runs' keys, made
    again only for a kernel where something they read changed since the last build (~1 s
    at 100k runs for all of them): the kernel's runs, its series' names, the rankings of its
    runs' cohorts, its series' marks, the causes of its history's steps. None otherwise."""
    held = lookup.analysis.held
    if held is None or not lookup.inputs.keyed:
        return None
    steps = every_step(lookup)
    qualities = series_qualities(lookup)
    ranked = held_ranked_signatures(lookup)
    groups: dict[str, tuple[tuple[Any, ...], Hashable]] = {}
    for kernel in lookup.analysis.kernels:
        stop_if_superseded()
        cohorts, series = held.derived("cohorts", kernel, None, functools.partial(_parts, kernel))
        extra = (
            lookup.kernel_signature(kernel.key),
            tuple(ranked[c] for c in cohorts),
            tuple(Same(qualities[s]) for s in series),
            tuple(steps.causes[step_key(i)] for i in kernel_history(lookup, kernel.key).found),
        )
        groups[kernel.key] = ((kernel,), extra)

    def make(key: str) -> KernelKeys:
        kernel = lookup.kernels[key]
        runs = {r.digest: run_key(lookup, r) for r in kernel.runs}
        return KernelKeys(_kernel_key(lookup, kernel), runs)

    return per_group(held, "keys", groups, make)


def held_run_pages(lookup: SiteLookup, held: dict[str, KernelKeys]) -> list[LazyPage]:
    """`run_pages` of every run, with `sitegen serve`'s held analysis (`held`: `held_keys`):
    a kernel's are the last build's page objects while its keys are the very same object,
    which `held_keys` makes again whenever anything its run pages show changed (~0.3 s at
    100k runs to plan them all)."""
    analysis = lookup.analysis.held
    assert analysis is not None  # `held_keys` is None without it
    planner = held_planner(analysis, "run pages", run_page, lookup)
    groups: dict[str, tuple[tuple[Any, ...], Hashable]] = {
        kernel.key: ((held[kernel.key],), None) for kernel in lookup.analysis.kernels
    }

    made = 0
    # Each page's place in memory, for render workers: where every run page is made (the
    # first build), not for a few kernels' (a map of every resource's place, ~0.05 s at 100k).
    placed = not analysis.groups.get("run pages")

    last = analysis.groups.get("run pages", {})

    def make(key: str) -> list[LazyPage]:
        nonlocal made
        runs = lookup.kernels[key].runs
        if made // RUNS_BETWEEN != (made + len(runs)) // RUNS_BETWEEN:
            stop_if_superseded()  # as `run_pages` of all runs asks: every ~RUNS_BETWEEN
        made += len(runs)
        pages = run_pages(lookup, runs, held, placed, planner)
        held_pages = last.get(key)
        if held_pages is None:
            return pages
        # A page of a run that is the very same object, with the same key and path, is the
        # last build's page: skipped on sight, where it bears that build's mark (the edited
        # run's kernel's other pages, ~2,600 at 100k runs: ~0.03 s of look-ups).
        before = {id(page.subject): page for page in held_pages[2]}
        return [_as_before(page, before.get(id(page.subject))) for page in pages]

    pages: list[LazyPage] = []
    for kernel_pages_of_runs in per_group(analysis, "run pages", groups, make).values():
        pages += kernel_pages_of_runs
    return pages


def _as_before(page: LazyPage, before: LazyPage | None) -> LazyPage:
    """`before` where it is the same page (its run the very same object, its key and path
    the same), else `page`."""
    if (
        before is None
        or before.subject is not page.subject
        or before.key is None
        or before.key != page.key
        or before.path != page.path
    ):
        return page
    return before


def _parts(kernel: Kernel) -> tuple[list[tuple[str, str, str]], list[str]]:
    """A kernel's cohorts and series keys, each in order."""
    return sorted({r.cohort for r in kernel.runs}), sorted({r.series_key for r in kernel.runs})


def held_ranked_signatures(lookup: SiteLookup) -> dict[tuple[str, str, str], str]:
    """Each cohort's `ranked_signature`, with `sitegen serve`'s held analysis: made again only
    for a cohort whose runs are not the very same objects as at the last build, or one of
    whose kernels' `kernel_signature` changed (~0.2 s at 100k runs for all of them)."""
    held, cohorts = lookup.analysis.held, lookup.analysis.cohorts
    same_runs: dict[tuple[str, str, str], tuple[tuple[Any, ...], Hashable]] = {
        cohort: (runs, None) for cohort, runs in cohorts.items()
    }

    def kernels_of(cohort: tuple[str, str, str]) -> tuple[str, ...]:
        return tuple(sorted({run.kernel_key for run in cohorts[cohort]}))

    kernels = per_group(held, "cohort kernels", same_runs, kernels_of)
    signature = lookup.kernel_signature
    groups: dict[tuple[str, str, str], tuple[tuple[Any, ...], Hashable]] = {
        cohort: (runs, tuple(map(signature, kernels[cohort]))) for cohort, runs in cohorts.items()
    }
    return per_group(held, "ranked", groups, lookup.ranked_signature)


def _load_order(lookup: SiteLookup, _: str) -> dict[str, int]:
    return {digest: number for number, digest in enumerate(lookup.catalog.by_digest)}


def _resource_keys(
    lookup: SiteLookup,
    entry: LoadedResource,
    pages: int,
    signatures: list[str] | None = None,
) -> list[str | None]:
    """The keys of a resource's page and of its list's continuations (all None unless keyed):
    a continuation shows its own slice of the runs (`runs_signature`, or `signatures`, one
    a page, made already), and how many there are; the first page, what it says of them all
    (their slices' signatures)."""
    if not lookup.inputs.keyed:
        return [None] * pages
    # Put in order (a sort per resource) only for an incremental build's keys; otherwise
    # where the page is planned, in a render worker.
    shown = lookup.resource_runs(entry)
    if signatures is None:
        signatures = [lookup.runs_signature(lookup.page_of(shown, n)) for n in range(1, pages + 1)]
    count, key = str(len(shown)), lookup.signed_key
    keys: list[str | None] = [key("r", entry.digest, count, signature="".join(signatures))]
    keys += [
        key(f"r{n}", entry.digest, count, signature=signatures[n - 1]) for n in range(2, pages + 1)
    ]
    return keys


def held_resource_keys(lookup: SiteLookup) -> dict[str, list[str | None]] | None:
    """With `sitegen serve`'s held analysis, each resource's page keys (`_resource_keys`, by
    its digest), made again only for a resource with other runs or where a kernel's series
    changed (~0.25 s at 100k runs for all of them). None otherwise.

    A resource whose runs (or, a project's, whose implementations' runs) include none of the
    runs new, changed or gone since its keys were made (`HeldAnalysis.unlisted`) lists the
    very same runs in the same order (the held listed order moves only those): its last keys
    are taken without its list being made (~0.2 s at 100k runs for all of them)."""
    held = lookup.analysis.held
    if held is None or not lookup.inputs.keyed:
        return None
    # What a list shows of each run's kernel, beside the runs: `runs_signature`.
    kernels = tuple(lookup.kernel_signature(k.key) for k in lookup.analysis.kernels)
    touched: set[str] = set()
    for run in held.unlisted:
        touched.update(run_references(run))
    last = held.groups.get("resources", {})
    held_kernels = next(iter(last.values()))[1] if last else None
    if held_kernels == kernels:  # compared once, not once a resource (~6k signatures each)
        kernels = held_kernels
    groups: dict[str, tuple[tuple[Any, ...], Hashable]] = {}
    kept: dict[str, tuple[tuple[Any, ...], Hashable, Any]] = {}
    entries: dict[str, LoadedResource] = {}
    for kind in KINDS:
        for entry in lookup.catalog.of_kind(kind):
            found = last.get(entry.digest)
            if (
                found is not None
                and found[1] is kernels
                and touched.isdisjoint(lookup.run_sources(entry))
            ):
                kept[entry.digest] = found
                continue
            groups[entry.digest] = (tuple(lookup.resource_runs(entry)), kernels)
            entries[entry.digest] = entry

    # Each page's slice of a list, with its signature, held while it is the very same runs.
    sliced_with, slices = held.slices
    if sliced_with is not kernels:
        slices = {}

    def make(digest: str) -> list[str | None]:
        stop_if_superseded()  # a protocol's ~100k runs at 100k
        entry = entries[digest]
        shown = lookup.resource_runs(entry)
        held_slices = slices.get(digest, [])
        now = []
        for number in range(1, lookup.page_count(len(shown)) + 1):
            part = tuple(lookup.page_of(shown, number))
            if number <= len(held_slices) and same_objects(held_slices[number - 1][0], part):
                now.append(held_slices[number - 1])
            else:
                now.append((part, lookup.runs_signature(part)))
        slices[digest] = now
        return _resource_keys(lookup, entry, len(now), [signature for _, signature in now])

    made = per_group(held, "resources", groups, make)
    held.groups["resources"].update(kept)
    for digest in slices.keys() - held.groups["resources"].keys():
        del slices[digest]  # a resource gone
    held.slices = (kernels, slices)
    held.unlisted = []
    return {**{digest: item[2] for digest, item in kept.items()}, **made}


def resource_pages(
    lookup: SiteLookup,
    entry: LoadedResource,
    paths: Sequence[str],
    keys: Sequence[str | None],
    planner: Planner | None = None,
) -> list[LazyPage]:
    """A resource's page and the pages that list the rest of its runs (`paths`, `keys`: a
    page each), planned by `planner` (a new one, by default)."""
    plan = planner or Planner(_resource_page, lookup)
    templates = ("resource.html", *("list.html" for _ in paths[1:]))
    return [
        LazyPage(path, template, plan, key, subject=(entry, number))
        for number, (path, template, key) in enumerate(
            zip(paths, templates, keys, strict=True), start=1
        )
    ]


def _resource_page(lookup: SiteLookup, page: tuple[LoadedResource, int]) -> Page:
    entry, number = page
    return (
        resource_page(lookup, entry)
        if number == 1
        else resource_continuation(lookup, entry, number)
    )


def held_resource_pages(lookup: SiteLookup, held: dict[str, list[str | None]]) -> list[LazyPage]:
    """`resource_pages` of every resource, with `sitegen serve`'s held analysis (`held`:
    `held_resource_keys`): a resource's are the last build's page objects while it is the
    very same resource and its keys the very same list, which `held_resource_keys` makes
    again whenever anything its pages show changed. Skipped on sight, where they bear the
    last build's mark (~1,400 resources' pages at 100k runs: ~0.07 s of look-ups)."""
    analysis = lookup.analysis.held
    assert analysis is not None  # `held_resource_keys` is None without it
    planner = held_planner(analysis, "resource pages", _resource_page, lookup)
    last, now = analysis.pages.get("resources", {}), {}
    pages: list[LazyPage] = []
    for kind in KINDS:
        for entry in lookup.catalog.of_kind(kind):
            stop_if_superseded()  # as the unheld plan asks
            keys = held[entry.digest]
            found = last.get(entry.digest)
            if found is None or found[0] is not entry or found[1] is not keys:
                # A key a page: how many pages, without the list made where it is held.
                paths = lookup.resource_page_paths(entry, len(keys))
                made = resource_pages(lookup, entry, paths, keys, planner)
                if found is not None and found[0] is entry:  # its pages of unchanged keys
                    made = kept_pages(made, found[2])
                found = (entry, keys, made)
            now[entry.digest] = found
            pages += found[2]
        stop_if_superseded()
    analysis.pages["resources"] = now
    return pages


RUNS_BETWEEN = 10_000  # run pages planned between two asks whether a newer change waits


_PATH = operator.attrgetter("path")  # a page's path, read in C


def in_path_order(pages: list[Page | LazyPage], held: HeldAnalysis | None) -> list[Page | LazyPage]:
    """`pages` sorted by path; with `sitegen serve`'s held analysis, sorted starting from the
    order that sorted the last build's pages (the site plans its pages in a fixed order, so
    that order nearly sorts this build's: an edited run's page alone has a new path, its
    digest's), which Python's sort takes in about one comparison a page. ~0.075 s at 100k
    runs' pages, most of it reading each page and path in that order (cache misses), against
    ~0.14 s to keep the last order by the pages' ids; sorted from the planned order, ~0.1 s
    (the run pages come a kernel at a time, in no order of their paths). Pages of one path (a
    clash, refused later) may come in either order."""
    if held is None:
        return sorted(pages, key=_PATH)
    order = path_order_patched(held, pages)
    if order is None:
        paths = list(map(_PATH, pages))
        last = held.path_order
        if len(last) == len(paths):
            start = last
        elif len(last) < len(paths):  # pages added: a stretch of places moved on, nearly sorted
            start = [*last, *range(len(last), len(paths))]
        else:
            start = [place for place in last if place < len(paths)]
        order = sorted(start, key=paths.__getitem__)
        held.path_sorted = list(map(paths.__getitem__, order))
    held.path_order, held.path_pages = order, tuple(pages)
    return list(map(pages.__getitem__, order))


def path_order_patched(held: HeldAnalysis, pages: list[Page | LazyPage]) -> list[int] | None:
    """The last build's `path_order` where the planned pages are its pages, in its order, but
    for a few new objects (~300 an edit at 100k runs' pages: a changed run's kernel, lists
    and resources), each taken out of it by its last path and put back in by its new one
    (bisected in `path_sorted`): ~0.005 s, where reading every page's path again in that
    order took ~0.08 s. None where pages came or went, or more than an eighth are new."""
    last, order, sorted_paths = held.path_pages, held.path_order, held.path_sorted
    if len(last) != len(pages) or len(order) != len(pages) or len(sorted_paths) != len(pages):
        return None
    new = list(itertools.compress(itertools.count(), map(operator.is_not, pages, last)))
    if len(new) * 8 > len(pages):
        return None
    moved = [(place, last[place].path, pages[place].path) for place in new]
    moved = [(place, was, now) for place, was, now in moved if was != now]
    if moved:
        order, sorted_paths = order.copy(), sorted_paths.copy()  # held as they were if None
    for place, was, now in moved:
        at = bisect.bisect_left(sorted_paths, was)
        while at < len(order) and sorted_paths[at] == was and order[at] != place:
            at += 1  # the page's own among pages of one path (a clash, refused later)
        if at == len(order) or sorted_paths[at] != was:
            return None
        del order[at], sorted_paths[at]
        at = bisect.bisect_left(sorted_paths, now)
        order.insert(at, place)
        sorted_paths.insert(at, now)
    held.path_sorted = sorted_paths
    return order


def plan_site(inputs: SiteInputs, lookup: SiteLookup | None = None) -> Site:
    """Every page of the site, in a fixed order; `lookup`: one made of the same `inputs`
    already (what it made for pages planned ahead of the site, `run_pages` and
    `kernel_pages`, is kept). Between one kind of page and the next (and within the longest)
    it asks whether a newer change waits, and stops there if so (`sitegen serve`)."""
    lookup = lookup or SiteLookup(inputs)
    stop_if_superseded()
    pages: list[Page | LazyPage] = [home_page(lookup)]
    stop_if_superseded()
    held = held_keys(lookup)
    pages += kernel_pages(lookup, lookup.analysis.kernels, held)
    stop_if_superseded()
    if held is None:  # each run's key: ~0.8 s at 100k runs
        pages += run_pages(lookup, asking_every(lookup.runs.values(), RUNS_BETWEEN))
    else:
        pages += held_run_pages(lookup, held)
    stop_if_superseded()
    held_resources = held_resource_keys(lookup)
    if held_resources is not None:
        pages += held_resource_pages(lookup, held_resources)
    else:
        for kind in KINDS:
            for entry in lookup.catalog.of_kind(kind):
                stop_if_superseded()  # a GPU's page keys its ~15k runs at 100k (keyed builds)
                paths = lookup.resource_page_paths(entry)
                keys = _resource_keys(lookup, entry, len(paths))
                pages += resource_pages(lookup, entry, paths, keys)
            stop_if_superseded()
    pages += list_pages(lookup)
    stop_if_superseded()
    pages += [search_page(lookup), compare_page(lookup), sources_page(lookup)]
    stop_if_superseded()
    pages += history_pages(lookup)
    stop_if_superseded()
    pages.append(regressions_page(lookup))
    pages += [methodology_page(lookup), quality_page(lookup)]
    if has_changes_page(lookup):
        pages.append(changes_page(lookup))
    stop_if_superseded()
    pages = in_path_order(pages, lookup.analysis.held)
    newest = feed(lookup, lookup.analysis.newest)
    regressions = regressions_feed(lookup)
    stop_if_superseded()
    urls = sitemap(lookup, map(_PATH, pages))
    attributions = lookup.every_attribution()
    stop_if_superseded()
    # What pages planned as they render hold across builds: made here, not by render workers.
    held_gpu_wins(lookup)
    held_tallies(lookup)
    return Site(
        pages=tuple(pages),
        not_found=not_found_page(lookup),
        feed=newest,
        regressions_feed=regressions,
        sitemap=urls,
        export=lookup.catalog.resources,
        run_count=len(lookup.runs),
        build_date=inputs.build_date,
        attributions=attributions,
        banner=banner(lookup),
        indexable=inputs.deployment.indexable,
        manifest=inputs.manifest,
        llms=llms_txt(lookup),
        escapes_text=inputs.escapes_text,
        preview=previewed(lookup),
        held=lookup.analysis.held,
    )
