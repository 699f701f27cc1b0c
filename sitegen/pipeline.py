"""The build: load → validate → resolve → analyse → plan → render → write.

`check_content` is the build stopped before planning, so `sitegen check` and `sitegen build`
can never disagree about the content. `sitegen build --incremental` and every rebuild of
`sitegen serve` run these same stages, given the last build's `State` (publish/incremental.py).
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
from collections.abc import Callable, Collection, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from sitegen import process
from sitegen.analysis.kernels import Analysis, HeldAnalysis, analyse
from sitegen.analysis.regressions import DEFAULT_THRESHOLD
from sitegen.content.catalog import Catalog, HeldResolution, resolve
from sitegen.content.documents import SHOWN_ESCAPED
from sitegen.content.load import (
    HeldLoads,
    HeldWalk,
    LoadCache,
    LoadResult,
    cached_key,
    content_label,
    load_content,
    load_documents,
    unseen_change,
)
from sitegen.content.records import load_records
from sitegen.content.reports import load_reports
from sitegen.content.walk import StatKey
from sitegen.content.walker import ContentWalker
from sitegen.model.problems import Problem, Severity, errors, promote_warnings
from sitegen.model.values import source_date
from sitegen.progress import QUIET, Progress
from sitegen.publish.compare import Baseline, compare
from sitegen.publish.deploy import Deployment
from sitegen.publish.incremental import (
    HeldFiles,
    IncrementalOutput,
    Outputs,
    State,
    fingerprint,
    forget_state,
    output_tree,
    patched_tree,
    read_state,
    tree_unchanged,
    write_state,
)
from sitegen.publish.lock import locked
from sitegen.publish.manifest import Manifest, plan_manifest
from sitegen.publish.output_watch import OutputWatch
from sitegen.publish.pagefind_format import ENTRY
from sitegen.publish.search import (
    FOLDER,
    WORK,
    HeldIndexSizes,
    IndexedAsRendered,
    IndexSplice,
    SearchIndex,
    index_search,
    indexed_now,
    pagefind_binary,
)
from sitegen.publish.write import MARKER, check_output_dir, patched, staged, staged_folder
from sitegen.render.assets import templates_key
from sitegen.render.render import Output, choose_pages, render_first, render_into
from sitegen.site.changes import banner, previewed
from sitegen.site.lookup import SiteInputs, SiteLookup
from sitegen.site.plan import kernel_pages, plan_site, run_pages
from sitegen.site.records import Link, Site
from sitegen.site.urls import SiteUrls, output_path, parse_base_url, plan_paths, site_urls
from sitegen.superseded import asking, stop_if_superseded, stop_if_superseded_within

# More new runs than this (a branch checked out, a tree copied in) are not shown ahead of the
# site: their pages would hold it up as long as they saved.
FIRST_RUNS_MAX = 20
# A change found that the watcher has not reported yet is waited for this long before the
# tree is walked again: a save lands ~50 ms before watchfiles reports it.
WATCHER_LAG_S = 0.25

if TYPE_CHECKING:  # jinja is imported with render/environment.py, while the content loads
    from jinja2 import Environment


@contextlib.contextmanager
def _stage(progress: Progress, name: str) -> Iterator[None]:
    started = time.perf_counter()
    yield
    progress.stage(name, time.perf_counter() - started)


class CheckedContent(NamedTuple):
    catalog: Catalog
    problems: list[Problem]  # sorted; errors and warnings
    resource_count: int  # every resource read, copies included
    file_count: int
    analysis: Analysis | None = None  # None when the content had errors before its pages
    paths: dict[str, str] | None = None  # every page's site path, by digest or kernel key

    @property
    def ok(self) -> bool:
        return not errors(self.problems)


def check_content(
    content_dir: Path,
    strict: bool = False,
    load_cache: LoadCache | None = None,
    meanwhile: Callable[[], object] | None = None,
    progress: Progress = QUIET,
    held_loads: HeldLoads | None = None,
    held: HeldAnalysis | None = None,
    held_resolution: HeldResolution | None = None,
    walked: HeldWalk | None = None,
    changed: Collection[str] | None = None,
    looking: Callable[[dict[str, StatKey]], object] | None = None,
) -> CheckedContent:
    """Load and validate every file, resolve every reference, then plan every page's path:
    everything a build relies on, so that content that checks clean always builds.

    With `load_cache` (incremental builds), unchanged files are taken from it, and it is updated
    (and `held_loads`, if given, with their runs' summaries and resources: content/load.py),
    and `held`, if given, with what the analysis made (analysis/kernels.py's `HeldAnalysis`),
    and `held_resolution` with what the resolution made (content/catalog.py); `walked` and
    `changed` are content/load.py's (a held walk, the paths a watcher saw change), as is
    `looking`.
    `meanwhile` is called once, while the load workers read (content/load.py). Raises
    EpochError for a SOURCE_DATE_EPOCH that is not a time (dates are checked against it).
    """
    source_date(os.environ.get("SOURCE_DATE_EPOCH"))
    with process.collecting_less():
        with _stage(progress, "load"):
            loaded = load_content(
                content_dir,
                cache=load_cache,
                meanwhile=meanwhile,
                held=held_loads,
                walked=walked,
                changed=changed,
                looking=looking,
            )
        with _stage(progress, "resolve"):
            return _checked(loaded, strict, content_label(content_dir), held, held_resolution)


def check_documents(
    files: Iterable[tuple[str, bytes]], label: str, strict: bool = False
) -> CheckedContent:
    """`check_content` of a tree held in memory (relative path, bytes), named `label`: what an
    importer checks before it writes anything."""
    source_date(os.environ.get("SOURCE_DATE_EPOCH"))
    with process.collecting_less():
        return _checked(load_documents(files, label), strict, label)


def _checked(
    loaded: LoadResult,
    strict: bool,
    label: str,
    held: HeldAnalysis | None = None,
    held_resolution: HeldResolution | None = None,
) -> CheckedContent:
    """Resolve, then (without errors) analyse and plan every page's path."""
    catalog, resolution_problems = resolve(loaded.resources, strict, held_resolution)
    problems = [*loaded.problems, *resolution_problems]
    if not loaded.resources and not errors(problems):
        problems.append(_nothing_in(label))
    analysis = paths = None
    if not errors(problems):
        analysis = analyse(catalog, held)
        paths, clashes = plan_paths(catalog, analysis.kernels, held)
        problems += clashes
    if strict:
        problems = promote_warnings(problems)
    return CheckedContent(
        catalog, sorted(problems), len(loaded.resources), loaded.file_count, analysis, paths
    )


def _nothing_in(label: str) -> Problem:
    """A tree without a resource builds a site of empty lists: most likely the wrong folder."""
    return Problem(
        label,
        "-",
        "no resources: the site built from it has no runs",
        "is this the content tree? Resources are its .json files and .jsonl(.zst) bulk files",
        Severity.WARNING,
    )


class BuiltSite(NamedTuple):
    checked: CheckedContent
    out_dir: Path | None  # None when the content had errors and nothing was written
    page_count: int
    run_count: int
    file_count: int
    warnings: list[str]  # about site data outside the resources (import reports), the search
    search: SearchIndex | None = None  # None: built without one


def build_site(
    content_dir: Path,
    out_dir: Path,
    base_url: str | None = None,
    build_date: str | None = None,
    progress: Progress = QUIET,
    deployment: Deployment | None = None,
    baseline: Baseline | None = None,
    incremental: bool = False,
    state: State | None = None,
    wait: bool = False,
    search: bool = False,
    regression_threshold: float = DEFAULT_THRESHOLD,
    shown_first: Callable[[int], None] | None = None,
    changed: Collection[str] | None = None,
    superseded: Callable[[], bool] | None = None,
) -> BuiltSite:
    """check → analyse → plan → render → index → write. Nothing is written unless the content
    is clean.

    `deployment` says where the site is published (a local build when None), `baseline` what
    its changes page compares it with (none when None). `incremental` reads and keeps the state
    in the user's cache folder; `state` is one held in memory instead (`sitegen serve`),
    updated in place; both (the build daemon, cli/daemon.py): held in memory, with the
    output checked against what the last build left as an incremental build on disk checks it.
    Either way only changed content is read again, only changed pages
    rendered and only changed files written. `progress` hears of each stage and of the pages
    rendered. `regression_threshold` is the factor a step in a series' history must reach to
    be reported (analysis/regressions.py). With a `state` held in memory, `shown_first` is
    called with their count once the pages of the few runs that are new since the last build
    are published, ahead of the rest (`sitegen serve`: the page an author just saved shows
    before the whole site is planned); `changed`, the paths a file watcher saw change since
    the last build (`sitegen serve`): with a state held in memory, only those files are looked
    at before those pages are published, the rest of the tree meanwhile (by the walker
    process, asked as the load starts, or a worker while the site is planned), and should it
    hold a change the watcher missed, the build starts again
    from the load (unless the watcher reports a newer one within WATCHER_LAG_S). With a state
    held in memory, `superseded` is asked whether a newer change is waiting from the moment
    those pages are published, every ~0.25 s of work at most at 100k runs (superseded.py:
    while the site is planned, the pages to render are picked and the files are written): if
    so the build raises Superseded, leaving the state true to the output (the next build,
    which sees the newer change, does the rest). `search` indexes the
    pages with Pagefind where it is installed (publish/search.py) before they are published;
    where it is not, the site is built without and a warning says so. The build holds the
    output's lock throughout (publish/lock.py): another build into the same folder is
    refused, or with `wait` waits.
    Raises SearchError for an index Pagefind could not make, OutputError for a refused output
    path (OutputBusy: locked; WriteError, an OSError: the file system refused a write),
    UrlError for a bad base URL, RenderError for a template that fails, OSError for a file
    system that refuses, EpochError for a bad SOURCE_DATE_EPOCH, KeyboardInterrupt on Ctrl-C
    (or SIGTERM, under the command line's guard), Superseded (above). Whatever it raises, the
    previous site is as it was (InterruptedAfterSwap: the new one is whole; Superseded: the
    pages it published are in place), and no staging tree or worker is left.
    """
    deployment = deployment or Deployment()
    if base_url is not None:
        deployment = deployment._replace(base_url=base_url)
    # Refuse a dangerous output path before any work, and again before writing.
    target = check_output_dir(out_dir, content_dir)
    parse_base_url(deployment.base_url)
    with locked(target, wait):
        build = functools.partial(
            _build,
            content_dir,
            out_dir,
            build_date,
            progress,
            deployment,
            baseline,
            incremental,
            state,
            pagefind_binary() if search else None,
            search,
            regression_threshold,
            shown_first,
            superseded=superseded if state is not None and not incremental else None,
        )
        built = build(changed=changed)
        while built is None:  # the watcher missed a change: the tree is walked this time
            built = build(changed=None)
        return built


def _build(
    content_dir: Path,
    out_dir: Path,
    build_date: str | None,
    progress: Progress,
    deployment: Deployment,
    baseline: Baseline | None,
    incremental: bool,
    state: State | None,
    binary: Path | None,
    search: bool,
    regression_threshold: float = DEFAULT_THRESHOLD,
    shown_first: Callable[[int], None] | None = None,
    changed: Collection[str] | None = None,
    superseded: Callable[[], bool] | None = None,
) -> BuiltSite | None:
    """The build, or None where it took the watcher's word for what `changed` and found after
    the first publish that the watcher had missed a change."""
    on_disk = incremental and state is None
    tree_check: Callable[[], bool] | None = None
    with process.collecting_less(), contextlib.ExitStack() as stack:
        if on_disk:  # ~300k small objects: a full collection every few thousand was half of it
            state = read_state(out_dir, content_dir) or State()
        if incremental and state is not None:
            # Is the output as the last build left it? Walked by a CPU aside: the build
            # daemon's from the start (~1.5 s at 100k runs' pages, longer than the rest of a
            # held rebuild takes to plan, while the load of a few changed files needs no CPU);
            # a state on disk's once loaded (during the load, the CPUs summarise cached runs).
            walk = functools.partial(tree_unchanged, out_dir.resolve(), state.tree)
            output_check = functools.partial(process.meanwhile, walk)
            if not on_disk and state.output_watch is not None and state.output_watch.unchanged():
                tree_check = _unchanged  # the daemon's watch saw nothing: no walk (~2.4 s)
            elif not on_disk:
                tree_check = stack.enter_context(output_check()) if state.outputs else walk
        # The templates compile while the load workers read: a CPU would idle otherwise.
        templates = functools.cache(functools.partial(_templates, state if not on_disk else None))
        # Whether the watcher missed a change is asked of the walker as soon as the load
        # has read the few files it looks at: the walk (~1 s at 100k files) runs beside the
        # whole build, not from the plan on (where this process waited ~0.5 s for it).
        asked: list[Callable[[], bool]] = []

        def ask_early(looked_at: dict[str, StatKey]) -> None:
            if state is not None:
                asked.extend(filter(None, [_ask_walker(content_dir, state, looked_at)]))

        held_here = state is not None and not on_disk
        checked = check_content(
            content_dir,
            load_cache=state.loads if state else None,
            meanwhile=templates,
            progress=progress,
            # Held only where the state stays in memory (`sitegen serve`) for the next build.
            held_loads=state.held_loads if state and not on_disk else None,
            held=state.analysis if state and not on_disk else None,
            held_resolution=state.resolution if state and not on_disk else None,
            walked=state.walked if state and not on_disk else None,
            changed=changed if state and not on_disk else None,
            looking=ask_early if held_here and changed is not None else None,
        )
        if state is not None and state.walker is not None and not on_disk and not asked:
            state.walker.loaded(state.walked.walks, state.walked.looked_at)
        if not checked.ok or checked.analysis is None or checked.paths is None:
            if asked[0]() if asked else _missed(changed, content_dir, state):
                return None
            return BuiltSite(checked, None, 0, 0, 0, [])
        if on_disk and state is not None:
            tree_check = stack.enter_context(output_check()) if state.outputs else walk
        with _stage(progress, "analyse"):  # done by the check: what is left is the reports
            reports, warnings = load_reports(content_dir)
            records, record_warnings = load_records(content_dir)
            warnings += record_warnings
            analysis = checked.analysis
        if search and binary is None:
            warnings.append(
                "no search index: pagefind is not installed (pip install 'sitegen[search]')"
            )
        planning = time.perf_counter()
        urls = site_urls(checked.paths, deployment.base_url)

        @functools.cache  # once, whoever asks first
        def manifest_now() -> Manifest:
            return plan_manifest(checked.catalog, analysis, urls, deployment)

        # Planned when the renderer writes it, beside the page workers, unless the changes
        # page reads it first, or an incremental build plans it before its render (below).
        manifest: Manifest | Callable[[], Manifest] = manifest_now
        changes = None
        if baseline is not None:
            manifest = manifest_now()
            if baseline.manifest is not None:
                head = head_label(deployment)
                changes = compare(baseline.manifest, manifest, baseline.label, head)
        inputs = SiteInputs(
            checked.catalog,
            analysis,
            urls,
            reports,
            build_date,
            deployment,
            manifest,
            baseline,
            changes,
            keyed=state is not None,
            records=records,
            escapes_text=any(p.hint == SHOWN_ESCAPED for p in checked.problems),
            regression_threshold=regression_threshold,
        )
        lookup = SiteLookup(inputs)
        key = ""
        missed: Callable[[], bool] | None = None
        if state is not None:
            key = _site_key(inputs, banner(lookup), deployment.indexable)
            if analysis.held is not None:
                analysis.held.site(key)  # what it holds of groups of runs was made with these
            if shown_first is not None and not on_disk:
                shown = _new_runs_first(lookup, state, out_dir, content_dir, key, templates())
                if shown:
                    shown_first(shown)
            # From here on the rest of the site catches up: a newer change stops it.
            stack.enter_context(asking(superseded))
            stop_if_superseded()
            if changed is not None:
                # Did the watcher miss a change? A CPU aside walks the tree (~1 s at 100k
                # files) while this one plans and chooses the pages to render, the walker
                # asked as the load started where it could be; the answer waited for before
                # anything more is written (`_write_incremental`).
                missed = asked[0] if asked else _ask_walker(content_dir, state)
                if missed is None:  # a worker forked for it, where no walker process runs
                    look = functools.partial(_missed, changed, content_dir, state)
                    missed = stack.enter_context(process.meanwhile(look))
            manifest_now()  # after the new runs' pages: they are not held up by it
        site = plan_site(inputs, lookup)
        stop_if_superseded()
        pages = len(site.pages) + 1  # and the 404 page
        progress.stage("plan", time.perf_counter() - planning)
        if state is not None:
            written = _write_incremental(
                site,
                urls,
                out_dir,
                content_dir,
                state,
                key,
                templates(),
                progress,
                tree_check,
                binary,
                None if on_disk else state.files,
                missed,
            )
            if written is None:
                # A change the watcher reports (or, saved a moment ago, is about to) is the
                # next build's to take, without walking the whole tree again here.
                stop_if_superseded_within(WATCHER_LAG_S)
                return None
            target, index = written
            if changed is None and not on_disk:
                # The walker told of this walk now, not by the next build, which only looks
                # at the few files a watcher saw change (~0.14 s at 100k files to tell it).
                _ask_walker(content_dir, state)
            if incremental and not on_disk:
                unwatched = _watch_output(state, target)
                warnings += [unwatched] if unwatched else []
            if on_disk:
                not_kept = write_state(out_dir, content_dir, state)
                warnings += [not_kept] if not_kept else []
            files = len(state.outputs)
            return BuiltSite(checked, target, pages, site.run_count, files, warnings, index)
        # Rendered straight into the staging tree, by worker processes on a big site, and
        # indexed there: the index goes live with the pages.
        environment = templates()
        rendering = time.perf_counter()
        with staged(out_dir, content_dir) as staging:
            out = Output(staging.write)
            with _indexed(out, staging.root, binary) as indexing:
                file_count = render_into(site, urls, indexing or out, progress.pages, environment)
                progress.stage("render", time.perf_counter() - rendering)
                index = _finish_index(indexing, staging.root / FOLDER, progress)
            publishing = time.perf_counter()
        progress.stage("publish", time.perf_counter() - publishing)
    return BuiltSite(checked, staging.target, pages, site.run_count, file_count, warnings, index)


def _index(
    site: Path,
    into: Path,
    binary: Path | None,
    progress: Progress,
) -> SearchIndex | None:
    """The search index of `site`'s pages as they are, made in `into` (its work folder beside
    `into`, staged): an incremental build's patched site."""
    if binary is None:
        return None
    index = index_search(site, into, into.parent / WORK, binary)
    progress.stage("index", index.seconds)
    return index


def _indexed(
    out: Output, site: Path, binary: Path | None
) -> contextlib.AbstractContextManager[IndexedAsRendered | None]:
    """With an index to make, an output indexing the pages of `site` as they are rendered."""
    if binary is None:
        return contextlib.nullcontext()
    return IndexedAsRendered(out, site, binary)


def _finish_index(
    indexing: IndexedAsRendered | None, into: Path, progress: Progress
) -> SearchIndex | None:
    """The index of the pages `indexing` was handed, made in `into`; its stage is what was left
    to do once the render ended."""
    if indexing is None:
        return None
    index = indexing.finish(into)
    progress.stage("index", index.seconds)
    return index


def _compile_templates() -> Environment:
    from sitegen.render.environment import make_environment  # jinja's import: see above

    return make_environment()


def _templates(state: State | None) -> Environment:
    """The templates compiled; with a state held in memory (`sitegen serve`), the last build's
    while no template file changed (0.05-0.1 s a rebuild otherwise)."""
    if state is None:
        return _compile_templates()
    key = templates_key()
    if state.templates is None or state.templates[0] != key:
        state.templates = (key, _compile_templates())
    return state.templates[1]


def _new_runs_first(
    lookup: SiteLookup,
    state: State,
    out_dir: Path,
    content_dir: Path,
    site_key: str,
    environment: Environment,
) -> int:
    """Publish the pages of the runs without a page in the last build (a saved run file is a
    new digest, a new page) and of their kernels (the chart an author has open), as the whole
    site will show them, before the site is planned; how many runs: 0 when there is no last
    build to patch, or no such run, or more than `FIRST_RUNS_MAX`. Their outputs are noted in
    `state`: the whole build that follows finds them unchanged and neither plans nor renders
    them again."""
    urls = lookup.urls
    outputs = state.outputs
    if not _patchable(outputs, out_dir.resolve()):
        return 0
    # Only runs whose facts are new to the analysis can be without a page.
    held = lookup.analysis.held
    candidates = held.fresh if held is not None else lookup.runs.values()
    new = [r for r in candidates if output_path(urls.path_of(r.digest) or "") not in outputs]
    if not new or len(new) > FIRST_RUNS_MAX:
        return 0
    inputs = lookup.inputs
    shown = banner(lookup)
    output = IncrementalOutput(outputs, site_key)
    with patched(out_dir, content_dir) as patch:
        output.sink(patch.write)
        kernels = [lookup.kernels[key] for key in sorted({run.kernel_key for run in new})]
        render_first(
            run_pages(lookup, new, placed=False) + kernel_pages(lookup, kernels),
            urls,
            output,
            environment,
            build_date=inputs.build_date,
            banner=shown,
            indexable=inputs.deployment.indexable,
            preview=previewed(lookup),
            escapes_text=inputs.escapes_text,
        )
        output.finish()
    state.outputs = {**outputs, **output.outputs}
    if state.files.outputs is outputs:
        # Only new pages (runs without one, kernels), never a held page object: the items of
        # the pages the last build skipped are as it noted them (`HeldFiles.marks`).
        state.files.outputs = state.outputs
    return len(new)


class _Missed(Exception):
    """The watcher missed a change: what a held rebuild staged is dropped, and it starts over."""


def _unchanged() -> bool:
    return True


def _watch_output(state: State, target: Path) -> str | None:
    """Hold, for the next build, whether anyone changes the output from now on: the watch
    taken over this build's own writes, or one armed (~1.6 s at 100k runs' pages), tried again
    by a later build where it wanted more watches than were free and as many are now (another
    daemon's ended, say). A warning where there is none for want of watches and the last
    build did not say so already: each build then walks the output (~2.4 s at 100k runs'
    pages)."""
    if state.output_watch is not None:
        found = state.output_watch.settled()
    elif state.output_unwatched is None or state.output_unwatched.may_fit():
        found = OutputWatch.arm(target)
    else:
        return None
    if isinstance(found, OutputWatch):
        state.output_watch, state.output_unwatched = found, None
        return None
    before = state.output_unwatched
    state.output_watch, state.output_unwatched = None, found
    if not found.wanted or (before is not None and before.wanted):
        return None  # nothing to be done about it, or said already
    return (
        f"the output is not watched: {found.reason}; until it is, each build walks the output"
        " to find what changed there"
    )


def _missed(changed: Collection[str] | None, content_dir: Path, state: State | None) -> bool:
    """Whether the build took a watcher's word for what changed and the watcher missed one."""
    if changed is None or state is None:
        return False
    return unseen_change(content_dir, state.walked, state.loads)


def _ask_walker(
    content_dir: Path, state: State, looked_at: dict[str, StatKey] | None = None
) -> Callable[[], bool] | None:
    """Ask the content walker of a held state (content/walker.py: started at first, where a
    CPU is free for it) whether the tree differs from what the load holds; the answer's
    function (or, if the walker stops answering, this process's own walk), or None where
    no walker runs (one CPU, or it could not be started or asked). `looked_at`: asked from
    within the load, which looks at those files only (content/load.py's `looking`), once it
    has read them, with the stat it took of each, the walker being told of that load."""
    if state.content_unwalked or process.usable_cpus() < 2:
        return None
    label = content_label(content_dir)
    walker = state.walker
    try:
        if walker is None or walker.content_dir != content_dir or walker.label != label:
            if walker is not None:
                walker.stop()
            walker = state.walker = ContentWalker(content_dir, label)
        walked = state.walked
        key = cached_key(state.loads)
        if looked_at is not None:
            walker.loaded(walked.walks, looked_at)
            key = _looked_at_first(looked_at, key)
        asked = walker.ask(walked.walks, walked.files, walked.problems, key)
    except (OSError, KeyError):
        _stop_walker(state)
        return None

    def answer() -> bool:
        try:
            return asked()
        except OSError:
            _stop_walker(state)
            return unseen_change(content_dir, state.walked, state.loads)

    return functools.cache(answer)


def _looked_at_first(
    looked_at: dict[str, StatKey], cached: Callable[[str], StatKey]
) -> Callable[[str], StatKey]:
    """Each file's stat as the cache holds it, `looked_at`'s as the load took them."""
    return lambda shown: looked_at[shown] if shown in looked_at else cached(shown)


def _stop_walker(state: State) -> None:
    if state.walker is not None:
        state.walker.stop()
    state.walker, state.content_unwalked = None, True


def _patchable(outputs: Outputs, target: Path) -> bool:
    """Whether the last build's output is there to patch: its files noted, its marker in place."""
    return bool(outputs) and (target / MARKER).is_file()


def _site_key(inputs: SiteInputs, banner: tuple[Link, ...], indexable: bool) -> str:
    kernels = inputs.analysis.kernels
    return fingerprint(
        inputs.catalog,
        inputs.urls,
        (k.key for k in kernels),
        [(k.key, k.title, k.slug) for k in kernels],
        inputs.reports,
        inputs.records,
        inputs.deployment,
        inputs.build_date,
        banner,
        indexable,
        inputs.regression_threshold,
    )


def _splice_started(splice: IndexSplice, output: IncrementalOutput, files: set[str] | None) -> None:
    """`splice` started, the pages deleted being those of the last build not in `files`."""
    splice.start(output.gone_from(files) if files is not None else ())


def _write_incremental(
    site: Site,
    urls: SiteUrls,
    out_dir: Path,
    content_dir: Path,
    state: State,
    site_key: str,
    environment: Environment,
    progress: Progress,
    tree_check: Callable[[], bool] | None,
    binary: Path | None,
    held_files: HeldFiles | None = None,
    missed: Callable[[], bool] | None = None,
) -> tuple[Path, SearchIndex | None] | None:
    """Render what changed; patch the previous output, or write a whole one if there is none
    (or, with `tree_check`, if it answers that the output is not exactly what the last build
    left, `state.tree`, which is then made what this build leaves: `build --incremental`).
    `state.outputs` says what is there after. With `binary`, the pages whose indexed copy
    changed are indexed and spliced into the search index, its files patched with the pages
    (`spliced_index`), or, where it cannot be spliced, the index is made again whole and
    swapped in; without, a previous one is removed. `held_files`: a held state's (`HeldFiles`).
    None, with nothing written, where `missed` answers that the watcher missed a change:
    asked once the changed pages are staged (the walk it waits for runs beside the render),
    or, where the whole output is written, once the pages are chosen."""
    target = out_dir.resolve()
    rendering = time.perf_counter()
    usable = _patchable(state.outputs, target)
    output = IncrementalOutput(state.outputs if usable else {}, site_key, held_files)
    chosen = None
    if usable:
        # Chosen while a CPU aside walks the output for `tree_check` (the build daemon's
        # ~2.4 s at 100k runs' pages, which this process waited for), and again if the
        # output is not as the last build left it.
        chosen = choose_pages(site, output)
        if tree_check is not None and not tree_check():
            usable, chosen = False, None
            output = IncrementalOutput({}, site_key, held_files)
    if missed is not None and not usable and missed():
        return None
    forget_state(out_dir)  # a build killed from here on leaves no state: the next one is full
    index = None
    if usable:
        try:
            # A held state's process lives on: the replaced big files are freed by a thread.
            aside = state.discarding if held_files is not None else None
            with patched(out_dir, content_dir, aside) as patch, contextlib.ExitStack() as stack:
                output.sink(patch.write)
                splice = None
                if binary is not None:
                    splice = stack.enter_context(IndexSplice(target, patch.staging.root, binary))
                    # Pagefind indexes the changed pages while the rest is written and told
                    # apart (~0.1 s of wall on the real catalog, which this process waited).
                    output.when_rendered = functools.partial(
                        _splice_started, splice, output, chosen.paths if chosen else None
                    )
                render_into(site, urls, output, progress.pages, environment, chosen=chosen)
                # Asked only now, the changed files staged, not moved in: the walk (~1 s at
                # 100k files) ran beside the render, where this process waited ~0.4 s for it.
                if missed is not None and missed():
                    raise _Missed
                output.finish(chosen.paths if chosen is not None else None)
                for path in output.gone:
                    patch.delete(path)
                splicing = time.perf_counter()
                progress.stage("render", splicing - rendering)
                spliced = None
                if splice is not None:
                    spliced = splice.finished(patch.deleted)
                    for path in spliced or ():
                        patch.delete(path)
                    patch.last.add(f"{FOLDER}/{ENTRY}")  # naming files already moved in
                publishing = time.perf_counter()
        except _Missed:  # the staged files removed, the output untouched
            return None
        changed = any(path.endswith(".html") for path in patch.changed)
        indexed = (target / FOLDER / ENTRY).is_file()
        reindexed = binary is None or (changed and spliced is None) or not indexed
        if not reindexed and spliced:
            progress.stage("index", publishing - splicing)
        if reindexed:
            with staged_folder(out_dir, FOLDER) as folder:
                index = _index(target, folder, binary, progress)
        sizes = None
        if tree_check is not None:
            replaced = FOLDER if reindexed else None
            # The index's sizes held with the tree, changed by the index's files the splice
            # changed: summing them from the tree's ~200k entries took ~0.03 s a build.
            held = state.index_sizes if not reindexed else None
            held = held if held is not None and held.tree is state.tree else None
            indexed_files = [p for p in set(patch.changed) if p.startswith(f"{FOLDER}/")]
            before = [state.tree.get(path) for path in indexed_files]
            state.tree = patched_tree(target, state.tree, patch.changed, replaced)
            after = [state.tree.get(path) for path in indexed_files]
            sizes = state.index_sizes = held.patched(before, after) if held is not None else None
        if not reindexed and spliced:
            # The index's sizes from the output's tree where it is held (a walk of its
            # ~25,000 files took ~0.15 s of a held rebuild's ~1.5 s on the real catalog).
            if tree_check is not None:
                sizes = state.index_sizes = sizes or HeldIndexSizes.of(state.tree)
            index = indexed_now(target / FOLDER, publishing - splicing, sizes)
    else:
        with staged(out_dir, content_dir) as staging:
            output.sink(staging.write)
            # Nothing is skipped without a previous output: every page passes, indexed.
            with _indexed(output, staging.root, binary) as indexing:
                render_into(site, urls, indexing or output, progress.pages, environment)
                output.finish()
                output.mark_written(site.pages)
                progress.stage("render", time.perf_counter() - rendering)
                index = _finish_index(indexing, staging.root / FOLDER, progress)
            publishing = time.perf_counter()
        if tree_check is not None:
            state.tree, state.index_sizes = output_tree(target) or {}, None
    progress.stage("publish", time.perf_counter() - publishing)
    state.outputs = output.outputs
    return target, index


def head_label(deployment: Deployment) -> str:
    """How the changes page names the site being built."""
    commit = f" at {deployment.short_commit}" if deployment.commit else ""
    if deployment.review_id:
        return f"pull request #{deployment.review_id}{commit}"
    if deployment.branch:
        return f"{deployment.branch}{commit}"
    return f"this build{commit}"


class ContentManifest(NamedTuple):
    checked: CheckedContent
    manifest: Manifest | None  # None when the content had errors


def manifest_of_content(content_dir: Path, deployment: Deployment | None = None) -> ContentManifest:
    """The manifest a build of `content_dir` would publish, without rendering a page."""
    deployment = deployment or Deployment()
    checked = check_content(content_dir)
    if not checked.ok or checked.analysis is None or checked.paths is None:
        return ContentManifest(checked, None)
    with process.collecting_less():
        urls = site_urls(checked.paths, deployment.base_url)
        manifest = plan_manifest(checked.catalog, checked.analysis, urls, deployment)
        return ContentManifest(checked, manifest)
