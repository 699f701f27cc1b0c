"""The pipeline: load → validate → resolve → plan → render → write.

`check` is the same pipeline stopped before planning, so the two can never drift apart.
"""

from __future__ import annotations

import functools
import gc
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, ParamSpec, TypeVar

from sitegen import catalog as catalog_stage
from sitegen import manifest as manifest_stage
from sitegen import urls as urls_stage
from sitegen.catalog import Catalog, resolve
from sitegen.changes import Baseline, compare
from sitegen.deploy import Deployment
from sitegen.incremental import (
    IncrementalOutput,
    State,
    fingerprint,
    forget_state,
    read_state,
    spares_dir,
    write_state,
)
from sitegen.kernels import Analysis, RunFacts, analyse, reanalyse
from sitegen.load import LoadCache, commit_changed, load_changed, load_content, unpack
from sitegen.manifest import Manifest, plan_manifest
from sitegen.pages import Inputs, LazyPage, Page, PlanCache, Replan, Site, plan_site
from sitegen.problems import Problem, errors, promote_warnings
from sitegen.render import KeptDocuments, render_into
from sitegen.sources import load_reports
from sitegen.urls import json_twin, output_path, parse_base_url, plan_urls
from sitegen.write import MARKER, check_output_dir, patched, seed_spares, staged

if TYPE_CHECKING:  # jinja is imported with templating.py, during the load (build_site)
    from jinja2 import Environment

P = ParamSpec("P")
R = TypeVar("R")


# While a build runs, the young generation is collected every this many allocations, not 700.
COLLECT_EVERY = 100_000


def _collect_less(function: Callable[P, R]) -> Callable[P, R]:
    """Run `function` with the young generation collected every COLLECT_EVERY allocations.

    Loading and planning allocate millions of objects that live until the build ends and make
    no cycles worth finding: with the default thresholds the collector walked them again and
    again, a third of the planning time. At the end the young objects left (tens of thousands:
    the build's result, mostly) join the oldest generation unwalked: with the default threshold
    back, the first allocation after the build walked them all (~9 ms of the real catalog's).
    """

    @functools.wraps(function)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        thresholds = gc.get_threshold()
        gc.set_threshold(COLLECT_EVERY, 50, 1000)
        try:
            return function(*args, **kwargs)
        finally:
            if thresholds[0] < COLLECT_EVERY:  # the outermost: the thresholds go back down
                gc.freeze()  # every tracked object into the permanent generation (no walk) …
                gc.unfreeze()  # … and back, into the oldest one; the young one left empty
            gc.set_threshold(*thresholds)

    return run


class CheckedContent(NamedTuple):
    catalog: Catalog
    problems: list[Problem]  # sorted; errors and warnings
    resource_count: int  # every resource read, copies included
    file_count: int

    @property
    def ok(self) -> bool:
        return not errors(self.problems)


@_collect_less
def check_content(
    content_dir: Path,
    strict: bool = False,
    load_cache: LoadCache | None = None,
    meanwhile: Callable[[], object] | None = None,
) -> CheckedContent:
    """Load and validate every file, then resolve every reference.

    With `load_cache` (incremental builds), unchanged files are taken from it, and it is updated.
    `meanwhile` is called once, while the load workers read (load.load_content).
    """
    loaded = load_content(content_dir, cache=load_cache, meanwhile=meanwhile)
    catalog, resolution_problems = resolve(loaded.resources, strict=strict)
    problems = [*loaded.problems, *resolution_problems]
    if strict:
        problems = promote_warnings(problems)
    return CheckedContent(catalog, sorted(problems), len(loaded.resources), loaded.file_count)


@dataclass
class Held:
    """The last good incremental build, kept in memory by a long-lived process (`sitegen
    serve`) so that the next one starts from it (`rebuild_runs`) rather than from disk."""

    content_dir: Path
    out_dir: Path
    state: State
    checked: CheckedContent
    inputs: Inputs
    site_key: str
    pages_of: dict[str, list[str]]  # each owner (LazyPage.owner; "": site-wide) → its pages
    page_count: int
    sitemap: tuple[str, ...]
    warnings: list[str]
    documents: KeptDocuments
    # The templates as compiled for the last build: a rebuild after run files changed keeps
    # them (a template's change takes the full build, which compiles them again).
    environment: Environment
    # What rebuilds since that build planned (only runs changed since), for the next.
    plans: PlanCache = field(default_factory=PlanCache)


class BuiltSite(NamedTuple):
    checked: CheckedContent
    out_dir: Path | None  # None when the content had errors and nothing was written
    page_count: int
    run_count: int
    file_count: int
    warnings: list[str]  # about site data outside the resources (import reports)
    held: Held | None = None  # an incremental build's state, for the next build in-process


@_collect_less
def build_site(
    content_dir: Path,
    out_dir: Path,
    base_url: str | None = None,
    build_date: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    deployment: Deployment | None = None,
    baseline: Baseline | None = None,
    incremental: bool = False,
    keep: bool = False,
    previous: Held | None = None,
) -> BuiltSite:
    """check → analyse → plan → render → write. Nothing is written unless the content is clean.

    `deployment` says where the site is published (deploy.py; a local build when None),
    `baseline` what its changes page compares it with (none when None).
    `incremental` uses and keeps the cache beside the output (incremental.py): only changed
    content is read again, only changed pages are rendered and only changed files written.
    `keep` (a long-lived process: `sitegen serve`) holds that state in memory instead, in the
    result's `held`, and takes it back as `previous`; nothing is kept on disk.
    Raises OutputError for a refused output path, UrlError for a bad base URL or a path clash.
    """
    deployment = deployment or Deployment()
    if base_url is not None:
        deployment = deployment._replace(base_url=base_url)
    # Refuse a dangerous output path before any work, and again in `staged` before writing.
    check_output_dir(out_dir, content_dir)
    parse_base_url(deployment.base_url)
    state = None
    if keep:
        state = previous.state if previous else State()
    elif incremental:
        state = read_state(out_dir) or State()
    # The templates are compiled (jinja and markdown-it imported) while the load workers read:
    # ~0.25 s that had left a CPU idle before them.
    templates = functools.cache(_compile_templates)
    checked = check_content(
        content_dir, load_cache=state.loads if state else None, meanwhile=templates
    )
    if not checked.ok:
        return BuiltSite(checked, None, 0, 0, 0, [])
    reports, warnings = load_reports(content_dir)
    analysis = analyse(checked.catalog)
    urls = plan_urls(checked.catalog, analysis.kernels, deployment.base_url)

    def manifest_now() -> Manifest:
        return plan_manifest(checked.catalog, analysis, urls, deployment)

    # Planned when render.py writes it, beside the page workers (~0.07 s of the real catalog's
    # build had one CPU idle), unless something reads it first: the changes page or the next
    # build.
    manifest: Manifest | Callable[[], Manifest] = manifest_now
    changes = None
    if baseline is not None or state is not None:
        manifest = manifest_now()
        if baseline is not None and baseline.manifest is not None:
            changes = compare(baseline.manifest, manifest, baseline.label, head_label(deployment))
    # A long-lived process keeps what this build plans in this process (the runs' counts,
    # resources' run lists) for its first rebuild; a full build starts a new cache.
    plans = PlanCache()
    inputs = Inputs(
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
        plans=plans if keep else None,
    )
    site = plan_site(inputs)
    if state is not None:
        documents = previous.documents if previous else KeptDocuments(keep=keep)
        site_key = _site_key(site, inputs)
        environment = templates()
        target = _write_incremental(
            site, out_dir, content_dir, state, inputs, site_key, documents, environment, progress
        )
        if not keep:
            write_state(out_dir, state)
        held = None
        if keep:
            held = Held(
                content_dir,
                out_dir,
                state,
                checked,
                inputs,
                site_key,
                pages_by_owner(site.pages),
                len(site.pages),
                site.sitemap,
                warnings,
                documents,
                environment,
                plans,
            )
        pages = len(site.pages) + 1
        return BuiltSite(checked, target, pages, site.run_count, len(state.outputs), warnings, held)
    # Rendered straight into the staging tree, by worker processes on a big site.
    with staged(out_dir, content_dir) as staging:
        file_count = render_into(site, urls, staging.write, progress, templates())
    pages = len(site.pages) + 1
    return BuiltSite(checked, staging.target, pages, site.run_count, file_count, warnings)


def _compile_templates() -> Environment:
    from sitegen.templating import make_environment  # not at the top: see templating.py

    return make_environment()


def _site_key(site: Site, inputs: Inputs) -> str:
    return fingerprint(
        inputs.catalog,
        inputs.urls,
        [(k.key, k.title, k.slug) for k in inputs.analysis.kernels],
        inputs.reports,
        inputs.deployment,
        inputs.build_date,
        site.banner,
        site.indexable,
    )


def _write_incremental(
    site: Site,
    out_dir: Path,
    content_dir: Path,
    state: State,
    inputs: Inputs,
    site_key: str,
    documents: KeptDocuments,
    environment: Environment,
    progress: Callable[[int, int], None] | None,
) -> Path:
    """Render what changed; patch the previous output, or write a whole one if there is none.
    `state.outputs` says what is there after."""
    target = out_dir.resolve()
    usable = bool(state.outputs) and (target / MARKER).is_file()
    output = IncrementalOutput(state.outputs if usable else {}, site_key)
    forget_state(out_dir)  # a build killed from here on leaves no cache: the next one is full
    if usable:
        with patched(out_dir, content_dir, spares_dir(out_dir)) as patch:
            output.sink(patch.write)
            render_into(site, inputs.urls, output, progress, environment, documents=documents)
            output.finish()
            for path in state.outputs.keys() - output.outputs.keys():
                patch.delete(path)
    else:
        with staged(out_dir, content_dir) as staging:
            output.sink(staging.write)
            render_into(site, inputs.urls, output, progress, environment, documents=documents)
            output.finish()
        # The files that are not pages (no key) include the big ones: spares for the next.
        extras = (path for path, (key, _) in output.outputs.items() if key is None)
        seed_spares(target, spares_dir(out_dir), extras)
    state.outputs = output.outputs
    return target


@_collect_less
def rebuild_runs(previous: Held, changed: Iterable[Path]) -> BuiltSite | None:
    """The build after `changed` files, when they hold only runs: load → patch the catalog,
    analysis, URLs and manifest → plan the pages of what those runs touch → render → patch.

    Byte for byte what `build_site` writes (tests/test_incremental.py), in a fraction of the
    time on a big catalog: an unchanged run costs a few C-level copies and comparisons, no
    Python per run beyond the site-wide pages' lists. None when the change is anything else
    (another kind of resource, a problem, a new or vanished kernel, a changes page to
    compare): the caller makes a full incremental build, which reports.

    Once the site is written, `previous` is used up: its state, page index and plan cache are
    updated in place and become the result's (until then nothing of it changes but caches).
    """
    inputs = previous.inputs
    if inputs.baseline is not None:
        return None
    files = load_changed(previous.content_dir, changed, previous.state.loads)
    if files is None:
        return None
    if not files:  # an editor's swap file, say: nothing to do
        target = previous.out_dir.resolve()
        old = previous.checked
        pages = previous.page_count + 1
        count = len(previous.state.outputs)
        runs = len(inputs.analysis.runs)
        return BuiltSite(old, target, pages, runs, count, previous.warnings, previous)
    if {f.shown for f in files} & {p.path for p in previous.checked.problems}:
        return None  # its problems would have to go away: resolve everything again
    before = [r for f in files for r in unpack(f.before)]
    after = [r for f in files for r in unpack(f.after)]
    removed = {r.digest for r in before}
    catalog = catalog_stage.replace_runs(inputs.catalog, removed, after)
    if catalog is None:
        return None
    analysis = reanalyse(inputs.analysis, catalog, removed, after)
    if analysis is None:
        return None
    urls = urls_stage.replace_runs(inputs.urls, removed, (r.digest for r in after))
    if urls is None:
        return None
    manifest = inputs.manifest
    assert not callable(manifest), "a held build's manifest is planned (build_site)"
    if manifest is not None:
        manifest = manifest_stage.replace_runs(manifest, catalog, analysis, urls, removed, after)
    touched = {*removed, *(r.digest for r in after)}
    owners = {*touched, *(r.kernel_key for r in _facts(inputs, analysis, touched))}
    owners |= {value for r in [*before, *after] for _, _, value in catalog_stage.references_of(r)}
    inputs = replace(
        inputs,
        catalog=catalog,
        analysis=analysis,
        urls=urls,
        manifest=manifest,
        replan=Replan(
            frozenset(owners),
            previous.pages_of,
            previous.sitemap,
            inputs.analysis.newest,
            removed=tuple(inputs.analysis.runs[digest_value] for digest_value in sorted(removed)),
            added=tuple(analysis.runs[r.digest] for r in after),
        ),
        plans=previous.plans,
    )
    site = plan_site(inputs)
    state = previous.state
    deleted = []
    output = IncrementalOutput(state.outputs, previous.site_key)
    with patched(previous.out_dir, previous.content_dir, spares_dir(previous.out_dir)) as patch:
        output.sink(patch.write)
        # In this process: a patch is a few pages, and the charts it plans are kept here.
        render_into(
            site,
            urls,
            output,
            progress=None,
            environment=previous.environment,
            workers=1,
            documents=previous.documents,
        )
        output.finish()
        for path in site.gone:
            for file in (output_path(path), json_twin(path)):
                if file in state.outputs:
                    deleted.append(file)
                    patch.delete(file)
    # Written: the held build becomes this one, in place (nothing else holds it).
    commit_changed(files, state.loads)
    for file in deleted:
        del state.outputs[file]
    state.outputs.update(output.outputs)
    pages_of = previous.pages_of
    page_count = previous.page_count
    planned = pages_by_owner(site.pages)
    planned.setdefault("", []).extend(site.unchanged)
    for owner in site.replanned or ():
        page_count += len(planned.get(owner, ())) - len(pages_of.get(owner, ()))
        if owner in planned:
            pages_of[owner] = planned[owner]
        else:
            pages_of.pop(owner, None)
    old = previous.checked
    checked = CheckedContent(
        catalog,
        old.problems,
        old.resource_count - len(before) + len(after),
        old.file_count + sum(bool(f.after) - bool(f.before) for f in files),
    )
    held = replace(
        previous, checked=checked, inputs=inputs, page_count=page_count, sitemap=site.sitemap
    )
    target = previous.out_dir.resolve()
    return BuiltSite(
        checked,
        target,
        page_count + 1,
        site.run_count,
        len(state.outputs),
        previous.warnings,
        held,
    )


def pages_by_owner(pages: Iterable[Page | LazyPage]) -> dict[str, list[str]]:
    """Each owner's pages' paths ("": the site-wide pages, which have none)."""
    found: dict[str, list[str]] = defaultdict(list)
    for page in pages:
        found[page.owner if isinstance(page, LazyPage) else ""].append(page.path)
    return dict(found)


def _facts(inputs: Inputs, analysis: Analysis, digests: set[str]) -> list[RunFacts]:
    """The facts of these runs, before the change or after it."""
    return [
        found
        for d in digests
        for found in (inputs.analysis.runs.get(d), analysis.runs.get(d))
        if found is not None
    ]


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
    if not checked.ok:
        return ContentManifest(checked, None)
    analysis = analyse(checked.catalog)
    urls = plan_urls(checked.catalog, analysis.kernels, deployment.base_url)
    return ContentManifest(checked, plan_manifest(checked.catalog, analysis, urls, deployment))
