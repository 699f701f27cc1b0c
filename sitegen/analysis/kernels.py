"""What the pages compare: kernels, passes, implementations and cohorts, derived once (a
kernel's charts and rankings, `passes_of`, where its page is planned).

FORMAT.md §4: a run's kernel, implementation and pass come from the resolved OperationSpec and
ImplementationRevision when present, otherwise from the run itself (title
`<Kernel> · <provider> · <pass>`, `sourceNative.benchmark` `<kernel>/<pass>`, the caseKey inside
`sourceNative.externalId`). A cohort is (workload, protocol, environment): only runs of one cohort
are ever ranked against each other. Everything here is plain data; site/ formats it.
"""

from __future__ import annotations

import bisect
import json
import operator
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeVar

from sitegen.content.catalog import Catalog
from sitegen.content.loaded import LoadedResource
from sitegen.content.run_summary import (
    TITLE_SEPARATOR,
    RunSummary,
    Shape,
    Value,
)
from sitegen.content.stretches import Stretch, gaps, same_stretches
from sitegen.importers.registry import Revision, provider, release_of, revision_of, shape_of
from sitegen.model.digest import digest
from sitegen.model.names import kebab

PASS_ORDER = ("forward", "no-grad-forward", "backward", "full")
# A forward pass without autograd's bookkeeping (`torch.no_grad()`) is a pass of its own.
_PASS_SUFFIX = re.compile(r"-((?:no-grad-)?forward|backward|full)$")
_PASS_IN_TITLE = re.compile(r"·\s*([a-z][a-z-]*) pass$")


T = TypeVar("T")
P = TypeVar("P")  # a part of a kernel's value, made of one cohort (`per_kernel_of_cohorts`)
K = TypeVar("K", bound=Hashable)
S = TypeVar("S", bound=Sequence[Any])


# Named tuples, as the site's records: made in C once per run, and cheap to define at start.
class RunFacts(NamedTuple):
    """A run with everything the site derives about it, computed once.

    What lists, charts and the manifest read of every run is kept here, so that they never
    parse a compact run's document (content/loaded.py); `spec` parses it, for the run's own
    page.
    """

    entry: LoadedResource
    digest: str  # the entry's, read in every sort and lookup: a field, not a property
    kernel_key: str
    kernel_title: str
    kernel_slug: str
    pass_name: str
    provider: str
    shape: Shape
    values: tuple[Value, ...]
    observed_at: str
    status: str
    implementation: str
    workload: str
    protocol: str
    environment: str
    source: str  # sourceNative.source, or ""
    release: str  # the release of the measured code, as its importer reads the labels; ""
    # The implementation without its projectRevision (the digest it would have with `{}`):
    # one implementation measured at 30 commits is one series. Else the implementation.
    lineage: str
    revision: Revision | None  # the commit of the measured code, as its importer reads it

    @property
    def spec(self) -> dict[str, Any]:
        return self.entry.spec

    def __hash__(self) -> int:
        # Equal facts have equal digests: hashing all 19 fields took ~1.6 µs a call.
        return hash(self.digest)

    @property
    def title(self) -> str:
        return self.entry.title or self.entry.name

    @property
    def series_key(self) -> str:
        """The series the run belongs to: its implementation, whatever its revision, as its
        title names it."""
        return f"{self.lineage}/{self.provider}"

    @property
    def cohort(self) -> tuple[str, str, str]:
        """What a run is ranked within: the same workload, protocol and environment."""
        return (self.workload, self.protocol, self.environment)

    def value(self, metric: str, unit: str) -> Value | None:
        for value in self.values:
            if value.metric == metric and value.unit == unit:
                return value
        return None


class Series(NamedTuple):
    """One line of a kernel's charts: an implementation as its runs' titles name it.

    The format can give two providers one ImplementationRevision (eager PyTorch and
    torch.compile: their specs agree, FORMAT.md §5), so a series is the implementation's digest
    with the provider a run's title names, never the digest alone.
    """

    key: str  # `<implementation digest>/<provider>`: unique within a kernel
    implementation: str  # the ImplementationRevision digest
    provider: str  # as the runs' titles spell it: `huggingface`
    label: str  # its display name, unique within the kernel: `Transformers`
    renamed: bool  # the label is not the provider respelled (`Transformers`, `huggingface`)
    baseline_role: bool  # its implementation has `role: baseline`, or its provider is a baseline
    entry: LoadedResource | None  # the ImplementationRevision, when the catalog has it


def spelled_alike(label: str, provider: str) -> bool:
    """Whether a display name only respells the provider (`Liger cuTile`, `liger_cutile`): then
    the provider is not shown beside it."""
    return re.sub(r"[^a-z0-9]", "", label.lower()) == re.sub(r"[^a-z0-9]", "", provider.lower())


class Kernel(NamedTuple):
    key: str  # the OperationSpec digest, or `kernel:<title>` when derived from runs
    title: str
    slug: str  # the URL name before disambiguation
    operation: LoadedResource | None
    runs: tuple[RunFacts, ...]  # sorted by title then digest
    series: tuple[Series, ...]  # sorted by label
    pass_names: tuple[str, ...]  # in page order (forward, backward, full, others by name)
    environments: tuple[str, ...]
    baselines: tuple[tuple[str, str], ...]  # (pass, series key): the one baseline of each pass

    @property
    def series_by_key(self) -> dict[str, Series]:
        """Each series by its key (made anew on each call: cache it where it is read often)."""
        return {series.key: series for series in self.series}

    def baseline_of(self, pass_name: str) -> str | None:
        """The key of the pass's baseline series (see `_baselines` for the rule)."""
        return dict(self.baselines).get(pass_name)


class Analysis(NamedTuple):
    runs: dict[str, RunFacts]  # by digest, sorted
    kernels: tuple[Kernel, ...]  # sorted by title then key
    newest: tuple[RunFacts, ...]  # every run, newest first (`newest_first`)
    # RunFacts.cohort → its runs, by digest; the cohorts in no set order (a held analysis puts
    # a new one last)
    cohorts: dict[tuple[str, str, str], tuple[RunFacts, ...]]
    held: HeldAnalysis | None = None  # `sitegen serve`'s, which this analysis updated


# Where a run sits and what it holds: its digest, its metadata's digest, its file and place.
RunPlace = tuple[str, str, str, str]


@dataclass
class HeldAnalysis:
    """What `analyse` and the pages made of each run and kernel, held between the builds of
    `sitegen serve`, so that a rebuild after one changed run redoes the work of that run and
    its kernel only. A run's facts are reused while the run (its digests, file and place) and
    every resource that is not a run are unchanged; a kernel while it has the same facts
    objects; what a later stage made of a run or a kernel (`derived`) while it is the very same
    object. Anything else (a changed protocol, workload, implementation…) drops it all.
    """

    others: tuple[tuple[str, str, str], ...] = ()  # every other resource: (kind, digest, token)
    # Each ImplementationRevision's lineage (`_lineage`), by the revision's digest.
    lineages: dict[str, str] = field(default_factory=dict)
    facts: dict[RunPlace, RunFacts] = field(default_factory=dict)
    kernels: dict[str, Kernel] = field(default_factory=dict)
    # Every resource of the last build, in digest order, and each one's digest and facts
    # (None: no run), to compare the next build's with as pointers, a stretch at a time.
    resources: tuple[LoadedResource, ...] = ()
    digests: list[str] = field(default_factory=list)
    facts_at: list[RunFacts | None] = field(default_factory=list)
    # Each kernel's runs and each cohort's, in digest order: patched by the next build.
    kernel_runs: dict[str, list[RunFacts]] = field(default_factory=dict)
    cohorts: dict[tuple[str, str, str], tuple[RunFacts, ...]] = field(default_factory=dict)
    # (what, run digest or kernel key) → (that run or kernel, `extra`, what was made)
    made: dict[tuple[str, str], tuple[Kernel | RunFacts, Hashable, Any]] = field(
        default_factory=dict
    )
    # The last build's runs, oldest first (`_age`): the next build's order, a few runs moved.
    oldest: list[RunFacts] = field(default_factory=list)
    # The last build's runs in the order resource pages list them (`in_listed_order`).
    listed: list[RunFacts] = field(default_factory=list)
    # The runs whose facts the last build made rather than held: new, changed or moved.
    fresh: list[RunFacts] = field(default_factory=list)
    # The runs of the build before the last that the last one no longer had.
    gone: list[RunFacts] = field(default_factory=list)
    # Every run fresh or gone in the builds since the resources' page keys were last made
    # (site/plan.py's `held_resource_keys` empties it): a build stopped for a newer change
    # may have made the analysis and not the keys.
    unlisted: list[RunFacts] = field(default_factory=list)
    # Each resource's runs in the order its page lists them (site/lookup.py's `_listed_runs`),
    # by digest, a project's included, as the last build that made them left them; and every
    # run to put in (True) or take out (False) of them since, in the order the builds found.
    listed_by: dict[str, list[RunFacts]] = field(default_factory=dict)
    # Each resource's run list cut into its pages' slices, each with its `runs_signature`
    # (site/plan.py's `held_resource_keys`), and the kernels' signatures they were made with.
    slices: tuple[Any, dict[str, list[tuple[tuple[RunFacts, ...], str]]]] = field(
        default_factory=lambda: (None, {})
    )
    unplaced: list[tuple[bool, RunFacts]] = field(default_factory=list)
    # Run digest or kernel key → what `derived` made of it (the slots' first halves).
    made_of: dict[str, set[str]] = field(default_factory=dict)
    # What `per_group` made of each group of runs (a series, a kernel's): what → group key →
    # (its members, `extra`, what was made). Only the last build's groups.
    groups: dict[str, dict[Any, tuple[tuple[Any, ...], Hashable, Any]]] = field(
        default_factory=dict
    )
    # What `kernel_of_cohorts` made of each cohort of each kernel's runs: what → kernel key →
    # cohort → (the cohort's runs, the kernel's series and other inputs, what was made).
    cohort_parts: dict[str, dict[str, dict[Any, tuple[tuple[Any, ...], Hashable, Any]]]] = field(
        default_factory=dict
    )
    # The site-wide inputs `groups` and `cohort_parts` were made with (`pipeline._site_key`).
    groups_site: str = ""
    # The last build's manifest.json and export, and where each item's line is in them
    # (render/outputs.py's `HeldLines`), None before the first.
    lines: Any = None
    export: Any = None
    # The last build's sitemap: its base URL and lines (render/outputs.py's `sitemap_xml`).
    sitemap: Any = None
    # The last build's resources and their manifest entries, in order, and the places of those
    # that are not runs: a run's entry is reused while its resource is the very same object
    # (publish/manifest.py).
    entries: tuple[tuple[Any, ...], list[Any], list[int]] = ((), [], [])
    # What plans each kind of held page (site/plan.py's `Planner`s), by kind.
    planners: dict[str, Any] = field(default_factory=dict)
    # Pages as last planned, by kind, each kind's as it keeps them (site/plan.py's
    # `held_resource_pages`, site/lists.py's run lists, site/history.py's): a page planned
    # again where what its key is made of is not the very same object.
    pages: dict[str, dict[Any, Any]] = field(default_factory=dict)
    # Each run's page path, counted (site/urls.py's `HeldRunPaths`), None before the first.
    run_paths: Any = None
    # The places in plan order of the last build's pages, in path order, their paths in that
    # order, and the pages in plan order (site/plan.py's `in_path_order`).
    path_order: list[int] = field(default_factory=list)
    path_sorted: list[str] = field(default_factory=list)
    path_pages: tuple[Any, ...] = ()
    # Each user of a resource as resource pages' JSON twins list it, by digest (site/lookup.py's
    # `used_by`); dropped with `groups`, as its page's URL is a site-wide input.
    used_by: dict[str, dict[str, str | None]] = field(default_factory=dict)
    # The last `stretches` asked: the two tuples compared and what was found.
    found_stretches: tuple[tuple[Any, ...], tuple[Any, ...], tuple[Stretch, ...]] | None = None

    def stretches(self, last: tuple[T, ...], now: tuple[T, ...]) -> list[Stretch]:
        """`same_stretches(last, now)`, found once for two tuples asked again: the analysis,
        the manifest's entries and the export each compare this build's resources with the
        last build's (~0.03 s each at 100k runs; tuples, so that neither changed since)."""
        found = self.found_stretches
        if found is not None and found[0] is last and found[1] is now:
            return list(found[2])
        stretches = same_stretches(last, now)
        self.found_stretches = (last, now, tuple(stretches))
        return stretches

    def derived(
        self, what: str, subject: Kernel | RunFacts, extra: Hashable, make: Callable[[], T]
    ) -> T:
        """`make()`, or what it made in an earlier build for this very run or kernel object
        and an equal `extra` (what else it depends on, besides the site-wide inputs)."""
        slot = (what, subject.key if isinstance(subject, Kernel) else subject.digest)
        found = self.made.get(slot)
        if found is not None and found[0] is subject and found[1] == extra:
            return found[2]  # type: ignore[no-any-return]
        value = make()
        self.made[slot] = (subject, extra, value)
        self.made_of.setdefault(slot[1], set()).add(what)
        return value

    def renew(self, catalog: Catalog) -> None:
        """Drop everything if a resource that is not a run changed since the last build."""
        others = tuple(sorted((e.kind, e.digest, e.token) for e in catalog.all_but("BenchmarkRun")))
        if others != self.others:
            self.others, self.facts, self.kernels, self.made = others, {}, {}, {}
            self.resources, self.digests, self.facts_at, self.kernel_runs = (), [], [], {}
            self.cohorts = {}
            self.oldest, self.made_of, self.groups, self.listed = [], {}, {}, []
            self.cohort_parts = {}
            self.entries, self.unlisted, self.listed_by, self.unplaced = ((), [], []), [], {}, []

    def site(self, key: str) -> None:
        """Drop what `per_group` made if the site-wide inputs changed (a base URL, the
        threshold of a regression): a group's members alone do not say so."""
        if key != self.groups_site:
            self.groups, self.groups_site, self.used_by = {}, key, {}
            self.cohort_parts = {}

    def in_age_order(self, runs: Iterable[RunFacts]) -> list[RunFacts]:
        """`runs` oldest first, as `sorted(runs, key=_age)` orders them: the last build's
        order without the runs gone, the new runs put in place (each run's `_age` is its own:
        its digest is in it). Held for the next build."""
        if self.oldest and (len(self.fresh) + len(self.gone)) * 8 <= len(self.oldest):
            # A few runs changed since the last build: those moved, the rest kept in place.
            ordered = _reordered(self.oldest, self.gone, self.fresh, _age)
            if ordered is not None:
                self.oldest = ordered
                return ordered
        self.oldest = kept_in_order(self.oldest, runs, _age)
        return self.oldest

    def in_listed_order(
        self, runs: Iterable[RunFacts], key: Callable[[RunFacts], Any]
    ) -> list[RunFacts]:
        """`sorted(runs, key=key)`, `key` the order of resource pages' run lists (a run's own
        facts alone, its digest last): the last build's order kept. Held for the next build."""
        self.listed = kept_in_order(self.listed, runs, key)
        return self.listed

    def keep(
        self, facts: dict[RunPlace, RunFacts], kernels: list[Kernel], gone: list[RunFacts]
    ) -> None:
        """Hold this build's facts and kernels, and what was made of those alone: what was
        made of the runs `gone` (held last build, not this one) and of the kernels made anew
        is dropped, found by what `derived` noted of each."""
        self.gone = gone
        self.unlisted += self.fresh
        self.unlisted += gone
        if self.listed_by:  # out first: a moved run's new facts have the old's place in order
            self.unplaced += [(False, run) for run in gone]
            self.unplaced += [(True, run) for run in self.fresh]
        now = {k.key: k for k in kernels}
        replaced = [key for key, kernel in self.kernels.items() if now.get(key) is not kernel]
        self.facts, self.kernels = facts, now
        for key in [run.digest for run in self.gone] + replaced:
            for what in self.made_of.pop(key, ()):
                self.made.pop((what, key), None)
            if key not in now:  # a kernel gone: its cohorts' parts too
                for parts in self.cohort_parts.values():
                    parts.pop(key, None)


def kept_in_order(
    last: list[RunFacts], runs: Iterable[RunFacts], key: Callable[[RunFacts], Any]
) -> list[RunFacts]:
    """`sorted(runs, key=key)` (a total order), made of `last` (sorted so, held from a build
    before): those of its runs still here, in place, and the others put in place."""
    runs = list(runs)
    present = set(map(id, runs))
    ordered = [run for run in last if id(run) in present]
    held = set(map(id, ordered))
    new = [run for run in runs if id(run) not in held]
    if len(new) > len(runs) // 8:  # many new: one sort is cheaper than inserting each
        return sorted(runs, key=key)
    for run in new:
        bisect.insort(ordered, run, key=key)
    return ordered


def derived(
    held: HeldAnalysis | None,
    what: str,
    subject: Kernel | RunFacts,
    extra: Hashable,
    make: Callable[[], T],
) -> T:
    """`held.derived(…)`, or `make()` where nothing is held (every build but `sitegen serve`)."""
    return make() if held is None else held.derived(what, subject, extra, make)


class Same:
    """An object in a `per_group` extra, equal only to itself (not compared field by field):
    what another group made this build, reused or made anew."""

    __slots__ = ("held",)

    def __init__(self, held: object) -> None:
        self.held = held

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Same) and other.held is self.held

    def __hash__(self) -> int:
        return id(self.held)


def per_group(
    held: HeldAnalysis | None,
    what: str,
    groups: dict[K, tuple[tuple[Any, ...], Hashable]],
    make: Callable[[K], T],
) -> dict[K, T]:
    """`make(key)` for each group (key → its members and `extra`, what else it depends on),
    or, with `held` (`sitegen serve`), what the last build made of that group where its
    members are the very same objects, in order, and `extra` is equal. Held for the next
    build: this build's groups alone."""
    if held is None:
        return {key: make(key) for key in groups}
    last = held.groups.get(what, {})
    now: dict[Any, tuple[tuple[Any, ...], Hashable, Any]] = {}
    for key, (members, extra) in groups.items():
        found = last.get(key)
        if found is None or found[1] != extra or not same_objects(found[0], members):
            found = (members, extra, make(key))
        now[key] = found
    held.groups[what] = now
    return {key: item[2] for key, item in now.items()}


def per_kernel(
    held: HeldAnalysis | None, what: str, kernels: Iterable[Kernel], make: Callable[[str], T]
) -> dict[str, T]:
    """`per_group` with one group a kernel (by key, in order), held while the kernel is the
    very same object (its runs are)."""
    return per_group(held, what, {kernel.key: ((kernel,), None) for kernel in kernels}, make)


Cohort = tuple[str, str, str]  # RunFacts.cohort: workload, protocol, environment


def per_kernel_of_cohorts(
    analysis: Analysis,
    what: str,
    part: Callable[[Kernel, list[RunFacts]], P],
    whole: Callable[[Kernel, list[tuple[Cohort, P]]], T],
) -> dict[str, T]:
    """`per_kernel` of the analysis' kernels, each kernel's value made of its cohorts' parts
    (`kernel_of_cohorts`): a changed kernel's cohorts that did not change are not read again
    (~2,700 runs of one kernel at 100k runs, where one run changed: ~0.1 s a use)."""
    held, cohorts = analysis.held, analysis.cohorts
    listed = {kernel.key: kernel for kernel in analysis.kernels}
    return per_kernel(
        held,
        what,
        listed.values(),
        lambda key: kernel_of_cohorts(held, what, listed[key], cohorts, part, whole),
    )


def kernel_of_cohorts(
    held: HeldAnalysis | None,
    what: str,
    kernel: Kernel,
    cohorts: Mapping[Cohort, tuple[RunFacts, ...]],
    part: Callable[[Kernel, list[RunFacts]], P],
    whole: Callable[[Kernel, list[tuple[Cohort, P]]], T],
    extra: Hashable = None,
) -> T:
    """`whole` of the kernel's parts, in cohort order: `part` of its runs in each cohort
    (`cohorts`, the analysis'), with `held` each held while the cohort's runs are the very
    same objects, and the kernel's series and `extra` equal (a part's other inputs)."""
    # Shared by the kernel's uses of a build, and held while the kernel is the same object.
    in_cohorts = derived(held, "runs by cohort", kernel, None, lambda: _runs_by_cohort(kernel))
    # Held per kernel until it is made again, or gone (`HeldAnalysis.keep`).
    held_parts = held.cohort_parts.setdefault(what, {}) if held is not None else {}
    last, now = held_parts.get(kernel.key, {}), {}
    inputs = (kernel.series, extra)
    for cohort in in_cohorts:
        members = cohorts.get(cohort, ())
        found = last.get(cohort)
        if found is None or found[1] != inputs or not same_objects(found[0], members):
            found = (members, inputs, part(kernel, in_cohorts[cohort]))
        now[cohort] = found
    held_parts[kernel.key] = now
    return whole(kernel, [(cohort, found[2]) for cohort, found in now.items()])


def _runs_by_cohort(kernel: Kernel) -> dict[Cohort, list[RunFacts]]:
    """The kernel's runs by cohort, in cohort order, each cohort's in the kernel's order."""
    found: dict[Cohort, list[RunFacts]] = {}
    for run, cohort in zip(kernel.runs, map(_COHORT_FIELDS, kernel.runs), strict=True):
        found.setdefault(cohort, []).append(run)
    return {cohort: found[cohort] for cohort in sorted(found)}


def same_objects(held: Sequence[Any], members: Sequence[Any]) -> bool:
    """Whether two sequences hold the very same objects, in order (compared as pointers);
    the very same tuple at once."""
    if held is members and isinstance(held, tuple):
        return True
    return len(held) == len(members) and all(map(operator.is_, held, members))


def pass_of(protocol: LoadedResource | None, summary: RunSummary) -> str:
    """The timed pass: from the protocol's name or title, else (without the protocol) the run's
    title or benchmark. A protocol that names no pass times none: a leaderboard's title goes on
    with its case (`amd-fp8-mm · submission 18667 · case 1`), which is no pass."""
    if protocol is not None:
        match = _PASS_SUFFIX.search(protocol.name)
        if match:
            return match.group(1)
        match = _PASS_IN_TITLE.search(protocol.title or "")
        if match:
            return match.group(1)
        return "unspecified"
    if summary.title_parts:
        return summary.title_parts[2]
    if summary.benchmark:
        return summary.benchmark[1]
    return "unspecified"


def _workload_shape(workload: LoadedResource) -> Shape:
    spec = workload.spec
    tensors = list(spec["tensors"].values())
    # The first tensor is the first input: its dtype is the row dtype of the benchmark.
    dtype = tensors[0]["dtype"] if tensors else ""
    scalars = tuple(
        (name, json.dumps(scalar["value"]))
        for name, scalar in sorted(spec.get("scalars", {}).items())
    )
    return Shape(tuple(spec["axes"].items()), dtype, scalars)


def _lineage(revision: LoadedResource) -> str:
    """The digest that names an ImplementationRevision's lineage: itself at no commit."""
    return digest("ImplementationRevision", {**revision.spec, "projectRevision": {}})


def analyse(catalog: Catalog, held: HeldAnalysis | None = None) -> Analysis:
    """Derive every run's facts, then each kernel's runs, implementations, passes and GPUs.
    With `held` (`sitegen serve`), what an earlier build made is reused where it still holds,
    and `held` is updated."""
    shapes: dict[str, Shape] = {
        w.digest: _workload_shape(w) for w in catalog.of_kind("WorkloadCase")
    }
    # A suite is measured as one workload: its shape is how many cases it holds.
    shapes |= {
        w.digest: Shape((("cases", len(w.spec["cases"])),), "", ())
        for w in catalog.of_kind("WorkloadSuite")
    }
    # Revisions of one implementation at several commits chart as one series (its lineage).
    # A revision's lineage depends on its spec alone, which its digest names: held by it
    # (~35 ms a build for the real catalog's 4,388 revisions).
    held_lineages = held.lineages if held is not None else {}
    lineages = {
        entry.digest: held_lineages.get(entry.digest) or _lineage(entry)
        for entry in catalog.of_kind("ImplementationRevision")
        if entry.spec.get("projectRevision")
    }
    if held is not None:
        held.lineages = lineages
        return _analyse_held(catalog, held, shapes, lineages)
    facts: dict[str, RunFacts] = {}
    # `resources` is in digest order: the runs in it, not sorted again.
    for entry in catalog.resources:
        if entry.kind == "BenchmarkRun":
            facts[entry.digest] = _run_facts(entry, catalog, shapes, lineages)
    runs_by_kernel = _by_kernel(facts.values(), catalog)
    kernels = []
    for key, runs in runs_by_kernel.items():
        runs.sort(key=_kernel_order)
        kernels.append(_kernel(key, runs, catalog))
    kernels.sort(key=lambda k: (k.title.lower(), k.key))
    return Analysis(
        facts,
        tuple(kernels),
        tuple(newest_first(facts.values())),
        {key: tuple(runs) for key, runs in _by_cohort(facts.values()).items()},
        None,
    )


def _by_kernel(runs: Iterable[RunFacts], catalog: Catalog) -> dict[str, list[RunFacts]]:
    """`runs` by kernel, each kernel's in their order; every OperationSpec a kernel, run or
    not."""
    found: dict[str, list[RunFacts]] = defaultdict(list)
    for run in runs:
        found[run.kernel_key].append(run)
    return _with_operations(dict(found), catalog)


def _with_operations(
    by_kernel: dict[str, list[RunFacts]], catalog: Catalog
) -> dict[str, list[RunFacts]]:
    """`by_kernel` with every OperationSpec a kernel, run or not (an empty one added last)."""
    for operation in catalog.of_kind("OperationSpec"):
        by_kernel.setdefault(operation.digest, [])
    return by_kernel


_KERNEL_OF = operator.attrgetter("kernel_key")
_COHORT_OF = operator.attrgetter("cohort")
_COHORT_FIELDS = operator.attrgetter("workload", "protocol", "environment")  # it, made in C
_DIGEST_OF = operator.attrgetter("digest")


def _by_cohort(runs: Iterable[RunFacts]) -> dict[tuple[str, str, str], list[RunFacts]]:
    found: dict[tuple[str, str, str], list[RunFacts]] = defaultdict(list)
    for run in runs:
        found[run.cohort].append(run)
    return dict(found)


def _analyse_held(
    catalog: Catalog, held: HeldAnalysis, shapes: dict[str, Shape], lineages: dict[str, str]
) -> Analysis:
    """`analyse` with `held`: the last build's facts where a run is the very same resource, or
    one in the same place with the same digests, its groups by kernel and by cohort patched
    where a few runs changed. Every resource is compared with the last build's as a pointer,
    a stretch at a time, so that an unchanged run is not read (~0.5 s less at 100k runs)."""
    held.renew(catalog)
    held.fresh = []
    resources = catalog.resources
    facts_at: list[RunFacts | None] = []  # each resource's facts, None where it is no run
    digests: list[str] = []  # each resource's digest
    found_again: set[int] = set()  # held facts found by place, outside the stretches
    covered: list[tuple[int, int]] = []  # the stretches' places in the last build's resources
    done = 0
    stretches = held.stretches(held.resources, resources)
    for stretch in [*stretches, Stretch(len(resources), len(resources), 0)]:
        for entry in resources[done : stretch.start]:
            digests.append(entry.digest)
            if entry.kind != "BenchmarkRun":
                facts_at.append(None)
                continue
            found = held.facts.get(_place(entry))
            if found is None:
                found = _run_facts(entry, catalog, shapes, lineages, keep_summary=True)
                held.fresh.append(found)
            else:
                found_again.add(id(found))
            facts_at.append(found)
        last, size = stretch.last, stretch.stop - stretch.start
        facts_at += held.facts_at[last : last + size]
        digests += held.digests[last : last + size]
        covered.append((last, last + size))
        done = stretch.stop
    gone = [
        run
        for start, stop in gaps(covered, len(held.resources))
        for run in held.facts_at[start:stop]
        if run is not None and id(run) not in found_again
    ]
    for run in gone:
        del held.facts[_place(run.entry)]
    for run in held.fresh:
        held.facts[_place(run.entry)] = run
    held.resources, held.facts_at, held.digests = resources, facts_at, digests
    facts = {d: run for d, run in zip(digests, facts_at, strict=True) if run is not None}

    # The last build's groups by kernel and by cohort, patched where a few runs changed; else
    # (or should a patch not find a run where the last build left it) grouped anew.
    last_runs = held.kernel_runs
    changed = held.fresh + gone
    patched = None
    if last_runs and len(changed) * 8 <= len(facts):
        patched = _patched(last_runs, gone, held.fresh, _KERNEL_OF, list)
    cohorts = _patched(held.cohorts, gone, held.fresh, _COHORT_OF, tuple) if patched else None
    if patched is None or cohorts is None:
        runs_by_kernel = _by_kernel(facts.values(), catalog)
        cohorts = {key: tuple(runs) for key, runs in _by_cohort(facts.values()).items()}
        touched = None
    else:
        runs_by_kernel = _with_operations(patched, catalog)
        touched = {run.kernel_key for run in changed}
    held.kernel_runs, held.cohorts = runs_by_kernel, cohorts
    kernels = []
    for key, runs in runs_by_kernel.items():
        previous = held.kernels.get(key)
        if previous is not None and (
            key not in touched
            if touched is not None
            else same_objects(last_runs.get(key, ()), runs)
        ):
            kernels.append(previous)  # the same runs: those objects, as pointers
        else:
            kernels.append(_kernel(key, _in_kernel_order(previous, runs, held, gone), catalog))
    held.keep(held.facts, kernels, gone)
    kernels.sort(key=lambda k: (k.title.lower(), k.key))
    return Analysis(
        facts,
        tuple(kernels),
        tuple(reversed(held.in_age_order(facts.values()))),
        cohorts,  # held: the next build patches a copy
        held,
    )


def _place(entry: LoadedResource) -> RunPlace:
    return (entry.digest, entry.metadata_digest, entry.path, entry.where)


def _patched(
    groups: dict[K, S],
    gone: list[RunFacts],
    fresh: list[RunFacts],
    key: Callable[[RunFacts], K],
    make: Callable[[list[RunFacts]], S],
) -> dict[K, S] | None:
    """`groups` (each a sequence of runs in digest order) with the runs `gone` taken out and
    the `fresh` ones put in place: a changed group is new (`make` of its runs), the others the
    very same, an emptied one dropped; None where a run gone is not where it should be."""
    changed: dict[K, tuple[list[RunFacts], list[RunFacts]]] = {}
    for these, add in ((gone, 0), (fresh, 1)):
        for run in these:
            changed.setdefault(key(run), ([], []))[add].append(run)
    patched = dict(groups)
    for group, (out, into) in changed.items():
        runs = _reordered(groups.get(group, ()), out, into, _DIGEST_OF)
        if runs is None:
            return None
        if runs:
            patched[group] = make(runs)
        else:
            patched.pop(group, None)
    return patched


def _in_kernel_order(
    previous: Kernel | None, runs: list[RunFacts], held: HeldAnalysis, gone: list[RunFacts]
) -> list[RunFacts]:
    """A kernel's `runs` (in digest order) in its order (`_kernel_order`): the last build's
    order, with its runs gone taken out and its new runs put in place, where a few changed
    (~0.1 s less at 100k runs than sorting a large kernel's runs again); else sorted."""
    if previous is not None:
        key = previous.key
        fresh = [run for run in held.fresh if run.kernel_key == key]
        out = [run for run in gone if run.kernel_key == key]
        if len(previous.runs) - len(out) + len(fresh) == len(runs) and (
            (len(fresh) + len(out)) * 8 <= len(runs)
        ):
            ordered = _reordered(previous.runs, out, fresh, _kernel_order)
            if ordered is not None:
                return ordered
    return sorted(runs, key=_kernel_order)


def _reordered(
    last: Sequence[RunFacts],
    gone: Iterable[RunFacts],
    fresh: Iterable[RunFacts],
    key: Callable[[RunFacts], Any],
) -> list[RunFacts] | None:
    """`last` (sorted by `key`, each run's key its own) with the runs `gone` taken out and the
    `fresh` ones put in place, found by bisection; None where a run gone is not where it
    should be (the caller sorts whole)."""
    ordered = list(last)
    for run in gone:
        at = bisect.bisect_left(ordered, key(run), key=key)
        if at == len(ordered) or ordered[at] is not run:
            return None
        del ordered[at]
    for run in fresh:
        bisect.insort(ordered, run, key=key)
    return ordered


def _kernel_order(run: RunFacts) -> tuple[str, str]:
    return (run.title, run.digest)


def _run_facts(
    entry: LoadedResource,
    catalog: Catalog,
    shapes: dict[str, Shape],
    lineages: dict[str, str],
    keep_summary: bool = False,
) -> RunFacts:
    # Taken, not read: a million summaries are not held beside the facts made from them,
    # except by `sitegen serve`, whose loads hold them anyway (content/load.py's HeldFile).
    summary = entry.summary if keep_summary else entry.take_summary()
    workload = catalog.get(summary.workload, "WorkloadCase")
    implementation = catalog.get(summary.implementation, "ImplementationRevision")
    title_parts = summary.title_parts
    benchmark = summary.benchmark

    operation_digest = None
    if workload is not None:
        operation_digest = workload.spec["operationSpecDigest"]
    elif implementation is not None:
        operation_digest = implementation.spec["operation"]["specDigest"]
    operation = catalog.get(operation_digest, "OperationSpec") if operation_digest else None

    derived_title = (
        title_parts[0] if title_parts else benchmark[0] if benchmark else "Unknown kernel"
    )
    if operation is not None:
        key = operation.digest
        title = operation.title or operation.name
        slug = operation.name
    else:
        # Without an OperationSpec the kernel is what the run says it is (FORMAT.md §4).
        key = operation_digest or f"kernel:{derived_title}"
        title = derived_title
        slug = kebab(benchmark[0] if benchmark else derived_title) or "kernel"

    if title_parts:
        provider = title_parts[1]
    elif implementation is not None:
        impl_title = implementation.title or implementation.name
        provider = impl_title.split(TITLE_SEPARATOR)[-1]
    else:
        provider = "implementation " + summary.implementation.removeprefix("sha256:")[:12]

    shape = (
        shapes.get(summary.workload)
        or shape_of(summary.source, summary.external_id)
        or Shape((), "", ())
    )
    protocol = catalog.get(summary.protocol, "BenchmarkProtocol")
    labels = dict(summary.labels)
    return RunFacts(
        entry=entry,
        digest=entry.digest,
        kernel_key=key,
        kernel_title=title,
        kernel_slug=slug,
        pass_name=sys.intern(pass_of(protocol, summary)),
        provider=sys.intern(provider),
        shape=shape,
        values=summary.values,
        observed_at=summary.observed_at,
        # Interned: a few distinct values shared by every run.
        status=sys.intern(summary.status),
        implementation=sys.intern(summary.implementation),
        workload=sys.intern(summary.workload),
        protocol=sys.intern(summary.protocol),
        environment=sys.intern(summary.environment),
        source=sys.intern(summary.source),
        release=sys.intern(release_of(summary.source, labels) or ""),
        lineage=sys.intern(lineages.get(summary.implementation, summary.implementation)),
        revision=revision_of(summary.source, labels),
    )


def _pass_rank(name: str) -> tuple[int, str]:
    return (PASS_ORDER.index(name) if name in PASS_ORDER else len(PASS_ORDER), name)


def _kernel(key: str, runs: list[RunFacts], catalog: Catalog) -> Kernel:
    """The kernel of `runs`, in its order (`_kernel_order`)."""
    operation = catalog.get(key, "OperationSpec")
    if operation is not None:
        title, slug = operation.title or operation.name, operation.name
    else:
        title, slug = runs[0].kernel_title, runs[0].kernel_slug
    series = _series(runs, catalog)
    return Kernel(
        key,
        title,
        slug,
        operation,
        tuple(runs),
        series,
        tuple(sorted({run.pass_name for run in runs}, key=_pass_rank)),
        tuple(sorted({r.environment for r in runs})),
        _baselines(runs, {s.key: s for s in series}),
    )


def _series(runs: list[RunFacts], catalog: Catalog) -> tuple[Series, ...]:
    """Each implementation as its runs' titles name it, with its display name (the importer's
    word for the provider, else the provider as written), made unique within the kernel, and
    whether it is a baseline (its implementation's role, or its provider's)."""
    # The newest run's implementation stands for the series (its revisions are one line).
    first: dict[str, RunFacts] = {}
    for run in runs:
        chosen = first.get(run.series_key)
        if chosen is None or _age(run) > _age(chosen):
            first[run.series_key] = run
    found = []
    for key, run in first.items():
        entry = catalog.get(run.implementation, "ImplementationRevision")
        labels = (entry.metadata.get("labels") or {}) if entry else {}
        known = provider(run.source, run.provider)
        label = known.label if known else run.provider
        # The implementation's role, or the provider's where two providers share one
        # implementation (eager PyTorch, the baseline, and torch.compile).
        baseline = labels.get("role") == "baseline" or bool(known and known.baseline)
        renamed = not spelled_alike(label, run.provider)
        found.append(Series(key, run.implementation, run.provider, label, renamed, baseline, entry))
    # Two series may share a display name (one provider, two implementations): told apart.
    named: dict[str, list[Series]] = defaultdict(list)
    for series in found:
        named[series.label].append(series)
    unique = []
    for label, same in named.items():
        providers = {s.provider for s in same}
        for series in same:
            if len(same) == 1:
                unique.append(series)
            elif len(providers) == len(same):
                unique.append(series._replace(label=f"{label} ({series.provider})", renamed=False))
            else:
                tag = series.implementation.removeprefix("sha256:")[:8]
                unique.append(series._replace(label=f"{label} · {tag}"))
    return tuple(sorted(unique, key=lambda s: (s.label.lower(), s.key)))


def _baselines(runs: list[RunFacts], series: dict[str, Series]) -> tuple[tuple[str, str], ...]:
    """One baseline per pass, so that every ratio of a pass has one base whatever the GPU: of
    the series whose implementation has the baseline role, the one with the most runs in the
    pass (the widest coverage), then the first by display name."""
    counts: Counter[tuple[str, str]] = Counter(
        (run.pass_name, run.series_key) for run in runs if series[run.series_key].baseline_role
    )
    chosen: dict[str, tuple[int, str, str]] = {}
    for (pass_name, key), count in counts.items():
        rank = (-count, series[key].label.lower(), key)
        if pass_name not in chosen or rank < chosen[pass_name]:
            chosen[pass_name] = rank
    return tuple(sorted((pass_name, rank[2]) for pass_name, rank in chosen.items()))


def newest_first(runs: Iterable[RunFacts]) -> list[RunFacts]:
    return sorted(runs, key=_age, reverse=True)


# (observed_at, digest), made in C: a key of sorts over every run.
_age: Callable[[RunFacts], tuple[str, str]] = operator.attrgetter("observed_at", "digest")


def newer(run: RunFacts, held: RunFacts | None) -> bool:
    """Whether `run` is newer than `held` (None: nothing held yet), in `newest_first`'s order."""
    return held is None or _age(run) > _age(held)
