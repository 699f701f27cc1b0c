"""The records every page is made of, and the planned site itself.

Templates read these and nothing else: display-ready strings and links, never resources. Each
page kind's own context is defined beside its planner (home.py, kernel.py, run.py, resource.py,
lists.py, changes.py); the pieces they share are here. Records are named tuples: a run page makes
dozens of them and the `facts` macro caches on them, so they must be cheap and hashable.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from sitegen.content.loaded import LoadedResource
from sitegen.content.reports import Attribution

if TYPE_CHECKING:
    from sitegen.analysis.kernels import HeldAnalysis
    from sitegen.publish.manifest import Manifest
    from sitegen.site.feed import Feed
    from sitegen.site.lookup import SiteLookup


class Link(NamedTuple):
    text: str
    href: str | None = None  # None: shown as plain text (the target is not in this catalog)


class Fact(NamedTuple):
    """One labelled value of a fact list (`<dl>`)."""

    label: str
    value: str
    href: str | None = None
    code: bool = False  # digests, identifiers: monospace


class FactGroup(NamedTuple):
    title: str
    facts: tuple[Fact, ...]


class SearchTags(NamedTuple):
    """How the search index files a page (`data-pagefind-*`, publish/search.py): the filters
    it is found under, its result's title where its heading is not enough, and whether its
    whole text is indexed or only the parts its template marks (`data-pagefind-body`)."""

    filters: tuple[tuple[str, str], ...]  # (filter, value), sorted
    title: str = ""
    whole: bool = True


class PageMeta(NamedTuple):
    """What every page has: title, where it lives, its JSON twin, and whom it credits."""

    title: str
    path: str  # site path: `runs/f0cf6dd69e048a9b/`
    href: str
    json_href: str  # "" for a page without a twin (404.html)
    canonical: str
    description: str
    section: str  # the nav entry to highlight; "" for none
    attributions: tuple[Attribution, ...]
    charts: bool = False  # whether plotly is loaded
    search: SearchTags | None = None  # None: not in the search index


class RunRow(NamedTuple):
    """A run as the run tables of the home, resource and list pages show it."""

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


class NotFoundContext(NamedTuple):
    meta: PageMeta


class Page(NamedTuple):
    path: str  # site path: `runs/f0cf6dd69e048a9b/`
    template: str
    context: Any  # the template's typed context: one of the page modules' *Context records
    twin: dict[str, Any] | None  # the JSON twin written beside it

    def built(self) -> Page:
        return self

    @property
    def skipped(self) -> None:
        """`LazyPage.skipped`: never marked, a page made whole being rendered every build."""
        return None


@dataclass(frozen=True, slots=True)
class LazyPage:
    """A page planned only when it is rendered (run, kernel and resource pages, by the render
    workers on a big site): its path and template are known at once; `built()` plans the page
    itself, every call anew, so nothing is kept."""

    path: str
    template: str
    build: Callable[..., Page] = field(repr=False, compare=False)
    # Incremental builds only: what the page's bytes depend on besides the site-wide inputs
    # (equal keys, equal bytes). None: always rendered.
    key: str | None = None
    # Where the page's data sits in memory (a run page: its run's place in load order).
    # Rendering in this order keeps each render process to its own stretch of memory.
    locality: int = -1
    # The argument `build` takes, if any (a run page: its run): no partial object per page.
    subject: Any = field(default=None, repr=False, compare=False)
    # The mark of the last build that skipped this very page object (publish/incremental.py's
    # `IncrementalOutput.skip`, with a state held in memory): its only field set after it is
    # made.
    skipped: Any = field(default=None, repr=False, compare=False)

    def built(self) -> Page:
        return self.build() if self.subject is None else self.build(self.subject)

    @property
    def context(self) -> Any:
        return self.built().context

    @property
    def twin(self) -> dict[str, Any] | None:
        return self.built().twin


class Planner:
    """Plans a page with the lookup of the build that renders it: `plan(lookup, subject)`.
    Pages held between builds (a kernel's run pages, `held_run_pages`; a resource's,
    `held_resource_pages`) are a planner and a subject, so one planner serves them all,
    handed each build's lookup; then weakly, so that no held page keeps a finished build's
    alive."""

    __slots__ = ("_lookup", "_plan")

    def __init__(
        self, plan: Callable[[SiteLookup, Any], Page], lookup: SiteLookup, held: bool = False
    ) -> None:
        self._plan = plan
        self.use(lookup, held)

    def use(self, lookup: SiteLookup, held: bool = True) -> None:
        self._lookup: Callable[[], SiteLookup | None] = (
            weakref.ref(lookup) if held else lambda: lookup
        )

    def __call__(self, subject: Any) -> Page:
        lookup = self._lookup()
        if lookup is None:
            raise RuntimeError("a held page was planned after its build")
        return self._plan(lookup, subject)


def held_planner(
    held: HeldAnalysis, pages: str, plan: Callable[[SiteLookup, Any], Page], lookup: SiteLookup
) -> Planner:
    """The planner of these held pages, handed this build's lookup."""
    planner = held.planners.get(pages)
    if planner is None:
        planner = held.planners[pages] = Planner(plan, lookup, held=True)
    planner.use(lookup)
    return planner


def kept_pages(pages: list[LazyPage], last: list[LazyPage]) -> list[LazyPage]:
    """`pages`, each the page of its path among `last` instead where that is the same page
    (its template and key; its subject the same, as the caller knows): a GPU's list pages
    whose runs did not change, kept as objects (skipped on sight, their files not checked
    again: publish/incremental.py's `IncrementalOutput.page_files`)."""
    by_path = {page.path: page for page in last}
    kept = []
    for page in pages:
        before = by_path.get(page.path)
        same = (
            before is not None
            and before.key is not None
            and before.key == page.key
            and before.template == page.template
        )
        kept.append(before if same and before is not None else page)
    return kept


class Sitemap(NamedTuple):
    """Every page's absolute URL: the site's base URL (ending in "/"), and each page's path,
    in path order."""

    base: str
    paths: tuple[str, ...]


class Site(NamedTuple):
    """Everything the renderer writes: the pages in path order and the site-wide files."""

    pages: tuple[Page | LazyPage, ...]
    not_found: Page
    feed: Feed
    sitemap: Sitemap
    export: tuple[LoadedResource, ...]  # every resource, by digest
    run_count: int
    build_date: str | None
    attributions: tuple[Attribution, ...] = ()
    banner: tuple[Link, ...] = ()  # a preview's banner, every page; () in production
    indexable: bool = True  # False: noindex everywhere (meta, robots.txt, _headers)
    # /manifest.json, or how to plan it when nothing reads it before the renderer writes it
    manifest: Manifest | Callable[[], Manifest] | None = None
    llms: str = ""  # /llms.txt: the site's machine-readable surfaces, for agents
    # Some resource's text holds a character pages show escaped: the renderer looks for it.
    escapes_text: bool = False
    regressions_feed: Feed | None = None  # /regressions.xml: the newest regressions
    preview: bool = False  # the pages load the preview's styles (`changes.previewed`)
    # `sitegen serve`'s held analysis: the manifest's lines of unchanged entries are kept in it
    held: HeldAnalysis | None = None
