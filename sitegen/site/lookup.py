"""What every page planner reads: the build's inputs, and the lookups many pages share (a GPU's
label, a run's table row, a resource's runs in order, who uses what), each made once a build.

Pages never read one another; they read a `SiteLookup`. Lookups that depend only on the inputs
are cached on it for the build (render workers inherit the caches when they fork).
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import heapq
import json
import operator
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from sitegen.analysis.kernels import Analysis, Kernel, RunFacts, Series, newer
from sitegen.analysis.regressions import DEFAULT_THRESHOLD
from sitegen.content.catalog import Catalog
from sitegen.content.loaded import LoadedResource
from sitegen.content.records import NO_RECORDS, RecordHistory
from sitegen.content.reports import Attribution, SourceReport
from sitegen.model.digest import identity_document, known_canonical_json, short
from sitegen.publish.deploy import Deployment
from sitegen.site.credits import attribution_for
from sitegen.site.facts import environment_facts, protocol_facts
from sitegen.site.format import describe, environment_label, title_of, when
from sitegen.site.projects import project_links
from sitegen.site.records import Fact, Identity, Link, PageMeta, RunRow, SearchTags
from sitegen.site.urls import SiteUrls, json_twin

if TYPE_CHECKING:
    from sitegen.publish.compare import Baseline, Changes
    from sitegen.publish.manifest import Manifest

# A list of runs longer than this continues on numbered pages (`gpus/<name>/runs/2/`,
# `runs/page/2/`), so that no page grows with the catalog.
RUNS_PER_PAGE = 500
K = TypeVar("K")
V = TypeVar("V")
_REFERENCE_FIELDS = ("implementation", "workload", "protocol", "environment")


class SourceTally(NamedTuple):
    """What the sources page says of one source's runs (or a few sources')."""

    runs: int
    kernels: frozenset[str]
    environments: frozenset[str]
    failed: int  # runs that did not pass
    newest: str  # the latest `observed_at`
    oldest: str


class KernelTally(NamedTuple):
    """What site-wide counts take from one kernel's runs."""

    references: Counter[str]  # how many of its runs reference each resource
    sources: dict[str, SourceTally]


def kernel_tally(kernel: Kernel) -> KernelTally:
    return KernelTally(reference_counts(kernel.runs), source_tallies(kernel.runs))


def reference_counts(runs: Collection[RunFacts]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for field_name in _REFERENCE_FIELDS:
        counts.update(map(operator.attrgetter(field_name), runs))
    return counts


def source_tallies(runs: Iterable[RunFacts]) -> dict[str, SourceTally]:
    """Each source's runs tallied, by source id, in order."""
    by_source: dict[str, list[RunFacts]] = defaultdict(list)
    for run in runs:
        by_source[run.source].append(run)
    found = {}
    for source in sorted(by_source):
        same = by_source[source]
        dates = [run.observed_at for run in same]
        found[source] = SourceTally(
            len(same),
            frozenset(run.kernel_key for run in same),
            frozenset(run.environment for run in same),
            sum(1 for run in same if run.status != "passed"),
            max(dates),
            min(dates),
        )
    return found


def merged_tally(tallies: Sequence[SourceTally]) -> SourceTally:
    """One tally of the runs of several tallies (of other runs each)."""
    if len(tallies) == 1:
        return tallies[0]
    return SourceTally(
        sum(tally.runs for tally in tallies),
        frozenset().union(*(tally.kernels for tally in tallies)),
        frozenset().union(*(tally.environments for tally in tallies)),
        sum(tally.failed for tally in tallies),
        max(tally.newest for tally in tallies),
        min(tally.oldest for tally in tallies),
    )


def run_references(run: RunFacts) -> tuple[str, str, str, str]:
    """The resources a run references (`_REFERENCE_FIELDS`): those whose pages list it."""
    return (run.implementation, run.workload, run.protocol, run.environment)


@dataclass(frozen=True)
class SiteInputs:
    """Everything the site is made from."""

    catalog: Catalog
    analysis: Analysis
    urls: SiteUrls
    reports: dict[str, SourceReport]
    build_date: str | None  # from SOURCE_DATE_EPOCH only; None prints no date
    deployment: Deployment = field(default_factory=Deployment)
    # Or how to plan it, when nothing reads it before the renderer writes it (pipeline.py).
    manifest: Manifest | Callable[[], Manifest] | None = None
    baseline: Baseline | None = None  # what the changes page compares with; None: no page
    changes: Changes | None = None  # None when there is no baseline or it could not be read
    keyed: bool = False  # give lazy pages their keys (incremental builds)
    records: RecordHistory = NO_RECORDS  # who held the record of each comparison, and since when
    # Some resource's text holds a character pages show escaped (model/values.py).
    escapes_text: bool = False
    # The factor a step in a series' history must reach to be reported (analysis/regressions.py)
    regression_threshold: float = DEFAULT_THRESHOLD


def run_anchor(digest_value: str) -> str:
    """The id of a run's row on its kernel page: the run page links straight to it."""
    return "run-" + short(digest_value, 16)


def listed_order(run: RunFacts) -> tuple[Any, ...]:
    """The order of run tables on resource pages: kernel, pass, title, shape, digest."""
    return (run.kernel_title, run.pass_name, run.title, run.shape.axes, run.digest)


class SiteLookup:
    def __init__(self, inputs: SiteInputs) -> None:
        self.inputs = inputs
        self.catalog = inputs.catalog
        self.analysis = inputs.analysis
        self.urls = inputs.urls
        self.reports = inputs.reports
        self.records = inputs.records
        self.runs = inputs.analysis.runs
        self.runs_per_page = RUNS_PER_PAGE  # read here, so that a test may lower it
        self.kernels = {k.key: k for k in inputs.analysis.kernels}
        # Made once a build each (bound caches, dropped with the lookup).
        self.gpu_label: Callable[[str], str] = functools.cache(self._gpu_label)
        self.run_row: Callable[[RunFacts], RunRow] = functools.cache(self._run_row)
        self.resource_runs: Callable[[LoadedResource], list[RunFacts]] = functools.cache(
            self._resource_runs
        )
        self._credits: Callable[[frozenset[str]], tuple[Attribution, ...]] = functools.cache(
            self._attributions
        )
        self._memos: dict[Callable[..., Any], Callable[..., Any]] = {}

    def memo(self, function: Callable[[SiteLookup, K], V]) -> Callable[[K], V]:
        """`function(self, key)`, made once per key for this build: for what a page module
        derives that many pages show (a protocol's facts on each of its runs' pages)."""
        found = self._memos.get(function)
        if found is None:
            found = self._memos[function] = functools.cache(functools.partial(function, self))
        return found

    def made(self, function: Callable[[SiteLookup, Any], Any]) -> bool:
        """Whether `memo(function)` has made anything this build."""
        found = self._memos.get(function)
        return found is not None and bool(found.cache_info().currsize)  # type: ignore[attr-defined]

    def held_first(self, what: str, function: Callable[[SiteLookup, None], Any]) -> None:
        """`memo(function)(None)` where the held analysis holds nothing under `what` yet (its
        first build, or the first after the site changed): for what is held per kernel across
        builds (`per_kernel_of_cohorts`) but made as pages are planned. Made here, in the
        process that keeps the analysis, before render workers fork: made by them, it was
        lost with them, and the next build made every kernel's again (~0.8 s at 100k runs
        for the GPU pages' wins)."""
        held = self.analysis.held
        if held is not None and what not in held.groups:
            self.memo(function)(None)

    # pieces of every page ----------------------------------------------------------------

    def meta(
        self,
        title: str,
        path: str,
        description: str,
        section: str,
        runs: Iterable[RunFacts] = (),
        charts: bool = False,
        search: SearchTags | None = None,
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
            search=search,
        )

    def attributions(self, runs: Iterable[RunFacts]) -> tuple[Attribution, ...]:
        """The credit lines of the sources these runs come from, one per upstream."""
        return self._credits(frozenset(run.source for run in runs))

    def _attributions(self, sources: frozenset[str]) -> tuple[Attribution, ...]:
        # Backend-tagged sources of one upstream share its line: one per text.
        found = {a.text: a for a in (attribution_for(s, self.reports) for s in sources if s)}
        return tuple(found[text] for text in sorted(found))

    def link(self, digest_value: str, text: str | None = None) -> Link:
        entry = self.catalog.by_digest.get(digest_value)
        shown = text or (title_of(entry) if entry else short(digest_value))
        return Link(shown, self.urls.link(digest_value))

    def used_by(self, digest_value: str) -> list[dict[str, str | None]]:
        """Each resource that references this one, as its page's JSON twin lists it (kind,
        digest, page): with `sitegen serve`'s held analysis, the last build's item of each
        digest (a GPU's page lists its ~20,000 runs: ~0.05 s a page at 100k runs)."""
        held = self.analysis.held
        items = held.used_by if held is not None else {}
        if len(items) > 2 * len(self.catalog):  # digests gone since, held no longer
            items.clear()
        found = []
        for user in self.catalog.used_by.get(digest_value, ()):
            item = items.get(user)
            if item is None:
                kind = self.catalog.by_digest[user].kind
                item = items[user] = {"kind": kind, "digest": user, "url": self.urls.link(user)}
            found.append(item)
        return found

    def kernel_link(self, key: str) -> Link:
        kernel = self.kernels.get(key)
        return Link(kernel.title if kernel else key, self.urls.link(key))

    def identity(self, entry: LoadedResource, spec: dict[str, Any] | None = None) -> Identity:
        """`spec`: the entry's, when the caller holds it (a run's is parsed on each read)."""
        document = identity_document(entry.kind, entry.spec if spec is None else spec)
        path = self.urls.path_of(entry.digest) or ""
        return Identity(
            kind=entry.kind,
            digest=entry.digest,
            canonical=known_canonical_json(document, entry.digest).decode(),
            json_href=self.urls.href(json_twin(path)),
            schema_href=self.urls.href(self.urls.schema(entry.kind)),
        )

    def resource_twin(
        self, entry: LoadedResource, document: dict[str, Any] | None = None, **extra: Any
    ) -> dict[str, Any]:
        return {
            "kind": entry.kind,
            "digest": entry.digest,
            "url": self.urls.link(entry.digest),
            "schema": self.urls.href(self.urls.schema(entry.kind)),
            **extra,
            "document": entry.document if document is None else document,
        }

    def page_key(self, *parts: str, runs: Iterable[RunFacts] = ()) -> str | None:
        """The page's name, the tokens of the runs it shows and what it shows of their kernels
        (their series' names: `kernel_signature`); None unless keyed."""
        if not self.inputs.keyed:
            return None
        return self.signed_key(*parts, signature=self.runs_signature(runs))

    def signed_key(self, *parts: str, signature: str) -> str:
        """`page_key` of runs whose `runs_signature` (or several, joined) is made already."""
        digest = hashlib.sha256("\0".join(parts).encode())
        digest.update(signature.encode())
        return digest.hexdigest()

    def run_page_key(self, run: RunFacts, *shown: str) -> str | None:
        """`page_key` of a run's page: the run, what else it `shows` in words, and the runs its
        cohort's ranking shows (the newest of each series), made once a cohort."""
        if not self.inputs.keyed:
            return None
        # `page_key`'s inputs for one run, hashed once (~90,000 a rebuild, not two hashes each).
        ranked = self.ranked_signature(run.cohort)
        words = ("run", *shown, ranked, run.entry.token, self.kernel_signature(run.kernel_key))
        return hashlib.sha256("\0".join(words).encode()).hexdigest()

    def ranked_signature(self, cohort: tuple[str, str, str]) -> str:
        """What a cohort's ranking shows (the newest run of each series), once a build."""
        return self.memo(_ranked_signature)(cohort)

    def replaced(self, run: RunFacts) -> bool:
        """Whether a newer run of its series at its workload, protocol and GPU replaces it (its
        page says so; charts and rankings show the newer one)."""
        newest = self.memo(_newest_in_cohort)(run.cohort)
        return newest[(run.kernel_key, run.series_key)].digest != run.digest

    def runs_signature(self, runs: Iterable[RunFacts]) -> str:
        shown = list(runs)
        digest = hashlib.sha256("".join([run.entry.token for run in shown]).encode())
        for key in sorted({run.kernel_key for run in shown}):
            digest.update(self.kernel_signature(key).encode())
        return digest.hexdigest()

    def page_count(self, items: int) -> int:
        """How many pages a list of `items` runs takes."""
        return max(1, -(-items // self.runs_per_page))

    def page_of(self, runs: Sequence[RunFacts], number: int) -> Sequence[RunFacts]:
        """The runs on page `number` (1-based) of a list continued every runs_per_page."""
        return runs[(number - 1) * self.runs_per_page : number * self.runs_per_page]

    def _gpu_label(self, digest_value: str) -> str:
        return environment_label(self.catalog, digest_value)

    def gpu_labels(self, environments: Iterable[str]) -> str:
        """`NVIDIA A100 SXM4-80GB, NVIDIA H100 PCIe`: sorted, each once."""
        return ", ".join(sorted({self.gpu_label(e) for e in environments}))

    def _run_row(self, run: RunFacts) -> RunRow:
        value = run.values[0] if run.values else None
        return RunRow(
            run=Link(run.title, self.urls.link(run.digest)),
            kernel=self.kernel_link(run.kernel_key),
            pass_name=run.pass_name,
            gpu=Link(self.gpu_label(run.environment), self.urls.link(run.environment)),
            implementation=Link(self.series_of(run).label, self.urls.link(run.implementation)),
            shape=run.shape.label(),
            value=describe(value.metric, value.unit, value) if value else "—",
            status=run.status,
            observed=when(run.observed_at),
        )

    def protocol_facts(self, digest_value: str) -> tuple[Fact, ...]:
        return self.memo(_protocol_facts)(digest_value)

    def environment_facts(self, digest_value: str) -> tuple[Fact, ...]:
        return self.memo(_environment_facts)(digest_value)

    def kernel_of(self, run: RunFacts) -> Kernel:
        return self.kernels[run.kernel_key]

    def series_of(self, run: RunFacts) -> Series:
        """The series a run draws: its implementation as its title names it."""
        return self.series_by_key(run.kernel_key)[run.series_key]

    def series_by_key(self, kernel_key: str) -> dict[str, Series]:
        """A kernel's series by key, made once a build."""
        return self.memo(_series_by_key)(kernel_key)

    def kernel_signature(self, key: str) -> str:
        """What every page of a kernel's runs shows of the kernel besides the runs: its series'
        names and baselines (part of their incremental keys)."""
        return self.memo(_kernel_signature)(key)

    # who uses what -------------------------------------------------------------------------

    @functools.cached_property
    def projects(self) -> dict[str, Link]:
        """Implementation digest → a link to its project."""
        return {
            digest_value: Link(title_of(project), self.urls.link(project.digest))
            for digest_value, project in project_links(self.catalog).items()
        }

    def project_implementations(self, entry: LoadedResource) -> list[str]:
        """The implementations linked to a SoftwareProject, by title."""
        return self._implementations_by_project.get(self.urls.link(entry.digest), [])

    @functools.cached_property
    def _implementations_by_project(self) -> dict[str | None, list[str]]:
        found: dict[str | None, list[str]] = {}
        for digest_value, link in self.projects.items():
            found.setdefault(link.href, []).append(digest_value)
        for implementations in found.values():
            implementations.sort(key=lambda d: (title_of(self.catalog.by_digest[d]), d))
        return found

    @functools.cached_property
    def _kernel_tallies(self) -> list[KernelTally] | None:
        """With a held analysis, each kernel's `KernelTally`, held while the kernel is the very
        same object (its runs are): what site-wide counts sum instead of reading every run
        (~0.2 s at 100k runs). None otherwise."""
        held = self.analysis.held
        if held is None:
            return None
        return [
            held.derived("tally", kernel, None, functools.partial(kernel_tally, kernel))
            for kernel in self.analysis.kernels
        ]

    @functools.cached_property
    def run_counts(self) -> Counter[str]:
        """How many runs reference each resource."""
        tallies = self._kernel_tallies
        if tallies is not None:
            counts: Counter[str] = Counter()
            for tally in tallies:
                counts.update(tally.references)
            return counts
        return reference_counts(self.runs.values())

    @functools.cached_property
    def sources(self) -> dict[str, SourceTally]:
        """Each source's runs tallied, by source id (`sourceNative.source`, "" for none), in
        order."""
        tallies = self._kernel_tallies
        if tallies is None:
            return source_tallies(self.runs.values())
        found: dict[str, list[SourceTally]] = defaultdict(list)
        for tally in tallies:
            for source, counts in tally.sources.items():
                found[source].append(counts)
        return {source: merged_tally(found[source]) for source in sorted(found)}

    @functools.cached_property
    def source_counts(self) -> Counter[str]:
        """How many runs come from each source (`sourceNative.source`, "" for none), in
        order of source."""
        return Counter({source: tally.runs for source, tally in self.sources.items()})

    def credits(self, sources: frozenset[str]) -> tuple[Attribution, ...]:
        """`attributions` of runs from these sources."""
        return self._credits(sources)

    def every_attribution(self) -> tuple[Attribution, ...]:
        """`attributions` of every run."""
        return self._credits(frozenset(self.sources))

    def run_sources(self, entry: LoadedResource) -> list[str]:
        """The resources whose runs a resource page lists: itself, or a project's
        implementations."""
        if entry.kind == "SoftwareProject":
            return self.project_implementations(entry)
        return [entry.digest]

    def _resource_runs(self, entry: LoadedResource) -> list[RunFacts]:
        """The runs a resource page lists, in their order."""
        if self.analysis.held is not None:  # a project's list is held too
            return list(self._listed_runs.get(entry.digest, []))
        lists = [self._listed_runs.get(d, []) for d in self.run_sources(entry)]
        if len(lists) == 1:
            return list(lists[0])
        # A project's implementations: their lists are each in order, so merged by place.
        return list(heapq.merge(*lists, key=self._listed_place))

    @functools.cached_property
    def _listed_runs(self) -> dict[str, list[RunFacts]]:
        """Each resource's runs in `listed_order`: every list made in one pass over all runs in
        that order, not sorted again for each of the ~1,400 resources (in serve, each rebuild).
        With a held analysis, a project's list too, by its digest, and the last build's lists
        are taken, the runs new, changed or gone since put in or taken out (`_relisted`)."""
        held = self.analysis.held
        if held is not None:
            if held.listed_by:
                relisted = _relisted(held.listed_by, held.unplaced, self._project_of)
                held.unplaced = []
                if relisted:
                    return held.listed_by
            held.listed_by, held.unplaced = self._every_list(), []
            return held.listed_by
        return self._every_list()

    @functools.cached_property
    def _project_of(self) -> dict[str, str]:
        """Implementation digest → its project's digest, for those that have one."""
        return {digest: project.digest for digest, project in project_links(self.catalog).items()}

    def _every_list(self) -> dict[str, list[RunFacts]]:
        """`_listed_runs` made from all runs (with a held analysis, with the projects')."""
        listed: dict[str, list[RunFacts]] = defaultdict(list)
        for run in self._listed_order:
            # A run's four references (`_REFERENCE_FIELDS`): the resources whose pages list it.
            listed[run.implementation].append(run)
            listed[run.workload].append(run)
            listed[run.protocol].append(run)
            listed[run.environment].append(run)
        if self.analysis.held is not None:
            projects: dict[str, list[list[RunFacts]]] = defaultdict(list)
            for implementation, project in sorted(self._project_of.items()):
                projects[project].append(listed.get(implementation, []))
            for project, lists in projects.items():
                listed[project] = list(heapq.merge(*lists, key=self._listed_place))
        return dict(listed)

    @functools.cached_property
    def _listed_order(self) -> list[RunFacts]:
        held = self.analysis.held
        if held is None:
            return sorted(self.runs.values(), key=listed_order)
        # ~0.3 s at 100k runs to sort; `sitegen serve` keeps the last build's order.
        return held.in_listed_order(self.runs.values(), listed_order)

    @functools.cached_property
    def _listed_place(self) -> Callable[[RunFacts], int]:
        """A run's place in `listed_order` among all runs, to merge lists already in it."""
        place = {run.digest: number for number, run in enumerate(self._listed_order)}
        return lambda run: place[run.digest]

    def resource_run_count(self, entry: LoadedResource) -> int:
        """How many runs a resource page lists, without putting them in order unless they
        are (or an incremental build's keys need the order)."""
        if self.inputs.keyed:
            return len(self.resource_runs(entry))
        # A run references one resource of each kind it names: the counts count its users.
        return sum(self.run_counts[d] for d in self.run_sources(entry))

    def resource_page_paths(self, entry: LoadedResource, pages: int | None = None) -> list[str]:
        """The resource's page, then one page per further `runs_per_page` runs it lists;
        `pages`: how many, known already."""
        path = self.urls.path_of(entry.digest) or ""
        count = pages if pages is not None else self.page_count(self.resource_run_count(entry))
        return [path] + [f"{path}runs/{n}/" for n in range(2, count + 1)]


def _relisted(
    listed: dict[str, list[RunFacts]],
    unplaced: list[tuple[bool, RunFacts]],
    project_of: dict[str, str],
) -> bool:
    """Put each run of `unplaced` into (True) or take it out of (False) the lists in `listed`
    that hold it, in place, in the lists' order (`listed_order`, a total order: found by
    bisection); whether every run was where the lists' order puts it (if not, the lists are
    half done: made again from all runs)."""
    for put, run in unplaced:
        references = run_references(run)
        project = project_of.get(run.implementation)
        for digest in (*references, project) if project is not None else references:
            runs = listed.setdefault(digest, [])
            at = bisect.bisect_left(runs, listed_order(run), key=listed_order)
            there = at < len(runs) and runs[at] is run
            if put and not there:
                runs.insert(at, run)
            elif not put and there:
                del runs[at]
            else:
                return False
    return True


def _protocol_facts(lookup: SiteLookup, digest_value: str) -> tuple[Fact, ...]:
    entry = lookup.catalog.get(digest_value, "BenchmarkProtocol")
    return () if entry is None else protocol_facts(entry, lookup.urls)


def _environment_facts(lookup: SiteLookup, digest_value: str) -> tuple[Fact, ...]:
    entry = lookup.catalog.get(digest_value, "ExecutionEnvironment")
    return () if entry is None else environment_facts(entry, lookup.urls)


def _series_by_key(lookup: SiteLookup, kernel_key: str) -> dict[str, Series]:
    return lookup.kernels[kernel_key].series_by_key


def _newest_in_cohort(
    lookup: SiteLookup, cohort: tuple[str, str, str]
) -> dict[tuple[str, str], RunFacts]:
    newest: dict[tuple[str, str], RunFacts] = {}
    for run in lookup.analysis.cohorts[cohort]:
        key = (run.kernel_key, run.series_key)
        if newer(run, newest.get(key)):
            newest[key] = run
    return newest


def _ranked_signature(lookup: SiteLookup, cohort: tuple[str, str, str]) -> str:
    newest = lookup.memo(_newest_in_cohort)(cohort)
    return lookup.runs_signature(newest[key] for key in sorted(newest))


def _kernel_signature(lookup: SiteLookup, kernel_key: str) -> str:
    kernel = lookup.kernels[kernel_key]
    return json.dumps([[(s.key, s.label) for s in kernel.series], kernel.baselines])
