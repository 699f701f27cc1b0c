"""The list pages (kernels, GPUs, implementations, projects, protocols, workloads, runs), and the
numbered pages a long list of runs continues on."""

from __future__ import annotations

import operator
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, NamedTuple

from sitegen.analysis.kernels import RunFacts, per_group
from sitegen.content.loaded import LoadedResource
from sitegen.site.format import title_of
from sitegen.site.lookup import SiteLookup
from sitegen.site.records import LazyPage, Link, Page, PageMeta, Planner, RunRow, held_planner
from sitegen.site.urls import SECTION_TITLES, SECTIONS

PAGER_WINDOW = 2  # numbered links on either side of the current page
RUN_LIST_COLUMNS = ("Run", "Kernel", "Pass", "GPU", "Shape", "Value", "Status", "Observed")
RUNS_COLUMNS = ("Run", "Kernel", "Pass", "GPU", "Shape", "Value", "Observed")  # `runs/`
RUNS_INTRO = "Every run, newest first. Each links to its page with provenance and digest."
_KIND_LISTS = (
    (
        "ExecutionEnvironment",
        "The machines runs were measured on.",
        ("GPU environment", "Architecture", "Runs"),
    ),
    (
        "ImplementationRevision",
        "Implementations of the kernels.",
        ("Implementation", "Kernel", "Runs"),
    ),
    (
        "SoftwareProject",
        "The projects implementations come from.",
        ("Project", "Repository", "Implementations"),
    ),
    (
        "BenchmarkProtocol",
        "How runs were timed: only runs of one protocol are compared.",
        ("Protocol", "Harness", "Runs"),
    ),
    ("WorkloadCase", "Concrete shapes the kernels were run at.", ("Workload", "Kernel", "Runs")),
)


class ListContext(NamedTuple):
    meta: PageMeta
    intro: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Link, ...], ...]  # one cell per column
    pager: tuple[Link, ...] = ()  # links to the other pages of a long list


def list_pages(lookup: SiteLookup) -> list[Page | LazyPage]:
    """Every list page; the list of runs continues on `runs/page/<n>/`."""
    urls = lookup.urls
    kernel_rows = tuple(
        (
            Link(k.title, urls.link(k.key)),
            Link(str(len(k.series))),
            Link(lookup.gpu_labels(k.environments) or "—"),
            Link(str(len(k.runs))),
        )
        for k in lookup.analysis.kernels
    )
    pages: list[Page | LazyPage] = [
        list_page(
            lookup,
            "kernels",
            "Operations and the implementations measured on them.",
            ("Kernel", "Implementations", "GPUs", "Runs"),
            kernel_rows,
        )
    ]
    for kind, intro, columns in _KIND_LISTS:
        entries = lookup.catalog.of_kind(kind)
        if kind == "WorkloadCase":  # suites are workloads too, listed with the cases
            entries += lookup.catalog.of_kind("WorkloadSuite")
        pages.append(_kind_list(lookup, kind, entries, intro, columns))
    runs = lookup.analysis.newest
    if len(runs) <= lookup.runs_per_page:
        rows = tuple(run_cells(lookup.run_row(r), RUNS_COLUMNS) for r in runs)
        pages.append(list_page(lookup, "runs", RUNS_INTRO, RUNS_COLUMNS, rows, runs))
        return pages
    paths = _run_list_paths(lookup, len(runs))
    keys = _run_list_keys(lookup, runs, len(paths))
    held = lookup.analysis.held if lookup.inputs.keyed else None
    if held is None:
        plan = Planner(_run_list_page, lookup)
        return [
            *pages,
            *(
                LazyPage(path, "list.html", plan, keys[number], subject=number)
                for number, path in enumerate(paths, start=1)
            ),
        ]
    # With `sitegen serve`'s held analysis, a page is the last build's page object while its
    # key is the very same (`_run_list_keys`): skipped on sight (~900 pages at 100k runs).
    plan = held_planner(held, "run lists", _run_list_page, lookup)
    last, now = held.pages.get("run lists", {}), {}
    for number, path in enumerate(paths, start=1):
        page = last.get(number)
        key = keys[number]
        if page is None or key is None or page.key is not key or page.path != path:
            page = LazyPage(path, "list.html", plan, key, subject=number)
        now[number] = page
        pages.append(page)
    held.pages["run lists"] = now
    return pages


def _kind_list(
    lookup: SiteLookup,
    kind: str,
    entries: tuple[LoadedResource, ...],
    intro: str,
    columns: tuple[str, ...],
) -> Page:
    """The list page of a kind's resources. With `sitegen serve`'s held analysis, the last
    build's very page while each listed resource has as many runs: what else a row shows (a
    resource's title and page, its kernel's, its project's) is of the resources that are not
    runs and of the site-wide inputs, a change of which drops what is held (~0.15 s an edit on
    the real catalog, its GPU MODE implementations and FlashInfer workloads listed)."""

    def make(_: str) -> Page:
        rows = tuple(list_row(lookup, entry) for entry in entries)
        return list_page(lookup, SECTIONS[kind], intro, columns, rows)

    held = lookup.analysis.held if lookup.inputs.keyed else None
    if held is None:
        return make(kind)
    counts = lookup.run_counts
    groups: dict[str, tuple[tuple[Any, ...], Hashable]] = {
        kind: ((), tuple(counts[entry.digest] for entry in entries))
    }
    return per_group(held, f"{kind} list", groups, make)[kind]


def _run_list_paths(lookup: SiteLookup, runs: int) -> list[str]:
    return ["runs/"] + [f"runs/page/{n}/" for n in range(2, lookup.page_count(runs) + 1)]


def _run_list_page(lookup: SiteLookup, number: int) -> Page:
    """Page `number` of the list of every run, newest first."""
    runs = lookup.analysis.newest
    paths = _run_list_paths(lookup, len(runs))
    return run_list_page(lookup, paths[number - 1], "Runs", RUNS_INTRO, "runs", runs, paths, number)


def _run_list_keys(
    lookup: SiteLookup, runs: Sequence[RunFacts], pages: int
) -> dict[int, str | None]:
    """The page key of each page of the list of runs, by number. With `sitegen serve`'s held
    analysis, made again only for a page whose runs are not the very same objects, or where a
    kernel's signature changed (~0.15 s less at 100k runs than reading every run's token)."""

    def make(number: int) -> str | None:
        shown = lookup.page_of(runs, number)
        return lookup.page_key(f"runs{number}", str(len(runs)), runs=shown)

    held = lookup.analysis.held if lookup.inputs.keyed else None
    if held is None:
        return {number: make(number) for number in range(1, pages + 1)}
    signatures = tuple(lookup.kernel_signature(k.key) for k in lookup.analysis.kernels)
    groups: dict[int, tuple[tuple[Any, ...], Hashable]] = {
        number: (tuple(lookup.page_of(runs, number)), (len(runs), signatures))
        for number in range(1, pages + 1)
    }
    return per_group(held, "run lists", groups, make)


def list_row(lookup: SiteLookup, entry: LoadedResource) -> tuple[Link, ...]:
    spec = entry.spec
    link = Link(title_of(entry), lookup.urls.link(entry.digest))
    runs = Link(f"{lookup.run_counts[entry.digest]:,}")
    if entry.kind == "ExecutionEnvironment":
        return (link, Link(spec["hardware"]["architecture"]), runs)
    if entry.kind == "ImplementationRevision":
        return (link, lookup.kernel_link(spec["operation"]["specDigest"]), runs)
    if entry.kind == "SoftwareProject":
        count = sum(1 for p in lookup.projects.values() if p.href == link.href)
        repository = spec.get("repository")
        return (link, Link(repository or "—", repository), Link(f"{count:,}"))
    if entry.kind == "BenchmarkProtocol":
        return (link, Link(spec["harness"]["name"]), runs)
    return (link, lookup.kernel_link(spec["operationSpecDigest"]), runs)


def list_page(
    lookup: SiteLookup,
    section: str,
    intro: str,
    columns: tuple[str, ...],
    rows: tuple[tuple[Link, ...], ...],
    runs: Iterable[RunFacts] = (),
) -> Page:
    path = f"{section}/"
    title = SECTION_TITLES[section]
    meta = lookup.meta(title, path, intro, section, runs)
    twin = {"title": title, "columns": list(columns), "items": _items(columns, rows)}
    return Page(path, "list.html", ListContext(meta, intro, columns, rows), twin)


def run_list_page(
    lookup: SiteLookup,
    path: str,
    title: str,
    intro: str,
    section: str,
    runs: Sequence[RunFacts],
    paths: list[str],
    number: int,
    columns: tuple[str, ...] = RUNS_COLUMNS,
    twin_extra: dict[str, Any] | None = None,
) -> Page:
    """Page `number` (1-based) of a long list of runs; `paths` are all its pages."""
    start = (number - 1) * lookup.runs_per_page
    shown = lookup.page_of(runs, number)
    heading = f"{title} {start + 1:,}–{start + len(shown):,} of {len(runs):,}"
    rows = tuple(run_cells(lookup.run_row(r), columns) for r in shown)
    meta = lookup.meta(heading, path, intro, section, shown)
    twin = {
        "title": heading,
        "columns": list(columns),
        "items": _items(columns, rows),
        **(twin_extra or {}),
        "page": number,
        "pages": [lookup.urls.href(p) for p in paths],
    }
    context = ListContext(meta, intro, columns, rows, pager(lookup, paths, number))
    return Page(path, "list.html", context, twin)


def pager(lookup: SiteLookup, paths: list[str], current: int) -> tuple[Link, ...]:
    """Previous, page 1, a window around `current` (1-based), the last page, next."""
    total = len(paths)
    if total <= 1:
        return ()
    href = lookup.urls.href
    window = range(max(1, current - PAGER_WINDOW), min(total, current + PAGER_WINDOW) + 1)
    links = []
    if current > 1:
        links.append(Link("← previous", href(paths[current - 2])))
    last = 0
    for number in sorted({1, total, *window}):
        if number > last + 1:
            links.append(Link("…"))
        links.append(Link(f"{number:,}", None if number == current else href(paths[number - 1])))
        last = number
    if current < total:
        links.append(Link("next →", href(paths[current])))
    return tuple(links)


def run_cells(row: RunRow, columns: tuple[str, ...]) -> tuple[Link, ...]:
    return tuple([_CELL_OF[column](row) for column in columns])


# Each column's cell of a row, made only for the columns shown (~100,000 rows a build).
_CELL_OF: dict[str, Callable[[RunRow], Link]] = {
    "Run": operator.attrgetter("run"),
    "Kernel": operator.attrgetter("kernel"),
    "Pass": lambda row: Link(row.pass_name),
    "GPU": operator.attrgetter("gpu"),
    "Shape": lambda row: Link(row.shape),
    "Value": lambda row: Link(row.value),
    "Status": lambda row: Link(row.status),
    "Observed": lambda row: Link(row.observed),
}


def _items(columns: tuple[str, ...], rows: tuple[tuple[Link, ...], ...]) -> list[dict[str, Any]]:
    # A Link unpacks as (text, href): faster than reading its fields by name, per cell.
    return [
        dict(zip(columns, [{"text": text, "url": href} for text, href in row], strict=True))
        for row in rows
    ]
