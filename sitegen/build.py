"""The pipeline: load → validate → resolve → plan → render → write.

`check` is the same pipeline stopped before planning, so the two can never drift apart.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import ParamSpec, TypeVar

from sitegen.catalog import Catalog, resolve
from sitegen.changes import Baseline, compare
from sitegen.deploy import Deployment
from sitegen.incremental import (
    IncrementalOutput,
    State,
    fingerprint,
    forget_state,
    read_state,
    write_state,
)
from sitegen.kernels import analyse
from sitegen.load import LoadCache, load_content
from sitegen.manifest import Manifest, plan_manifest
from sitegen.pages import Inputs, Site, plan_site
from sitegen.problems import Problem, errors, promote_warnings
from sitegen.render import render_into
from sitegen.sources import load_reports
from sitegen.urls import SiteUrls, parse_base_url, plan_urls
from sitegen.write import MARKER, check_output_dir, patched, staged

P = ParamSpec("P")
R = TypeVar("R")


def _collect_less(function: Callable[P, R]) -> Callable[P, R]:
    """Run `function` with the young generation collected every 100,000 allocations, not 700.

    Loading and planning allocate millions of objects that live until the build ends and make
    no cycles worth finding: with the default thresholds the collector walked them again and
    again, a third of the planning time.
    """

    @functools.wraps(function)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        thresholds = gc.get_threshold()
        gc.set_threshold(100_000, 50, 1000)
        try:
            return function(*args, **kwargs)
        finally:
            gc.set_threshold(*thresholds)

    return run


@dataclass(frozen=True)
class CheckedContent:
    catalog: Catalog
    problems: list[Problem]  # sorted; errors and warnings
    resource_count: int  # every resource read, copies included
    file_count: int

    @property
    def ok(self) -> bool:
        return not errors(self.problems)


@_collect_less
def check_content(
    content_dir: Path, strict: bool = False, load_cache: LoadCache | None = None
) -> CheckedContent:
    """Load and validate every file, then resolve every reference.

    With `load_cache` (incremental builds), unchanged files are taken from it, and it is updated.
    """
    loaded = load_content(content_dir, cache=load_cache)
    catalog, resolution_problems = resolve(loaded.resources, strict=strict)
    problems = [*loaded.problems, *resolution_problems]
    if strict:
        problems = promote_warnings(problems)
    return CheckedContent(catalog, sorted(problems), len(loaded.resources), loaded.file_count)


@dataclass(frozen=True)
class BuiltSite:
    checked: CheckedContent
    out_dir: Path | None  # None when the content had errors and nothing was written
    page_count: int
    run_count: int
    file_count: int
    warnings: list[str]  # about site data outside the resources (import reports)


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
) -> BuiltSite:
    """check → analyse → plan → render → write. Nothing is written unless the content is clean.

    `deployment` says where the site is published (deploy.py; a local build when None),
    `baseline` what its changes page compares it with (none when None).
    `incremental` uses and keeps the cache beside the output (incremental.py): only changed
    content is read again, only changed pages are rendered and only changed files written.
    Raises OutputError for a refused output path, UrlError for a bad base URL or a path clash.
    """
    deployment = deployment or Deployment()
    if base_url is not None:
        deployment = replace(deployment, base_url=base_url)
    # Refuse a dangerous output path before any work, and again in `staged` before writing.
    check_output_dir(out_dir, content_dir)
    parse_base_url(deployment.base_url)
    state = (read_state(out_dir) or State()) if incremental else None
    checked = check_content(content_dir, load_cache=state.loads if state else None)
    if not checked.ok:
        return BuiltSite(checked, None, 0, 0, 0, [])
    reports, warnings = load_reports(content_dir)
    analysis = analyse(checked.catalog)
    urls = plan_urls(checked.catalog, analysis.kernels, deployment.base_url)
    manifest = plan_manifest(checked.catalog, analysis, urls, deployment)
    changes = None
    if baseline is not None and baseline.manifest is not None:
        changes = compare(baseline.manifest, manifest, baseline.label, head_label(deployment))
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
    )
    site = plan_site(inputs)
    if state is not None:
        target = _write_incremental(site, urls, out_dir, content_dir, state, inputs, progress)
        file_count = len(state.outputs)
    else:
        # Rendered straight into the staging tree, by worker processes on a big site.
        with staged(out_dir, content_dir) as staging:
            file_count = render_into(site, urls, staging.write, progress)
        target = staging.target
    return BuiltSite(checked, target, len(site.pages) + 1, site.run_count, file_count, warnings)


def _write_incremental(
    site: Site,
    urls: SiteUrls,
    out_dir: Path,
    content_dir: Path,
    state: State,
    inputs: Inputs,
    progress: Callable[[int, int], None] | None,
) -> Path:
    """Render what changed; patch the previous output, or write a whole one if there is none."""
    site_key = fingerprint(
        inputs.catalog,
        urls,
        [(k.key, k.title, k.slug) for k in inputs.analysis.kernels],
        inputs.reports,
        inputs.deployment,
        inputs.build_date,
        site.banner,
        site.indexable,
    )
    target = out_dir.resolve()
    usable = bool(state.outputs) and (target / MARKER).is_file()
    output = IncrementalOutput(state.outputs if usable else {}, site_key)
    forget_state(out_dir)  # a build killed from here on leaves no cache: the next one is full
    if usable:
        with patched(out_dir, content_dir) as patch:
            output.sink(patch.write)
            render_into(site, urls, output, progress)
            output.finish()
            for path in state.outputs.keys() - output.outputs.keys():
                patch.delete(path)
    else:
        with staged(out_dir, content_dir) as staging:
            output.sink(staging.write)
            render_into(site, urls, output, progress)
            output.finish()
    state.outputs = output.outputs
    write_state(out_dir, state)
    return target


def head_label(deployment: Deployment) -> str:
    """How the changes page names the site being built."""
    commit = f" at {deployment.short_commit}" if deployment.commit else ""
    if deployment.review_id:
        return f"pull request #{deployment.review_id}{commit}"
    if deployment.branch:
        return f"{deployment.branch}{commit}"
    return f"this build{commit}"


@dataclass(frozen=True)
class ContentManifest:
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
