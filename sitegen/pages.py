"""The site model: every page with its typed template context and its JSON twin.

Nothing here renders HTML or touches the disk: contexts hold display-ready strings and links,
templates only lay them out. Ordering is explicit everywhere, so the same catalog always gives
the same pages in the same order.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import json
import operator
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from sitegen.catalog import Catalog, references_of
from sitegen.changes import (
    Baseline,
    Changes,
    Group,
    Modified,
    RunChange,
    changes_document,
    run_facts,
    summary_line,
    value_text,
)
from sitegen.charts import chart_spec, colours_for, display_unit, metric_name
from sitegen.deploy import BRANCH_DEPLOY, DEPLOY_PREVIEW, Deployment
from sitegen.digest import identity_document, known_canonical_json, short
from sitegen.display import KIND_WORDS, Numbers, environment_label, title_of
from sitegen.kernels import (
    Analysis,
    Cell,
    Kernel,
    PassSection,
    RunFacts,
    Series,
    passes_of,
)
from sitegen.load import COMPACT_KINDS, LoadedResource
from sitegen.resources import KINDS
from sitegen.run_summary import LATENCY, Value
from sitegen.sources import Attribution, SourceReport, attribution_for, report_matches
from sitegen.urls import SECTION_TITLES, SECTIONS, SiteUrls, json_twin

if TYPE_CHECKING:  # manifest.py reads pages' helpers: import its type for annotations only
    from sitegen.manifest import Entry, Manifest

FEED_SIZE = 50
# A list of runs longer than this continues on numbered pages (`gpus/<name>/runs/2/`,
# `runs/page/2/`), so that no page grows with the catalog.
RUNS_PER_PAGE = 500
PAGER_WINDOW = 2  # numbered links on either side of the current page
RUN_LIST_COLUMNS = ("Run", "Kernel", "Pass", "GPU", "Shape", "Value", "Status", "Observed")
RUNS_COLUMNS = ("Run", "Kernel", "Pass", "GPU", "Shape", "Value", "Observed")  # `runs/`
HOME_RECENT = 10
# FORMAT.md §5: the Liger benchmark's providers (kebab-cased as in implementation names) and
# the SoftwareProject each belongs to. Used only when no repository or package says otherwise.
LIGER_PROVIDER_PROJECTS = {
    "liger": "liger-kernel",
    "liger-fused-add-rms-norm": "liger-kernel",
    "liger-rms-norm": "liger-kernel",
    "liger-in-place": "liger-kernel",
    "liger-tiled": "liger-kernel",
    "huggingface": "transformers",
    "torch": "pytorch",
    "torch-compile": "pytorch",
    "megatron": "megatron-lm",
    "megatron-fused": "megatron-lm",
    "megatron-unfused": "megatron-lm",
    "deepspeed-tiled": "deepspeed",
}
LIGER_IMPLEMENTATION_PREFIX = "liger-bench-"


# --- contexts -----------------------------------------------------------------------------------


# The pages' records are named tuples, not frozen dataclasses: a run page makes ~50 of them, and
# a tuple is made and hashed (templating.py caches fact lists) in C, in a third of the time; making
# the classes themselves cost ~1 ms each at every start (exec of each generated method), ~25 ms.
class Link(NamedTuple):
    text: str
    href: str | None = None  # None: shown as plain text (the target is not in this catalog)


class Fact(NamedTuple):
    label: str
    value: str
    href: str | None = None
    code: bool = False  # digests, identifiers: monospace


class FactGroup(NamedTuple):
    title: str
    facts: tuple[Fact, ...]


class PageMeta(NamedTuple):
    """What every page has: title, where it lives, its JSON twin, and whom it credits."""

    title: str
    path: str
    href: str
    json_href: str
    canonical: str
    description: str
    section: str  # the nav entry to highlight; "" for none
    attributions: tuple[Attribution, ...]
    charts: bool = False  # whether plotly is loaded


class RunRow(NamedTuple):
    run: Link
    kernel: Link
    pass_name: str
    gpu: Link
    implementation: Link
    shape: str
    value: str
    status: str
    observed: str


class Identity(NamedTuple):
    """The digest block: the full digest and the canonical bytes it is the hash of."""

    kind: str
    digest: str
    canonical: str
    json_href: str  # the whole normalised document lives in the page's JSON twin
    schema_href: str


class KernelRow(NamedTuple):
    kernel: Link
    implementations: int
    gpus: str
    passes: str
    runs: int
    newest: str


class SourceBlock(NamedTuple):
    attribution: Attribution
    runs: int
    facts: tuple[Fact, ...]
    reasons: tuple[tuple[str, int], ...]


class HomeContext(NamedTuple):
    meta: PageMeta
    counts: tuple[Fact, ...]
    newest: RunRow | None
    kernels: tuple[KernelRow, ...]
    gpus: tuple[Fact, ...]
    sources: tuple[SourceBlock, ...]
    recent: tuple[RunRow, ...]


class RankRow(NamedTuple):
    rank: str
    implementation: Link
    baseline: bool
    value: str
    spread: str
    vs_best: str
    vs_baseline: str
    run: Link | None
    note: str


class ShapeTable(NamedTuple):
    label: str
    workload: Link
    rows: tuple[RankRow, ...]


class KeptMarkup:
    """A fragment's HTML once rendered, kept with it when `keep` (render.py's `figure`)."""

    __slots__ = ("keep", "markup")

    def __init__(self, keep: bool = False) -> None:
        self.keep = keep
        self.markup: str | None = None


@dataclass(frozen=True)
class ChartBlock:
    element_id: str
    title: str
    protocol: Link
    metric: str
    unit: str
    spread_label: str
    best_label: str
    spec: dict[str, Any]
    fallback: str
    shapes: tuple[ShapeTable, ...]
    data: dict[str, Any]  # the chart in the page's JSON twin
    rendered: KeptMarkup = field(default_factory=KeptMarkup, compare=False, repr=False)


class GpuBlock(NamedTuple):
    anchor: str
    gpu: Link
    charts: tuple[ChartBlock, ...]
    missing: tuple[str, ...]


class PassBlock(NamedTuple):
    anchor: str
    name: str
    gpus: tuple[GpuBlock, ...]
    missing_gpus: tuple[Link, ...]


class ImplementationRow(NamedTuple):
    implementation: Link
    label: str
    baseline: bool
    project: Link | None
    runs: int


class Operand(NamedTuple):
    direction: str
    name: str
    shape: str
    dtype: str


class KernelContext(NamedTuple):
    meta: PageMeta
    description: str | None  # Markdown
    facts: tuple[Fact, ...]
    operands: tuple[Operand, ...]
    implementations: tuple[ImplementationRow, ...]
    passes: tuple[PassBlock, ...]
    source_refs: tuple[Link, ...]
    identity: Identity | None
    derived: bool  # no OperationSpec: the kernel comes from run titles


class Tensor(NamedTuple):
    name: str
    shape: str
    dtype: str


class Headline(NamedTuple):
    """One metric of a run, spelled out: value, exact raw value, spread."""

    metric: str
    value: str
    exact: str
    spread: str


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


class ResourceContext(NamedTuple):
    meta: PageMeta
    kind_word: str
    description: str | None
    groups: tuple[FactGroup, ...]
    notes: str | None  # Markdown: protocol comparability notes
    runs: tuple[RunRow, ...]
    users: tuple[Link, ...]  # non-run users (workloads, implementations)
    users_title: str
    identity: Identity
    run_total: int = 0  # all its runs; `runs` holds the first RUNS_PER_PAGE of them
    pager: tuple[Link, ...] = ()  # the pages listing the rest; () when `runs` holds them all


class ListContext(NamedTuple):
    meta: PageMeta
    intro: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Link, ...], ...]
    pager: tuple[Link, ...] = ()  # links to the other pages of a long list


class NotFoundContext(NamedTuple):
    meta: PageMeta


class ChangeItem(NamedTuple):
    """A resource added, removed or with modified metadata."""

    kind_word: str
    resource: Link  # added and modified: this site's page; removed: the base site's page
    facts: str  # a run's pass, GPU, implementation and shape; "" for other kinds
    value: str  # a run's headline value; "" for other kinds
    note: str  # what metadata changed; ""


class RunChangeRow(NamedTuple):
    """A run measured again: its page here and in the base, and its value in both."""

    run: Link
    was: Link
    pass_name: str
    gpu: str
    implementation: str
    shape: str
    before: str
    after: str
    change: str
    percent: str


class ChangeSection(NamedTuple):
    anchor: str
    title: str
    kernel: Link | None  # None: protocols, GPUs and projects
    moved: tuple[RunChangeRow, ...]
    replaced: tuple[RunChangeRow, ...]
    added: tuple[ChangeItem, ...]
    removed: tuple[ChangeItem, ...]
    modified: tuple[ChangeItem, ...]


class ChangesContext(NamedTuple):
    meta: PageMeta
    head: str
    base: str
    summary: str
    counts: tuple[Fact, ...]
    unread: bool  # the base could not be read: notes say why
    notes: tuple[str, ...]
    sections: tuple[ChangeSection, ...]


Context = (
    HomeContext
    | KernelContext
    | RunContext
    | ResourceContext
    | ListContext
    | NotFoundContext
    | ChangesContext
)


class Page(NamedTuple):
    path: str  # site path: `runs/f0cf6dd69e048a9b/`
    template: str
    context: Context
    twin: dict[str, Any] | None  # the JSON twin written beside it

    def built(self) -> Page:
        return self


@dataclass(frozen=True, slots=True)
class LazyPage:
    """A page planned only when it is rendered: run pages, by the render workers.

    Its path and template are known at once; `built()` plans the page itself (every call
    anew, so nothing is kept), and `context`/`twin` are there for readers such as tests.
    """

    path: str
    template: str
    build: Callable[..., Page] = field(repr=False, compare=False)
    # What the page's bytes depend on besides the site-wide inputs (incremental builds only):
    # equal keys, equal bytes. None: always rendered.
    key: str | None = None
    # Where the page's data sits in memory (a run page: its run's place in load order, the
    # order its document was allocated in). Rendering in this order keeps each render
    # process to its own stretch of memory.
    locality: int = -1
    # The argument `build` takes, if it takes one (a run page: its run): a million run pages
    # need no partial object each.
    subject: Any = field(default=None, repr=False, compare=False)
    # Whose page it is: a run's or resource's digest, a kernel's key; "" for the site-wide
    # pages (lists, home), planned on every build. A rebuild after run files changed plans
    # only the pages of the owners those runs touch (`Replan`).
    owner: str = ""

    def built(self) -> Page:
        return self.build() if self.subject is None else self.build(self.subject)

    @property
    def context(self) -> Context:
        return self.built().context

    @property
    def twin(self) -> dict[str, Any] | None:
        return self.built().twin


class FeedEntry(NamedTuple):
    title: str
    url: str
    id: str
    updated: str
    summary: str


class Feed(NamedTuple):
    title: str
    url: str
    self_url: str
    updated: str
    entries: tuple[FeedEntry, ...]


class Site(NamedTuple):
    pages: tuple[Page | LazyPage, ...]
    not_found: Page
    feed: Feed
    sitemap: tuple[str, ...]  # absolute page URLs, sorted
    export: tuple[LoadedResource, ...]  # every resource, by digest
    run_count: int
    build_date: str | None
    attributions: tuple[Attribution, ...] = ()
    banner: tuple[Link, ...] = ()  # a preview's banner, every page; () in production
    indexable: bool = True  # False: noindex everywhere (meta, robots.txt, _headers)
    manifest: Manifest | Callable[[], Manifest] | None = None  # /manifest.json (Inputs)
    gone: tuple[str, ...] = ()  # with a Replan: the last build's pages of its owners not planned
    replanned: frozenset[str] | None = None  # with a Replan: the owners planned ("": site-wide)
    unchanged: tuple[str, ...] = ()  # with a Replan: site-wide pages that stand as written


_SOURCE = operator.attrgetter("source")
_REFERENCE_FIELDS = ("implementation", "workload", "protocol", "environment")


def _listed_order(run: RunFacts) -> tuple[Any, ...]:
    return (run.kernel_title, run.pass_name, run.title, run.shape.axes, run.digest)


def _patched_run_list(
    kept: list[RunFacts], replan: Replan, sources: set[str]
) -> list[RunFacts] | None:
    """`kept` (a resource's runs in `_listed_order`, as the last build listed them of
    `sources`) without the Replan's runs that went, with those that came: by bisection.
    None if a run that went is not where it should be."""
    found = list(kept)
    for run in replan.removed:
        if sources.isdisjoint(value for _, _, value in references_of(run.entry)):
            continue
        place = bisect.bisect_left(found, _listed_order(run), key=_listed_order)
        if place == len(found) or found[place] is not run:
            return None
        del found[place]
    for run in replan.added:
        if not sources.isdisjoint(value for _, _, value in references_of(run.entry)):
            bisect.insort(found, run, key=_listed_order)
    return found


def page_of(runs: Sequence[RunFacts], number: int) -> Sequence[RunFacts]:
    """The runs on page `number` (1-based) of a list continued every RUNS_PER_PAGE runs."""
    return runs[(number - 1) * RUNS_PER_PAGE : number * RUNS_PER_PAGE]


# --- formatting ---------------------------------------------------------------------------------


def exact(value: float, unit: str) -> str:
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value):,} {unit}"
    return f"{value:,} {unit}"


def when(instant: str) -> str:
    """`2025-07-17T18:18:16.000Z` → `2025-07-17 18:18:16 UTC` (observations are all UTC)."""
    return instant[:10] + " " + instant[11:19] + " UTC"


def ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}×"


def describe(metric: str, unit: str, value: Value) -> str:
    numbers = Numbers(metric, unit)
    return f"{numbers.one(value.centre)} {numbers.unit}"


def anchor(*parts: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", "-".join(parts).lower()).strip("-")


# --- planning -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Inputs:
    """Everything the site is made from."""

    catalog: Catalog
    analysis: Analysis
    urls: SiteUrls
    reports: dict[str, SourceReport]
    build_date: str | None  # from SOURCE_DATE_EPOCH only; None prints no date
    deployment: Deployment = field(default_factory=Deployment)
    # Or how to plan it, when nothing reads it before render.py writes it (build.py).
    manifest: Manifest | Callable[[], Manifest] | None = None
    baseline: Baseline | None = None  # what the changes page compares with; None: no page
    changes: Changes | None = None  # None when there is no baseline or it could not be read
    keyed: bool = False  # give lazy pages their keys (incremental builds)
    replan: Replan | None = None  # plan only some owners' pages; None: every page
    plans: PlanCache | None = None  # what the last builds planned (a Replan: only runs changed)


class Tallies(NamedTuple):
    """The runs of a build counted by the resources they reference and by source."""

    of: tuple[RunFacts, ...]  # the build's runs, newest first (Analysis.newest): whose counts
    by_resource: Counter[str]
    by_source: Counter[str]


class PlanCache:
    """What the builds since the last full one planned, kept by a long-lived process (`sitegen
    serve`) for the next rebuild after run files changed (build.py's `rebuild_runs`):

    - kernel-page charts as planned and rendered, per kernel, under what each one shows (its
      runs, ranks, links and colours): a rebuild plans and renders the changed run's chart
      again, not the kernel's other hundreds (at 100k runs a page has ~7,000 ranking rows);
    - each resource page's runs in their order, patched by bisection rather than sorted
      again (a GPU's page lists tens of thousands);
    - the runs counted by resource and by source (`Tallies`), patched likewise.

    Valid only while nothing but runs changes: the titles of the other resources a chart
    links to are not in its key. A full build starts a new one.
    """

    def __init__(self) -> None:
        self.charts: dict[str, dict[tuple[Any, ...], ChartBlock]] = {}
        self.run_lists: dict[str, list[RunFacts]] = {}
        self.tallies: Tallies | None = None


class Replan(NamedTuple):
    """Plan only the site-wide pages and those of `owners`, and of the projects of the
    implementations among them (a rebuild after run files changed: build.py's
    `rebuild_runs`); the other pages of the last build stand as written."""

    owners: frozenset[str]
    pages_of: Mapping[str, Sequence[str]]  # the last build's owners → their pages' paths
    sitemap: tuple[str, ...]  # the last build's
    newest: tuple[RunFacts, ...]  # the last build's runs, newest first (the list of runs)
    removed: tuple[RunFacts, ...] = ()  # the runs that went, as the last build had them
    added: tuple[RunFacts, ...] = ()  # the runs that came


def plan_site(inputs: Inputs) -> Site:
    """Every page of the site, in a fixed order."""
    planner = _Planner(inputs)
    return planner.site()


class _Planner:
    def __init__(self, inputs: Inputs) -> None:
        self.catalog = inputs.catalog
        self.analysis = inputs.analysis
        self.urls = inputs.urls
        self.reports = inputs.reports
        self.build_date = inputs.build_date
        self.deployment = inputs.deployment
        self.manifest = inputs.manifest
        self.baseline = inputs.baseline
        self.changes = inputs.changes
        self.runs = inputs.analysis.runs
        self.kernels = {k.key: k for k in inputs.analysis.kernels}
        # Specs and documents of the resources many pages show, parsed once; a run's only when
        # its own page is planned, and not kept (its document may be compact: load.py).
        self.specs: dict[str, dict[str, Any]] = {}
        self.documents: dict[str, dict[str, Any]] = {}
        self.last_compact: tuple[str, dict[str, Any]] = ("", {})
        self.gpu_labels: dict[str, str] = {}
        # A protocol's or environment's facts (by digest): shown on each of its runs' pages.
        self.shared_facts: dict[str, tuple[Fact, ...]] = {}
        self.workload_parts: dict[str, tuple[tuple[Tensor, ...], tuple[Fact, ...]]] = {}
        self.credits: dict[frozenset[str], tuple[Attribution, ...]] = {}
        self.user_lists: dict[str, list[LoadedResource]] = {}
        self.rows: dict[str, RunRow] = {}
        self.resource_run_lists: dict[str, list[RunFacts]] = {}
        self.keyed = inputs.keyed
        self.replan = inputs.replan
        self.plans = inputs.plans
        self.unchanged: list[str] = []  # site-wide pages a Replan leaves as they are
        self.projects = self._project_links()

    # shared pieces -------------------------------------------------------------------------

    def meta(
        self,
        title: str,
        path: str,
        description: str,
        section: str,
        runs: Iterable[RunFacts] = (),
        charts: bool = False,
    ) -> PageMeta:
        return PageMeta(
            title=title,
            path=path,
            href=self.urls.href(path),
            json_href=self.urls.href(json_twin(path)) if path == "" or path.endswith("/") else "",
            canonical=self.urls.absolute(path),
            description=description,
            section=section,
            attributions=self.attributions(runs),
            charts=charts,
        )

    def attributions(self, runs: Iterable[RunFacts]) -> tuple[Attribution, ...]:
        sources = frozenset(map(_SOURCE, runs))
        cached = self.credits.get(sources)
        if cached is None:
            # Backend-tagged sources (`liger-kernel-bench-cutile`) share their upstream's line.
            found = {a.text: a for a in (attribution_for(s, self.reports) for s in sources if s)}
            cached = self.credits[sources] = tuple(found[text] for text in sorted(found))
        return cached

    def link(self, digest_value: str, text: str | None = None) -> Link:
        entry = self.catalog.by_digest.get(digest_value)
        shown = text or (title_of(entry) if entry else short(digest_value))
        return Link(shown, self.urls.link(digest_value))

    def spec(self, entry: LoadedResource) -> dict[str, Any]:
        if entry.kind in COMPACT_KINDS:
            return self.document(entry)["spec"]  # type: ignore[no-any-return]
        found = self.specs.get(entry.digest)
        if found is None:
            found = self.specs[entry.digest] = entry.spec
        return found

    def users(self, digest_value: str) -> list[LoadedResource]:
        """catalog.users, once per resource: list pages and resource pages both ask."""
        found = self.user_lists.get(digest_value)
        if found is None:
            found = self.user_lists[digest_value] = self.catalog.users(digest_value)
        return found

    def document(self, entry: LoadedResource) -> dict[str, Any]:
        """A resource's normalised document, parsed once: for the build, or for a compact run
        (load.py), once for the page being planned (only the last one is kept)."""
        if entry.kind in COMPACT_KINDS:
            if self.last_compact[0] != entry.digest:
                self.last_compact = (entry.digest, entry.document)
            return self.last_compact[1]
        found = self.documents.get(entry.digest)
        if found is None:
            found = self.documents[entry.digest] = entry.document
        return found

    def gpu_label(self, digest_value: str) -> str:
        label = self.gpu_labels.get(digest_value)
        if label is not None:
            return label
        label = self.gpu_labels[digest_value] = environment_label(self.catalog, digest_value)
        return label

    def kernel_link(self, key: str) -> Link:
        kernel = self.kernels.get(key)
        return Link(kernel.title if kernel else key, self.urls.link(key))

    def run_row(self, run: RunFacts) -> RunRow:
        cached = self.rows.get(run.digest)
        if cached is not None:
            return cached
        value = run.values[0] if run.values else None
        row = RunRow(
            run=Link(run.title, self.urls.link(run.digest)),
            kernel=self.kernel_link(run.kernel_key),
            pass_name=run.pass_name,
            gpu=Link(self.gpu_label(run.environment), self.urls.link(run.environment)),
            implementation=Link(run.provider, self.urls.link(run.implementation)),
            shape=run.shape.label(),
            value=describe(value.metric, value.unit, value) if value else "—",
            status=run.status,
            observed=when(run.observed_at),
        )
        self.rows[run.digest] = row
        return row

    def run_rows(self, runs: Iterable[RunFacts]) -> tuple[RunRow, ...]:
        return tuple(self.run_row(r) for r in self.ordered_runs(runs))

    def ordered_runs(self, runs: Iterable[RunFacts]) -> list[RunFacts]:
        """The order of run tables on resource pages: kernel, pass, title, shape, digest."""
        return sorted(runs, key=_listed_order)

    # long lists of runs --------------------------------------------------------------------

    @staticmethod
    def page_count(items: int) -> int:
        return max(1, -(-items // RUNS_PER_PAGE))

    def pager(self, paths: list[str], current: int) -> tuple[Link, ...]:
        """Previous, page 1, a window around `current` (1-based), the last page, next."""
        total = len(paths)
        if total <= 1:
            return ()
        window = range(max(1, current - PAGER_WINDOW), min(total, current + PAGER_WINDOW) + 1)
        links = []
        if current > 1:
            links.append(Link("← previous", self.urls.href(paths[current - 2])))
        last = 0
        for number in sorted({1, total, *window}):
            if number > last + 1:
                links.append(Link("…"))
            href = None if number == current else self.urls.href(paths[number - 1])
            links.append(Link(f"{number:,}", href))
            last = number
        if current < total:
            links.append(Link("next →", self.urls.href(paths[current])))
        return tuple(links)

    def run_list_page(
        self,
        path: str,
        title: str,
        intro: str,
        section: str,
        runs: Sequence[RunFacts],
        paths: list[str],
        number: int,
        columns: tuple[str, ...],
        twin_extra: dict[str, Any],
    ) -> Page:
        """Page `number` (1-based) of a long list of runs; `paths` are all its pages."""
        start = (number - 1) * RUNS_PER_PAGE
        shown = page_of(runs, number)
        heading = f"{title} {start + 1:,}–{start + len(shown):,} of {len(runs):,}"
        rows = tuple(self.run_cells(self.run_row(r), columns) for r in shown)
        meta = self.meta(heading, path, intro, section, shown)
        twin = {
            "title": heading,
            "columns": list(columns),
            "items": [
                {
                    c: {"text": cell.text, "url": cell.href}
                    for c, cell in zip(columns, row, strict=True)
                }
                for row in rows
            ],
            **twin_extra,
            "page": number,
            "pages": [self.urls.href(p) for p in paths],
        }
        context = ListContext(meta, intro, columns, rows, self.pager(paths, number))
        return Page(path, "list.html", context, twin)

    @staticmethod
    def run_cells(row: RunRow, columns: tuple[str, ...]) -> tuple[Link, ...]:
        cells = {
            "Run": row.run,
            "Kernel": row.kernel,
            "Pass": Link(row.pass_name),
            "GPU": row.gpu,
            "Shape": Link(row.shape),
            "Value": Link(row.value),
            "Status": Link(row.status),
            "Observed": Link(row.observed),
        }
        return tuple(cells[c] for c in columns)

    def identity(self, entry: LoadedResource) -> Identity:
        canonical = canonical_text(identity_document(entry.kind, self.spec(entry)), entry.digest)
        path = self.urls.path_of(entry.digest) or ""
        return Identity(
            kind=entry.kind,
            digest=entry.digest,
            canonical=canonical,
            json_href=self.urls.href(json_twin(path)),
            schema_href=self.urls.href(self.urls.schema(entry.kind)),
        )

    def resource_twin(self, entry: LoadedResource, **extra: Any) -> dict[str, Any]:
        return {
            "kind": entry.kind,
            "digest": entry.digest,
            "url": self.urls.link(entry.digest),
            "schema": self.urls.href(self.urls.schema(entry.kind)),
            **extra,
            "document": self.document(entry),
        }

    # the site ------------------------------------------------------------------------------

    def site(self) -> Site:
        # Pages are planned where they are rendered (LazyPage): in the render workers on a big
        # site. Each reads the analysis and shared lookups, never another page.
        # With keys (incremental builds), a page whose key is unchanged is not planned at all:
        # a key names the page and the runs it shows; everything else is site-wide (see
        # incremental.py).
        lazy = LazyPage
        key = self.page_key
        replan = self.replan
        owners = self.replanned_owners()

        def planned(owner: str) -> bool:
            return owners is None or owner in owners

        pages: list[Page | LazyPage] = [self.home()]
        pages += [
            lazy(
                self.urls.path_of(k.key) or "",
                "kernel.html",
                functools.partial(self.kernel, k),
                key("kernel", k.key, runs=k.runs),
                owner=k.key,
            )
            for k in self.analysis.kernels
            if planned(k.key)
        ]
        # Where each run sits in load order; a rebuild of a few pages renders them in one process.
        loaded = (
            {digest: number for number, digest in enumerate(self.catalog.by_digest)}
            if owners is None
            else {}
        )
        plan_run = self.run
        runs_planned = (
            self.runs.values()
            if owners is None
            else [self.runs[d] for d in sorted(owners) if d in self.runs]
        )
        pages += [
            lazy(
                self.urls.path_of(r.digest) or "",
                "run.html",
                plan_run,
                key("run", runs=(r,)),
                locality=loaded.get(r.digest, -1),
                subject=r,
                owner=r.digest,
            )
            for r in runs_planned
        ]
        for kind in (
            "WorkloadCase",
            "ImplementationRevision",
            "SoftwareProject",
            "BenchmarkProtocol",
            "ExecutionEnvironment",
        ):
            for entry in self.catalog.of_kind(kind):
                if not planned(entry.digest):
                    continue
                paths = self.resource_page_paths(entry)
                # Ordered (a sort per resource) only for the keys of an incremental build;
                # otherwise where the page is planned, in a render worker.
                shown = self.resource_runs(entry) if self.keyed else []
                build = functools.partial(self.resource, entry)
                owner = entry.digest
                pages.append(
                    lazy(
                        paths[0],
                        "resource.html",
                        build,
                        key("r", owner, runs=shown),
                        owner=owner,
                    )
                )
                # A continuation shows its own slice of the runs, and how many there are.
                pages += [
                    lazy(
                        path,
                        "list.html",
                        functools.partial(self.resource_continuation, entry, n),
                        key(f"r{n}", owner, str(len(shown)), runs=page_of(shown, n)),
                        owner=owner,
                    )
                    for n, path in enumerate(paths[1:], start=2)
                ]
        pages += self.lists()
        if self.has_changes_page:
            pages.append(self.changes_page())
        pages.sort(key=lambda p: p.path)
        runs = self.analysis.newest
        gone: tuple[str, ...] = ()
        if replan is not None and owners is not None:
            planned_paths = {page.path for page in pages} | set(self.unchanged)
            before = {path for o in (*owners, "") for path in replan.pages_of.get(o, ())}
            gone = tuple(sorted(before - planned_paths))
            sitemap = self.patched_sitemap(replan.sitemap, gone, planned_paths - before)
        else:
            # Sorted as paths, then made absolute: one prefix, so the same order.
            sitemap = tuple(map(self.urls.absolute, sorted(page.path for page in pages)))
        export = tuple(self.catalog.by_digest.values())
        return Site(
            pages=tuple(pages),
            not_found=self.not_found(),
            feed=self.feed(runs[:FEED_SIZE]),
            sitemap=sitemap,
            export=export,
            run_count=len(self.runs),
            build_date=self.build_date,
            attributions=self.attributions(self.runs.values()),
            banner=self.banner(),
            indexable=self.deployment.indexable,
            manifest=self.manifest,
            gone=gone,
            replanned=None if owners is None else owners | {""},
            unchanged=tuple(self.unchanged),
        )

    def patched_sitemap(
        self, sitemap: tuple[str, ...], gone: Iterable[str], came: Iterable[str]
    ) -> tuple[str, ...]:
        """`sitemap` without the pages `gone`, with those that `came`: each by bisection (an
        absolute URL sorts as its path does)."""
        urls = list(sitemap)
        for path in gone:
            url = self.urls.absolute(path)
            place = bisect.bisect_left(urls, url)
            if place < len(urls) and urls[place] == url:
                del urls[place]
        for path in came:
            url = self.urls.absolute(path)
            place = bisect.bisect_left(urls, url)
            if place == len(urls) or urls[place] != url:
                urls.insert(place, url)
        return tuple(urls)

    def replanned_owners(self) -> frozenset[str] | None:
        """The owners whose pages are planned (None: all): a Replan's, with the projects of
        its implementations, whose pages list those implementations' runs."""
        if self.replan is None:
            return None
        owners = self.replan.owners
        projects = {
            project.digest
            for project in self.catalog.of_kind("SoftwareProject")
            if any(owners.intersection(self.project_implementations(project)))
        }
        return owners | projects

    def home(self) -> Page:
        runs = self.analysis.newest
        kernels = self.analysis.kernels
        sources = self.source_blocks()
        counts = (
            Fact("Kernels", f"{len(kernels):,}", self.urls.href("kernels/")),
            Fact(
                "GPUs",
                f"{len(self.catalog.of_kind('ExecutionEnvironment')):,}",
                self.urls.href("gpus/"),
            ),
            Fact(
                "Implementations",
                f"{len(self.catalog.of_kind('ImplementationRevision')):,}",
                self.urls.href("implementations/"),
            ),
            Fact("Runs", f"{len(self.runs):,}", self.urls.href("runs/")),
            Fact(
                "Workloads",
                f"{len(self.catalog.of_kind('WorkloadCase')):,}",
                self.urls.href("workloads/"),
            ),
            Fact(
                "Protocols",
                f"{len(self.catalog.of_kind('BenchmarkProtocol')):,}",
                self.urls.href("protocols/"),
            ),
            Fact(
                "Projects",
                f"{len(self.catalog.of_kind('SoftwareProject')):,}",
                self.urls.href("projects/"),
            ),
            Fact("Sources", f"{len(sources):,}"),
        )
        gpus = tuple(
            Fact(
                self.gpu_label(e.digest),
                f"{self.run_counts[e.digest]:,} runs",
                self.urls.link(e.digest),
            )
            for e in sorted(
                self.catalog.of_kind("ExecutionEnvironment"),
                key=lambda e: (self.gpu_label(e.digest), e.digest),
            )
        )
        meta = self.meta(
            "kernelindex",
            "",
            "Which GPU kernel implementation is fastest for an operation, on which GPU, "
            "at which shape, and how it was measured.",
            "",
            runs,
        )
        context = HomeContext(
            meta=meta,
            counts=counts,
            newest=self.run_row(runs[0]) if runs else None,
            kernels=tuple(self.kernel_row(k) for k in kernels),
            gpus=gpus,
            sources=sources,
            recent=tuple(self.run_row(r) for r in runs[:HOME_RECENT]),
        )
        twin = {
            "counts": {f.label.lower(): int(f.value.replace(",", "")) for f in counts},
            "newest": runs[0].digest if runs else None,
            "kernels": [
                {"title": k.title, "url": self.urls.link(k.key), "runs": len(k.runs)}
                for k in kernels
            ],
            "sources": [
                {"source": s.attribution.source, "attribution": s.attribution.text, "runs": s.runs}
                for s in sources
            ],
        }
        return Page("", "home.html", context, twin)

    def kernel_row(self, kernel: Kernel) -> KernelRow:
        newest = max(map(operator.attrgetter("observed_at"), kernel.runs), default="")
        return KernelRow(
            kernel=Link(kernel.title, self.urls.link(kernel.key)),
            implementations=len(kernel.implementations),
            gpus=", ".join(sorted({self.gpu_label(e) for e in kernel.environments})),
            passes=", ".join(kernel.pass_names),
            runs=len(kernel.runs),
            newest=when(newest) if newest else "—",
        )

    def source_blocks(self) -> tuple[SourceBlock, ...]:
        """One block per upstream credited: its runs, and what its import reports say."""
        by_attribution: dict[Attribution, int] = defaultdict(int)
        for source, count in self.tallies.by_source.items():
            if source:
                by_attribution[attribution_for(source, self.reports)] += count
        # Sources differing only by backend tag share one upstream and one credit line.
        merged: dict[tuple[str, str, str, str | None], tuple[list[str], int]] = {}
        for attribution, count in by_attribution.items():
            key = (
                attribution.name,
                attribution.licence,
                attribution.copyright,
                attribution.repository,
            )
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
            for file_name, report in sorted(self.reports.items()):
                if not any(report_matches(report, attribution_for(s)) for s in sources):
                    continue
                used.add(file_name)
                facts += self.report_facts(report)
                reasons = reasons or report.reasons
            blocks.append(SourceBlock(attribution, count, tuple(facts), reasons))
        for file_name, report in sorted(self.reports.items()):
            if file_name in used:
                continue
            attribution = Attribution(
                report.source or file_name,
                report.name or file_name,
                report.licence or "",
                report.copyright or "",
                report.repository,
            )
            blocks.append(
                SourceBlock(attribution, 0, tuple(self.report_facts(report)), report.reasons)
            )
        return tuple(blocks)

    def report_facts(self, report: SourceReport) -> list[Fact]:
        facts = [Fact("Import report", f"_sources/{report.file}", code=True)]
        if report.repository:
            facts.append(Fact("Upstream repository", report.repository, report.repository))
        if report.commit:
            facts.append(Fact("Upstream commit", report.commit, code=True))
        if report.licence:
            facts.append(Fact("Licence (as reported)", report.licence))
        facts += [Fact(label, text, link) for label, text, link in report.facts]
        if report.skipped is not None:
            facts.append(Fact("Rows skipped", f"{report.skipped:,}"))
        return facts

    # kernels -------------------------------------------------------------------------------

    def kernel(self, kernel: Kernel) -> Page:
        path = self.urls.path_of(kernel.key) or ""
        colours = colours_for([i.digest for i in kernel.implementations])
        # The charts this kernel had (a PlanCache's), and those it has now, which replace them.
        kept = self.plans.charts.get(kernel.key, {}) if self.plans is not None else None
        charts: dict[tuple[Any, ...], ChartBlock] = {}
        sections = passes_of(kernel)
        passes = tuple(self.pass_block(p, colours, kept, charts) for p in sections)
        if self.plans is not None:
            self.plans.charts[kernel.key] = charts
        operation = kernel.operation
        facts: list[Fact] = []
        operands: list[Operand] = []
        description = None
        refs: tuple[Link, ...] = ()
        if operation is not None:
            spec = self.spec(operation)
            metadata = self.document(operation)["metadata"]
            description = metadata.get("description")
            refs = tuple(Link(r["url"], r["url"]) for r in metadata.get("sourceRefs") or ())
            facts.append(Fact("Family", spec["family"]))
            axes = [
                f"{name} ({axis['role']}"
                + (f": {axis['expression']}" if "expression" in axis else "")
                + (f" = {axis['value']}" if "value" in axis else "")
                + ")"
                for name, axis in spec["axes"].items()
            ]
            facts.append(Fact("Axes", ", ".join(axes)))
            semantics = spec["semantics"]
            facts.append(Fact("Mutation", semantics["mutation"]))
            facts.append(Fact("Determinism", semantics["determinism"]))
            if "expression" in semantics:
                facts.append(Fact("Computes", semantics["expression"], code=True))
            for direction, key in (("input", "inputs"), ("output", "outputs")):
                for operand in spec[key]:
                    if "tensor" in operand:
                        tensor = operand["tensor"]
                        operands.append(
                            Operand(
                                direction,
                                operand["name"],
                                "[" + ", ".join(str(d) for d in tensor["shape"]) + "]",
                                tensor["dtype"],
                            )
                        )
                    else:
                        operands.append(
                            Operand(
                                direction, operand["name"], "scalar", operand["scalar"]["dtype"]
                            )
                        )
        facts.append(Fact("Runs", f"{len(kernel.runs):,}"))
        facts.append(
            Fact(
                "GPUs",
                ", ".join(sorted({self.gpu_label(e) for e in kernel.environments})) or "none yet",
            )
        )
        counts: dict[str, int] = defaultdict(int)
        for run in kernel.runs:
            counts[run.implementation] += 1
        implementations = tuple(
            ImplementationRow(
                implementation=Link(
                    title_of(i.entry) if i.entry else i.label, self.urls.link(i.digest)
                ),
                label=i.label,
                baseline=i.baseline,
                project=self.projects.get(i.digest),
                runs=counts[i.digest],
            )
            for i in kernel.implementations
        )
        meta = self.meta(
            kernel.title,
            path,
            f"{kernel.title}: benchmark results of {len(kernel.implementations)} implementations "
            f"on {len(kernel.environments)} GPUs.",
            "kernels",
            kernel.runs,
            charts=any(g.charts for p in passes for g in p.gpus),
        )
        context = KernelContext(
            meta=meta,
            description=description,
            facts=tuple(facts),
            operands=tuple(operands),
            implementations=implementations,
            passes=passes,
            source_refs=refs,
            identity=self.identity(operation) if operation else None,
            derived=operation is None,
        )
        return Page(path, "kernel.html", context, self.kernel_twin(kernel, sections, passes))

    def pass_block(
        self,
        section: PassSection,
        colours: dict[str, str],
        kept: Mapping[tuple[Any, ...], ChartBlock] | None = None,
        used: dict[tuple[Any, ...], ChartBlock] | None = None,
    ) -> PassBlock:
        gpus = []
        for gpu in section.gpus:
            label = self.gpu_label(gpu.environment)
            charts = tuple(self.kept_chart(s, colours, kept, used) for s in gpu.series)
            gpus.append(
                GpuBlock(
                    anchor=anchor(section.name, label, short(gpu.environment, 8)),
                    gpu=Link(label, self.urls.link(gpu.environment)),
                    charts=charts,
                    missing=tuple(i.label for i in gpu.missing),
                )
            )
        return PassBlock(
            anchor=anchor(section.name),
            name=section.name,
            gpus=tuple(gpus),
            missing_gpus=tuple(
                Link(self.gpu_label(e), self.urls.link(e)) for e in section.missing_gpus
            ),
        )

    def kept_chart(
        self,
        series: Series,
        colours: dict[str, str],
        kept: Mapping[tuple[Any, ...], ChartBlock] | None,
        used: dict[tuple[Any, ...], ChartBlock] | None,
    ) -> ChartBlock:
        """The chart of `series`: `kept`'s if it shows the same, else planned (and noted in
        `used`, rendered HTML kept with it, when there is a cache: `kept` is not None)."""
        if kept is None or used is None:
            return self.chart_block(series, colours)
        key = self.chart_key(series, colours)
        chart = kept.get(key)
        if chart is None:
            chart = self.chart_block(series, colours, KeptMarkup(keep=True))
        used[key] = chart
        return chart

    def chart_key(self, series: Series, colours: dict[str, str]) -> tuple[Any, ...]:
        """Everything a chart shows that a run can change: its implementations (labels come
        from runs) and colours, and per shape each cell's run (its digest names its content
        and its page), rank and count of earlier runs. A run's value and ratios follow from
        the digests of its shape's cells."""
        return (
            series.element_id,
            series.protocol,
            series.metric,
            series.unit,
            series.swept,
            series.fixed,
            tuple(
                (i.digest, i.label, i.baseline, colours[i.digest]) for i in series.implementations
            ),
            tuple(
                (
                    row.workload,
                    row.x,
                    tuple(
                        (
                            cell.implementation.digest,
                            cell.run.digest if cell.run is not None else None,
                            cell.rank,
                            cell.earlier,
                        )
                        for cell in row.cells
                    ),
                )
                for row in series.rows
            ),
        )

    def chart_block(
        self, series: Series, colours: dict[str, str], rendered: KeptMarkup | None = None
    ) -> ChartBlock:
        numbers = Numbers(series.metric, series.unit)
        spread = _spread_names(series)
        protocol = self.link(series.protocol)
        fixed = series.fixed.label()
        measured = (
            "median " + metric_name(series.metric)
            if series.metric == LATENCY
            else metric_name(series.metric)
        )
        title = (
            f"{measured.capitalize()} against {series.swept}"
            if series.swept
            else measured.capitalize()
        )
        if fixed != "unknown shape":
            title += f" · {fixed}"
        spec = chart_spec(series, colours, lambda d: self.urls.link(d) or "", numbers.one)
        shapes = []
        for row in series.rows:
            label = (
                f"{series.swept} = {row.x:,}"
                if series.swept and row.x is not None
                else row.shape.label()
            )
            shapes.append(
                ShapeTable(
                    label,
                    self.link(row.workload, row.shape.label()),
                    tuple(self.rank_row(c, numbers) for c in row.cells),
                )
            )
        points = sum(1 for row in series.rows for c in row.cells if c.value is not None)
        fallback = (
            f"Chart of {measured} ({numbers.unit}) for {len(series.implementations)} "
            f"implementations at {len(series.rows)} shapes ({points} measurements); "
            "the table below lists every value."
        )
        return ChartBlock(
            element_id=series.element_id,
            title=title,
            protocol=protocol,
            metric=measured,
            unit=numbers.unit,
            spread_label=f"{spread[0]} – {spread[1]}" if spread else "spread",
            best_label="× fastest" if series.metric == LATENCY else "× lowest",
            spec=spec,
            fallback=fallback,
            shapes=tuple(shapes),
            data=self.chart_twin(series, spec),
            rendered=rendered or KeptMarkup(),
        )

    def rank_row(self, cell: Cell, numbers: Numbers) -> RankRow:
        implementation = cell.implementation
        impl_link = Link(implementation.label, self.urls.link(implementation.digest))
        if cell.run is None:
            return RankRow(
                "—",
                impl_link,
                implementation.baseline,
                "not measured",
                "",
                "",
                "",
                None,
                "not measured",
            )
        run_link = Link(short(cell.run.digest), self.urls.link(cell.run.digest))
        earlier = (
            f"+{cell.earlier} earlier run{'s' if cell.earlier != 1 else ''}" if cell.earlier else ""
        )
        if cell.value is None:
            note = (
                f"status: {cell.run.status}"
                if cell.run.status != "passed"
                else "no value for this metric"
            )
            return RankRow(
                "—",
                impl_link,
                implementation.baseline,
                "—",
                "",
                "",
                "",
                run_link,
                "; ".join(p for p in (note, earlier) if p),
            )
        centre, low, high = numbers.aligned(cell.value)
        return RankRow(
            rank=str(cell.rank),
            implementation=impl_link,
            baseline=implementation.baseline,
            value=centre,
            spread=f"{low} – {high}" if low and high else "",
            vs_best=ratio(cell.vs_best),
            vs_baseline=ratio(cell.vs_baseline)
            if cell.vs_baseline is not None
            else ("—" if not implementation.baseline else "1.00×"),
            run=run_link,
            note=earlier,
        )

    def chart_twin(self, series: Series, spec: dict[str, Any]) -> dict[str, Any]:
        def cell_json(cell: Cell) -> dict[str, Any]:
            item: dict[str, Any] = {
                "implementation": cell.implementation.digest,
                "label": cell.implementation.label,
            }
            if cell.run is None:
                item["measured"] = False
                return item
            item |= {
                "run": cell.run.digest,
                "url": self.urls.link(cell.run.digest),
                "status": cell.run.status,
            }
            if cell.value is not None:
                item |= {
                    "rank": cell.rank,
                    "value": cell.value.centre,
                    "low": cell.value.low,
                    "high": cell.value.high,
                    "vsFastest": cell.vs_best,
                    "vsBaseline": cell.vs_baseline,
                }
            return item

        return {
            "id": series.element_id,
            "protocol": series.protocol,
            "metric": series.metric,
            "unit": series.unit,
            "sweptAxis": series.swept,
            "fixed": series.fixed.label(),
            "shapes": [
                {"workload": r.workload, "x": r.x, "ranking": [cell_json(c) for c in r.cells]}
                for r in series.rows
            ],
            "chart": spec,
        }

    def kernel_twin(
        self, kernel: Kernel, sections: tuple[PassSection, ...], passes: tuple[PassBlock, ...]
    ) -> dict[str, Any]:
        twins = []
        for section, block in zip(sections, passes, strict=True):
            gpus = []
            for gpu, gpu_block in zip(section.gpus, block.gpus, strict=True):
                charts = [chart.data for chart in gpu_block.charts]
                gpus.append(
                    {"environment": gpu.environment, "label": gpu_block.gpu.text, "charts": charts}
                )
            twins.append(
                {"pass": section.name, "gpus": gpus, "notMeasuredOn": list(section.missing_gpus)}
            )
        return {
            "kernel": {
                "title": kernel.title,
                "url": self.urls.link(kernel.key),
                "operationSpecDigest": kernel.operation.digest if kernel.operation else None,
            },
            "implementations": [
                {
                    "digest": i.digest,
                    "label": i.label,
                    "baseline": i.baseline,
                    "url": self.urls.link(i.digest),
                }
                for i in kernel.implementations
            ],
            "passes": twins,
        }

    # runs ----------------------------------------------------------------------------------

    def run(self, run: RunFacts) -> Page:
        entry = run.entry
        path = self.urls.path_of(run.digest) or ""
        spec = self.spec(entry)
        metadata = self.document(entry)["metadata"]
        headlines = []
        for value in run.values:
            numbers = Numbers(value.metric, value.unit)
            centre, low, high = numbers.aligned(value)
            spread = ""
            if value.spread and low and high:
                spread = f"{value.spread[0]} {low} / {value.spread[1]} {high} {numbers.unit}"
            headlines.append(
                Headline(
                    metric=f"{value.statistic} {metric_name(value.metric)}",
                    value=f"{centre} {numbers.unit}",
                    exact=exact(value.centre, display_unit("", value.unit))
                    if numbers.divisor != 1.0
                    else "",
                    spread=spread,
                )
            )
        tensors, scalars = self.workload_tables(run.workload)
        kernel = self.kernels[run.kernel_key]
        summary = (
            Fact("Kernel", kernel.title, self.urls.link(kernel.key)),
            self.reference("Implementation", run.implementation, run.provider),
            Fact("Pass", run.pass_name),
            self.reference("GPU", run.environment, self.gpu_label(run.environment)),
            self.reference("Workload", run.workload, run.shape.label()),
            self.reference("Protocol", run.protocol),
        )
        labels = tuple(Fact(k, v) for k, v in sorted((metadata.get("labels") or {}).items()))
        groups = [
            FactGroup("Protocol", self.protocol_facts(run.protocol)),
            FactGroup("Environment", self.environment_facts(run.environment)),
        ]
        if "correctness" in spec:
            groups.append(
                FactGroup(
                    "Correctness", tuple(Fact(k, str(v)) for k, v in spec["correctness"].items())
                )
            )
        if "evidence" in spec:
            groups.append(
                FactGroup(
                    "Evidence",
                    tuple(
                        Fact(k, str(v), v if k == "logUrl" else None, code=k == "artifactDigest")
                        for k, v in spec["evidence"].items()
                    ),
                )
            )
        meta = self.meta(
            run.title,
            path,
            f"{run.title}: {headlines[0].value if headlines else run.status} "
            f"on {self.gpu_label(run.environment)}, {run.shape.label()}.",
            "runs",
            [run],
        )
        context = RunContext(
            meta=meta,
            headlines=tuple(headlines),
            status=run.status,
            observed=when(run.observed_at),
            observed_iso=run.observed_at,
            summary=summary,
            labels=labels,
            provenance=self.provenance_facts(run),
            tensors=tensors,
            scalars=scalars,
            groups=tuple(g for g in groups if g.facts),
            description=metadata.get("description"),
            identity=self.identity(entry),
        )
        twin = self.resource_twin(
            entry,
            derived={
                "kernel": {"title": kernel.title, "url": self.urls.link(kernel.key)},
                "pass": run.pass_name,
                "implementationLabel": run.provider,
                "gpu": self.gpu_label(run.environment),
                "links": {
                    "implementation": self.urls.link(run.implementation),
                    "workload": self.urls.link(run.workload),
                    "protocol": self.urls.link(run.protocol),
                    "environment": self.urls.link(run.environment),
                },
            },
        )
        return Page(path, "run.html", context, twin)

    def workload_tables(self, digest_value: str) -> tuple[tuple[Tensor, ...], tuple[Fact, ...]]:
        """A workload's tensors and scalars, as its runs' pages show them (made once each)."""
        found = self.workload_parts.get(digest_value)
        if found is not None:
            return found
        workload = self.catalog.get(digest_value, "WorkloadCase")
        tensors: tuple[Tensor, ...] = ()
        scalars: tuple[Fact, ...] = ()
        if workload is not None:
            spec = self.spec(workload)
            tensors = tuple(
                Tensor(name, " × ".join(str(d) for d in t["shape"]) or "scalar", t["dtype"])
                for name, t in spec["tensors"].items()
            )
            scalars = tuple(
                Fact(name, f"{json.dumps(s['value'])} ({s['dtype']})")
                for name, s in spec.get("scalars", {}).items()
            )
        found = self.workload_parts[digest_value] = (tensors, scalars)
        return found

    def reference(self, label: str, digest_value: str, text: str | None = None) -> Fact:
        """A link to a referenced resource, or its digest when the catalog lacks it (exports)."""
        href = self.urls.link(digest_value)
        if href is None:
            return Fact(label, f"{digest_value} (not in this catalog)", code=True)
        return Fact(label, text or self.link(digest_value).text, href)

    def protocol_facts(self, digest_value: str) -> tuple[Fact, ...]:
        found = self.shared_facts.get(digest_value)
        if found is None:
            found = self.shared_facts[digest_value] = self._protocol_facts(digest_value)
        return found

    def _protocol_facts(self, digest_value: str) -> tuple[Fact, ...]:
        entry = self.catalog.get(digest_value, "BenchmarkProtocol")
        if entry is None:
            return ()
        spec = self.spec(entry)
        harness, measurement = spec["harness"], spec["measurement"]
        facts = [Fact("Protocol", title_of(entry), self.urls.link(digest_value))]
        facts.append(
            Fact("Harness", " ".join(p for p in (harness["name"], harness.get("version", "")) if p))
        )
        if "repository" in harness:
            facts.append(Fact("Harness repository", harness["repository"], harness["repository"]))
        if "commit" in harness:
            facts.append(Fact("Harness commit", harness["commit"], code=True))
        facts.append(Fact("Timer", measurement["timer"].replace("_", " ")))
        facts.append(Fact("Primary statistic", measurement["primaryStatistic"]))
        for key, label in (
            ("synchronization", "Synchronization"),
            ("warmupIterations", "Warm-up iterations"),
            ("warmupDuration", "Warm-up (ns)"),
            ("measuredIterations", "Measured iterations"),
            ("samples", "Samples"),
            ("compileIncluded", "Compile time included"),
            ("setupIncluded", "Setup included"),
            ("inputRegeneration", "Input regeneration"),
            ("outlierPolicy", "Outlier policy"),
        ):
            if key in measurement:
                value = measurement[key]
                facts.append(
                    Fact(
                        label, ("yes" if value else "no") if isinstance(value, bool) else str(value)
                    )
                )
        if "comparability" in spec:
            facts.append(Fact("Comparability family", spec["comparability"]["family"], code=True))
        return tuple(facts)

    def environment_facts(self, digest_value: str) -> tuple[Fact, ...]:
        found = self.shared_facts.get(digest_value)
        if found is None:
            found = self.shared_facts[digest_value] = self._environment_facts(digest_value)
        return found

    def _environment_facts(self, digest_value: str) -> tuple[Fact, ...]:
        entry = self.catalog.get(digest_value, "ExecutionEnvironment")
        if entry is None:
            return ()
        spec = self.spec(entry)
        hardware, software = spec["hardware"], spec["software"]
        facts = [Fact("Environment", title_of(entry), self.urls.link(digest_value))]
        product = hardware["product"]
        vendor = hardware["vendor"]
        facts.append(
            Fact(
                "GPU",
                product if product.lower().startswith(vendor) else f"{vendor.upper()} {product}",
            )
        )
        facts.append(Fact("Architecture", hardware["architecture"], code=True))
        for key, label in (
            ("formFactor", "Form factor"),
            ("count", "Count"),
            ("interconnect", "Interconnect"),
        ):
            if key in hardware:
                facts.append(Fact(label, str(hardware[key])))
        if "memoryBytes" in hardware:
            facts.append(Fact("Memory", f"{hardware['memoryBytes'] / 2**30:,.0f} GiB"))
        for key, label in (
            ("operatingSystem", "Operating system"),
            ("kernel", "OS kernel"),
            ("driver", "Driver"),
            ("cudaToolkit", "CUDA toolkit"),
            ("compiler", "Compiler"),
        ):
            if key in software:
                facts.append(Fact(label, software[key]))
        if "framework" in software:
            facts.append(
                Fact(
                    "Framework",
                    f"{software['framework']['name']} {software['framework']['version']}",
                )
            )
        for library in software.get("libraries", []):
            facts.append(Fact("Library", f"{library['name']} {library['version']}"))
        if not software:
            facts.append(Fact("Software", "not recorded"))
        for key, value in sorted(spec.get("settings", {}).items()):
            facts.append(Fact(f"Setting {key}", json.dumps(value)))
        if "imageDigest" in spec:
            facts.append(Fact("Image digest", spec["imageDigest"], code=True))
        return tuple(facts)

    def provenance_facts(self, run: RunFacts) -> tuple[Fact, ...]:
        native = self.spec(run.entry).get("sourceNative")
        facts: list[Fact] = []
        if native is not None:
            attribution = attribution_for(native["source"], self.reports)
            facts.append(Fact("Source", native["source"], code=True))
            if attribution.repository:
                facts.append(
                    Fact("Upstream repository", attribution.repository, attribution.repository)
                )
            if "benchmark" in native:
                facts.append(Fact("Benchmark", native["benchmark"], code=True))
            if "externalId" in native:
                facts.append(Fact("External id", native["externalId"], code=True))
            for key, value in sorted(native.get("metrics", {}).items()):
                facts.append(Fact(f"Raw {key}", repr(value), code=True))
        facts.append(Fact("Name", run.entry.name, code=True))
        for ref in self.document(run.entry)["metadata"].get("sourceRefs") or ():
            facts.append(Fact("Source reference", ref["url"], ref["url"]))
        return tuple(facts)

    # other resources -----------------------------------------------------------------------

    def resource(self, entry: LoadedResource) -> Page:
        path = self.urls.path_of(entry.digest) or ""
        kind = entry.kind
        users = self.users(entry.digest)
        ordered = self.resource_runs(entry)
        others = [u for u in users if u.kind != "BenchmarkRun"]
        groups: list[FactGroup] = []
        notes = None
        extra_links: list[Link] = []
        users_title = "Used by"
        spec = self.spec(entry)
        if kind == "BenchmarkProtocol":
            groups.append(FactGroup("How it was measured", self.protocol_facts(entry.digest)[1:]))
            notes = spec.get("comparability", {}).get("notes")
            for key, label in (("correctness", "Correctness"), ("devicePolicy", "Device policy")):
                if key in spec:
                    groups.append(FactGroup(label, (Fact(label, spec[key]),)))
        elif kind == "ExecutionEnvironment":
            groups.append(
                FactGroup("Hardware and software", self.environment_facts(entry.digest)[1:])
            )
        elif kind == "WorkloadCase":
            groups += self.workload_groups(entry, spec)
        elif kind == "ImplementationRevision":
            groups += self.implementation_groups(entry, spec)
        elif kind == "SoftwareProject":
            groups.append(FactGroup("Project", self.project_facts(spec)))
            users_title = "Implementations"
            extra_links = [self.link(d) for d in self.project_implementations(entry)]
        meta = self.meta(
            title_of(entry),
            path,
            f"{KIND_WORDS[kind].capitalize()} {title_of(entry)} in kernelindex.",
            SECTIONS[kind],
            ordered,
        )
        paths = self.resource_page_paths(entry)
        pager = self.pager(paths, 1)
        context = ResourceContext(
            meta=meta,
            kind_word=KIND_WORDS[kind],
            description=entry.metadata.get("description"),
            groups=tuple(g for g in groups if g.facts),
            notes=notes,
            runs=tuple(self.run_row(r) for r in ordered[:RUNS_PER_PAGE]),
            users=tuple(
                [
                    *extra_links,
                    *(
                        Link(f"{KIND_WORDS[u.kind]}: {title_of(u)}", self.urls.link(u.digest))
                        for u in others
                    ),
                ]
            ),
            users_title=users_title,
            identity=self.identity(entry),
            run_total=len(ordered),
            pager=pager,
        )
        twin = self.resource_twin(
            entry,
            usedBy=[
                {"kind": u.kind, "digest": u.digest, "url": self.urls.link(u.digest)} for u in users
            ],
        )
        if kind == "SoftwareProject":
            twin["implementations"] = [link.href for link in extra_links]
        return Page(path, "resource.html", context, twin)

    def page_key(self, *parts: str, runs: Iterable[RunFacts] = ()) -> str | None:
        """The page's name and the tokens of the runs it shows (None unless keyed)."""
        if not self.keyed:
            return None
        digest = hashlib.sha256("\0".join(parts).encode())
        digest.update("".join([run.entry.token for run in runs]).encode())
        return digest.hexdigest()

    def project_implementations(self, entry: LoadedResource) -> list[str]:
        """The implementations linked to a SoftwareProject (docs/site.md), by title."""
        href = self.urls.link(entry.digest)
        return sorted(
            (d for d, link in self.projects.items() if link.href == href),
            key=lambda d: (title_of(self.catalog.by_digest[d]), d),
        )

    def resource_runs(self, entry: LoadedResource) -> list[RunFacts]:
        """The runs a resource page lists, in their order; a project lists its implementations'."""
        found = self.resource_run_lists.get(entry.digest)
        if found is None:
            sources = self.run_sources(entry)
            kept = self.plans.run_lists.get(entry.digest) if self.plans is not None else None
            if kept is not None and self.replan is not None:
                found = _patched_run_list(kept, self.replan, set(sources))
            if found is None:
                found = self.ordered_runs(self.runs[d] for d in self.run_digests(sources))
            self.resource_run_lists[entry.digest] = found
            if self.plans is not None:
                self.plans.run_lists[entry.digest] = found
        return found

    def run_sources(self, entry: LoadedResource) -> list[str]:
        """The resources whose runs a resource page lists: itself, or a project's
        implementations."""
        if entry.kind == "SoftwareProject":
            return self.project_implementations(entry)
        return [entry.digest]

    def run_digests(self, sources: list[str]) -> Iterator[str]:
        return (u.digest for d in sources for u in self.users(d) if u.kind == "BenchmarkRun")

    def resource_run_count(self, entry: LoadedResource) -> int:
        """How many runs a resource page lists, without putting them in order (unless they
        are in order already, or an incremental build's keys need the order)."""
        if self.keyed or entry.digest in self.resource_run_lists:
            return len(self.resource_runs(entry))
        # A run references one resource of each kind it names: the tallies count its users.
        return sum(self.run_counts[d] for d in self.run_sources(entry))

    def resource_page_paths(self, entry: LoadedResource) -> list[str]:
        """The resource's page, then one page per further RUNS_PER_PAGE runs it lists."""
        path = self.urls.path_of(entry.digest) or ""
        count = self.page_count(self.resource_run_count(entry))
        return [path] + [f"{path}runs/{n}/" for n in range(2, count + 1)]

    def resource_continuation(self, entry: LoadedResource, number: int) -> Page:
        title = title_of(entry)
        word = KIND_WORDS[entry.kind]
        return self.run_list_page(
            self.resource_page_paths(entry)[number - 1],
            f"{title} · runs",
            f"The runs of {word} {title}, as on its page.",
            SECTIONS[entry.kind],
            self.resource_runs(entry),
            self.resource_page_paths(entry),
            number,
            RUN_LIST_COLUMNS,
            {"of": self.urls.link(entry.digest)},
        )

    def workload_groups(self, entry: LoadedResource, spec: dict[str, Any]) -> list[FactGroup]:
        operation = spec["operationSpecDigest"]
        kernel_href = self.urls.link(operation)
        kernel = self.kernels.get(operation)
        facts = [
            Fact("Kernel", kernel.title if kernel else operation, kernel_href, code=kernel is None)
        ]
        facts += [Fact(f"Axis {name}", f"{value:,}") for name, value in spec["axes"].items()]
        tensors = tuple(
            Fact(
                f"Tensor {name}",
                f"{' × '.join(str(d) for d in t['shape']) or 'scalar'} · {t['dtype']}",
            )
            for name, t in spec["tensors"].items()
        )
        scalars = tuple(
            Fact(f"Scalar {name}", f"{json.dumps(s['value'])} ({s['dtype']})")
            for name, s in spec.get("scalars", {}).items()
        )
        correctness = tuple(Fact(k, str(v)) for k, v in spec["correctness"].items())
        return [
            FactGroup("Shape", tuple(facts)),
            FactGroup("Tensors", tensors + scalars),
            FactGroup("Correctness", correctness),
        ]

    def implementation_groups(self, entry: LoadedResource, spec: dict[str, Any]) -> list[FactGroup]:
        operation = spec["operation"]["specDigest"]
        kernel = self.kernels.get(operation)
        facts = [
            Fact(
                "Kernel",
                kernel.title if kernel else operation,
                self.urls.link(operation),
                code=kernel is None,
            )
        ]
        project = self.projects.get(entry.digest)
        if project is not None:
            facts.append(Fact("Project", project.text, project.href))
        labels = entry.metadata.get("labels") or {}
        if labels.get("role") == "baseline":
            facts.append(Fact("Role", "baseline: ratios on kernel pages are relative to it"))
        callable_ = spec["callable"]
        facts.append(Fact("Language", callable_["language"]))
        for key in ("path", "symbol", "interface"):
            if key in callable_:
                facts.append(Fact(key.capitalize(), callable_[key], code=True))
        revision = spec["projectRevision"]
        for key, label in (
            ("repository", "Repository"),
            ("commit", "Commit"),
            ("version", "Version"),
            ("treeDigest", "Tree digest"),
        ):
            if key in revision:
                facts.append(
                    Fact(
                        label,
                        revision[key],
                        revision[key] if key == "repository" else None,
                        code=key != "repository",
                    )
                )
        support = spec["support"]
        support_facts = [
            Fact("Architectures", ", ".join(support["hardwareArchitectures"]) or "not declared"),
            Fact("Dtypes", ", ".join(support["dtypes"]) or "not declared"),
        ]
        for key, label in (
            ("productsTested", "Products tested"),
            ("axes", "Axes"),
            ("layouts", "Layouts"),
        ):
            if key in support:
                support_facts.append(Fact(label, ", ".join(support[key])))
        build = []
        for variant in spec.get("buildVariants", []):
            install = variant["install"]
            text = " ".join(
                str(install[k])
                for k in ("kind", "package", "version", "repository", "commit", "command")
                if k in install
            )
            build.append(Fact(variant["name"], text, code=True))
        licensing = tuple(Fact(k.capitalize(), v) for k, v in spec["licensing"].items())
        if "source" in spec:
            source = spec["source"]
            facts.append(
                Fact(
                    "Source",
                    " ".join(
                        str(source[k]) for k in ("repository", "commit", "path") if k in source
                    ),
                    source["repository"],
                )
            )
        return [
            FactGroup("Implementation", tuple(facts)),
            FactGroup("Support", tuple(support_facts)),
            FactGroup("Build variants", tuple(build)),
            FactGroup("Licensing", licensing or (Fact("Licence", "not declared"),)),
        ]

    def project_facts(self, spec: dict[str, Any]) -> tuple[Fact, ...]:
        facts = [Fact("Name", spec["name"])]
        if "kind" in spec:
            facts.append(Fact("Kind", spec["kind"]))
        for key, label in (("repository", "Repository"), ("homepage", "Homepage")):
            if key in spec:
                facts.append(Fact(label, spec[key], spec[key]))
        if "host" in spec:
            facts.append(Fact("Host", f"{spec['host']['kind']}: {spec['host']['id']}"))
        for package in spec.get("packages", []):
            facts.append(Fact("Package", f"{package['ecosystem']}: {package['name']}", code=True))
        return tuple(facts)

    def _project_links(self) -> dict[str, Link]:
        """Implementation digest → its project, by the rule documented in docs/site.md."""
        projects = self.catalog.of_kind("SoftwareProject")
        by_repository: dict[str, LoadedResource] = {}
        by_package: dict[str, LoadedResource] = {}
        by_name: dict[str, LoadedResource] = {}
        for project in projects:
            spec = self.spec(project)
            for repository in (spec.get("repository"), _host_url(spec.get("host"))):
                if repository:
                    by_repository.setdefault(_repository_key(repository), project)
            for package in spec.get("packages", []):
                by_package.setdefault(f"{package['ecosystem']}:{package['name'].lower()}", project)
            by_name.setdefault(project.name, project)
        found: dict[str, Link] = {}
        for implementation in self.catalog.of_kind("ImplementationRevision"):
            project = _project_of(implementation, by_repository, by_package, by_name)
            if project is not None:
                found[implementation.digest] = Link(
                    title_of(project), self.urls.link(project.digest)
                )
        return found

    # previews: the banner and the changes page ----------------------------------------------

    @property
    def has_changes_page(self) -> bool:
        return self.baseline is not None or self.deployment.compares

    def banner(self) -> tuple[Link, ...]:
        """`Deploy preview for pull request #123 · commit abc1234 · see what it changes →`."""
        deployment = self.deployment
        if deployment.production:
            return ()
        if deployment.context == DEPLOY_PREVIEW:
            number = deployment.review_id
            title = f"Deploy preview for pull request #{number}" if number else "Deploy preview"
            parts = [Link(title, deployment.pull_request_url())]
        elif deployment.context == BRANCH_DEPLOY:
            branch = deployment.branch
            parts = [Link(f"Branch deploy of {branch}" if branch else "Branch deploy")]
        else:
            parts = [Link(f"Preview build ({deployment.context})")]
        if deployment.commit:
            parts.append(Link(f"commit {deployment.short_commit}", deployment.commit_url()))
        if self.has_changes_page:
            parts.append(Link("see what it changes →", self.urls.href("changes/")))
        return tuple(parts)

    def changes_page(self) -> Page:
        path = "changes/"
        changes, baseline = self.changes, self.baseline
        review = self.deployment.review_id
        title = f"What pull request #{review} changes" if review else "What this build changes"
        base = baseline.label if baseline is not None else "nothing"
        if changes is None:
            summary = "The base could not be read, so there is nothing to compare with."
            if baseline is None:
                summary = "No base was given to compare with."
        else:
            summary = summary_line(changes)
        meta = self.meta(title, path, summary, "")
        sections: tuple[ChangeSection, ...] = ()
        counts: tuple[Fact, ...] = ()
        if changes is not None:
            base_site = changes.base.site
            sections = tuple(self.change_section(g, base_site) for g in changes.groups)
            counts = tuple(
                Fact(label, f"{changes.total(what):,}")
                for what, label in (
                    ("added", "Added"),
                    ("removed", "Removed"),
                    ("modified", "Metadata modified"),
                    ("moved", "Runs moved"),
                    ("replaced", "Runs measured again, same value"),
                )
                if changes.total(what)
            )
        context = ChangesContext(
            meta=meta,
            head=changes.head.label if changes else self.deployment_label(),
            base=base,
            summary=summary,
            counts=counts,
            unread=changes is None,
            notes=baseline.notes if baseline is not None else (),
            sections=sections,
        )
        twin: dict[str, Any] = {"title": title, "summary": summary}
        if changes is not None:
            twin |= changes_document(changes)
        twin["baseNotes"] = list(context.notes)
        return Page(path, "changes.html", context, twin)

    def deployment_label(self) -> str:
        commit = self.deployment.short_commit
        return f"this build at {commit}" if commit else "this build"

    def change_section(self, group: Group, base_site: str) -> ChangeSection:
        kernel = None
        if group.kernel is not None:
            path = group.kernel.path
            href = self.urls.href(path) if group.kernel_in_head else base_site + path
            kernel = Link(group.kernel.title, href)
        title = kernel.text if kernel else "Protocols, GPUs and projects"
        return ChangeSection(
            anchor="kernel-" + anchor(title) if kernel else "other-resources",
            title=title,
            kernel=kernel,
            moved=tuple(self.run_change_row(c, base_site) for c in group.moved),
            replaced=tuple(self.run_change_row(c, base_site) for c in group.replaced),
            added=tuple(self.change_item(e, self.urls.href(e.path)) for e in group.added),
            removed=tuple(self.change_item(e, base_site + e.path) for e in group.removed),
            modified=tuple(self.modified_item(m) for m in group.modified),
        )

    def change_item(self, entry: Entry, href: str, note: str = "") -> ChangeItem:
        return ChangeItem(
            kind_word=KIND_WORDS[entry.kind],
            resource=Link(entry.title, href),
            facts=run_facts(entry),
            value=value_text(entry),
            note=note,
        )

    def modified_item(self, item: Modified) -> ChangeItem:
        notes = []
        for change in item.fields:
            if change.before is None:
                notes.append("description, labels, authors or source references changed")
            else:
                notes.append(f"{change.field}: “{change.before}” → “{change.after}”")
        return self.change_item(item.head, self.urls.href(item.head.path), "; ".join(notes))

    def run_change_row(self, change: RunChange, base_site: str) -> RunChangeRow:
        run = change.head.run
        assert run is not None  # only runs are paired
        return RunChangeRow(
            run=Link(change.head.title, self.urls.href(change.head.path)),
            was=Link(short(change.base.digest), base_site + change.base.path),
            pass_name=run.pass_name,
            gpu=run.gpu,
            implementation=run.implementation,
            shape=run.shape,
            before=change.before,
            after=change.after,
            change=change.change,
            percent=change.percent,
        )

    # lists, feed, 404 ----------------------------------------------------------------------

    def lists(self) -> list[Page | LazyPage]:
        pages: list[Page | LazyPage] = []
        kernel_rows = tuple(
            (
                Link(k.title, self.urls.link(k.key)),
                Link(str(len(k.implementations))),
                Link(", ".join(sorted({self.gpu_label(e) for e in k.environments})) or "—"),
                Link(str(len(k.runs))),
            )
            for k in self.analysis.kernels
        )
        pages.append(
            self.list_page(
                "kernels",
                "Operations and the implementations measured on them.",
                ("Kernel", "Implementations", "GPUs", "Runs"),
                kernel_rows,
            )
        )
        for kind, intro, columns in (
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
            (
                "WorkloadCase",
                "Concrete shapes the kernels were run at.",
                ("Workload", "Kernel", "Runs"),
            ),
        ):
            rows = tuple(self.list_row(entry) for entry in self.catalog.of_kind(kind))
            pages.append(self.list_page(SECTIONS[kind], intro, columns, rows))
        runs = self.analysis.newest
        intro = "Every run, newest first. Each links to its page with provenance and digest."
        if len(runs) <= RUNS_PER_PAGE:
            rows = tuple(self.run_cells(self.run_row(r), RUNS_COLUMNS) for r in runs)
            pages.append(self.list_page("runs", intro, RUNS_COLUMNS, rows, runs))
            return pages
        paths = ["runs/"] + [f"runs/page/{n}/" for n in range(2, self.page_count(len(runs)) + 1)]
        before = self.replan.newest if self.replan is not None else None
        for number, path in enumerate(paths, start=1):
            if (
                before is not None
                and len(before) == len(runs)
                and all(map(operator.is_, page_of(before, number), page_of(runs, number)))
            ):
                # The same runs (immutable facts) as the last build's page shows: as written.
                self.unchanged.append(path)
                continue
            build = functools.partial(
                self.run_list_page,
                path,
                "Runs",
                intro,
                "runs",
                runs,
                paths,
                number,
                RUNS_COLUMNS,
                {},
            )
            key = self.page_key(f"runs{number}", str(len(runs)), runs=page_of(runs, number))
            pages.append(LazyPage(path, "list.html", build, key))
        return pages

    @property
    def run_counts(self) -> Counter[str]:
        """How many runs reference each resource (`catalog.users` counted, by their facts)."""
        return self.tallies.by_resource

    @functools.cached_property
    def tallies(self) -> Tallies:
        """The runs counted by the resources they reference and by source. A rebuild patches
        the last build's counts with the runs that went and came (at 100k runs counting them
        all again was ~0.07 s of a ~1.3 s rebuild); the counts are kept for the next."""
        kept = self.plans.tallies if self.plans is not None else None
        if kept is not None and self.replan is not None and kept.of is self.replan.newest:
            by_resource, by_source = Counter(kept.by_resource), Counter(kept.by_source)
            for runs, sign in ((self.replan.removed, -1), (self.replan.added, 1)):
                for run in runs:
                    for field_name in _REFERENCE_FIELDS:
                        by_resource[getattr(run, field_name)] += sign
                    by_source[run.source] += sign
            # As counted afresh: no resource or source that no run has any more.
            by_resource, by_source = +by_resource, +by_source
        else:
            runs = self.runs.values()
            by_resource = Counter()
            for field_name in _REFERENCE_FIELDS:
                by_resource.update(map(operator.attrgetter(field_name), runs))
            by_source = Counter(map(_SOURCE, runs))
        tallies = Tallies(self.analysis.newest, by_resource, by_source)
        if self.plans is not None:
            self.plans.tallies = tallies
        return tallies

    def list_row(self, entry: LoadedResource) -> tuple[Link, ...]:
        spec = self.spec(entry)
        link = Link(title_of(entry), self.urls.link(entry.digest))
        runs = self.run_counts[entry.digest]
        if entry.kind == "ExecutionEnvironment":
            return (link, Link(spec["hardware"]["architecture"]), Link(f"{runs:,}"))
        if entry.kind == "ImplementationRevision":
            return (link, self.kernel_link(spec["operation"]["specDigest"]), Link(f"{runs:,}"))
        if entry.kind == "SoftwareProject":
            count = sum(1 for p in self.projects.values() if p.href == link.href)
            repository = spec.get("repository")
            return (link, Link(repository or "—", repository), Link(f"{count:,}"))
        if entry.kind == "BenchmarkProtocol":
            return (link, Link(spec["harness"]["name"]), Link(f"{runs:,}"))
        return (link, self.kernel_link(spec["operationSpecDigest"]), Link(f"{runs:,}"))

    def list_page(
        self,
        section: str,
        intro: str,
        columns: tuple[str, ...],
        rows: tuple[tuple[Link, ...], ...],
        runs: Iterable[RunFacts] = (),
    ) -> Page:
        path = f"{section}/"
        meta = self.meta(SECTION_TITLES[section], path, intro, section, runs)
        twin = {
            "title": SECTION_TITLES[section],
            "columns": list(columns),
            "items": [
                {
                    c: {"text": cell.text, "url": cell.href}
                    for c, cell in zip(columns, row, strict=True)
                }
                for row in rows
            ],
        }
        return Page(path, "list.html", ListContext(meta, intro, columns, rows), twin)

    def feed(self, runs: Sequence[RunFacts]) -> Feed:
        entries = []
        for run in runs:
            value = run.values[0] if run.values else None
            measured = describe(value.metric, value.unit, value) if value else run.status
            path = self.urls.path_of(run.digest) or ""
            entries.append(
                FeedEntry(
                    title=run.title,
                    url=self.urls.absolute(path),
                    id=f"urn:kernelindex:{run.digest}",
                    updated=_atom_time(run.observed_at),
                    summary=f"{measured} ({run.pass_name} pass) on "
                    f"{self.gpu_label(run.environment)} at {run.shape.label()}.",
                )
            )
        return Feed(
            title="kernelindex: newest runs",
            url=self.urls.absolute(""),
            self_url=self.urls.absolute("feed.xml"),
            updated=entries[0].updated if entries else "1970-01-01T00:00:00Z",
            entries=tuple(entries),
        )

    def not_found(self) -> Page:
        meta = self.meta("Page not found", "404.html", "No page at this address.", "")
        return Page("404.html", "404.html", NotFoundContext(meta), None)


# --- helpers ------------------------------------------------------------------------------------


def canonical_text(document: dict[str, Any], digest_value: str) -> str:
    """The RFC 8785 text whose sha256 is `digest_value`."""
    return known_canonical_json(document, digest_value).decode()


def _spread_names(series: Series) -> tuple[str, str] | None:
    for row in series.rows:
        for cell in row.cells:
            if cell.value is not None and cell.value.spread:
                return cell.value.spread
    return None


def _atom_time(instant: str) -> str:
    return instant[:19] + "Z"


def _repository_key(url: str) -> str:
    return url.lower().rstrip("/").removesuffix(".git")


def _host_url(host: dict[str, str] | None) -> str | None:
    if host and host.get("kind") == "github":
        return f"https://github.com/{host['id']}"
    return None


def _project_of(
    implementation: LoadedResource,
    by_repository: dict[str, LoadedResource],
    by_package: dict[str, LoadedResource],
    by_name: dict[str, LoadedResource],
) -> LoadedResource | None:
    """Repository first, then a pip package, then the Liger naming convention (FORMAT.md §5)."""
    spec = implementation.spec
    repositories = [
        spec["projectRevision"].get("repository"),
        spec.get("source", {}).get("repository"),
    ]
    repositories += [v["install"].get("repository") for v in spec.get("buildVariants", [])]
    for repository in repositories:
        if repository and _repository_key(repository) in by_repository:
            return by_repository[_repository_key(repository)]
    for variant in spec.get("buildVariants", []):
        install = variant["install"]
        if install["kind"] == "pip" and "package" in install:
            found = by_package.get(f"pypi:{install['package'].lower()}")
            if found is not None:
                return found
    name = implementation.name
    if name.startswith(LIGER_IMPLEMENTATION_PREFIX):
        # The longest provider that ends the name: `…-liger-rms-norm` before `…-liger`.
        for provider in sorted(LIGER_PROVIDER_PROJECTS, key=len, reverse=True):
            if name.endswith("-" + provider):
                return by_name.get(LIGER_PROVIDER_PROJECTS[provider])
    return None


def build_date_from_epoch(value: str | None) -> str | None:
    """SOURCE_DATE_EPOCH → `2025-07-17`; anything else → no date printed at all."""
    if not value or not value.strip().isdigit():
        return None
    return datetime.fromtimestamp(int(value), tz=UTC).strftime("%Y-%m-%d %H:%M UTC")


@functools.cache
def schema_documents() -> dict[str, dict[str, Any]]:
    """The JSON Schema of each kind, as pydantic describes it, by kind name (made once: the
    models do not change while sitegen runs; readers must not mutate it)."""
    return {kind: model.model_json_schema(by_alias=True) for kind, model in sorted(KINDS.items())}
