"""The pipeline: load → validate → resolve → plan → render → write.

`check` is the same pipeline stopped before planning, so the two can never drift apart.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from sitegen.catalog import Catalog, resolve
from sitegen.changes import Baseline, compare
from sitegen.deploy import Deployment
from sitegen.kernels import analyse
from sitegen.load import load_content
from sitegen.manifest import Manifest, plan_manifest
from sitegen.pages import Inputs, plan_site
from sitegen.problems import Problem, errors, promote_warnings
from sitegen.render import render_site
from sitegen.sources import load_reports
from sitegen.urls import parse_base_url, plan_urls
from sitegen.write import check_output_dir, write_site


@dataclass(frozen=True)
class CheckedContent:
    catalog: Catalog
    problems: list[Problem]  # sorted; errors and warnings
    resource_count: int  # every resource read, copies included
    file_count: int

    @property
    def ok(self) -> bool:
        return not errors(self.problems)


def check_content(content_dir: Path, strict: bool = False) -> CheckedContent:
    """Load and validate every file, then resolve every reference."""
    loaded = load_content(content_dir)
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


def build_site(
    content_dir: Path,
    out_dir: Path,
    base_url: str | None = None,
    build_date: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    deployment: Deployment | None = None,
    baseline: Baseline | None = None,
) -> BuiltSite:
    """check → analyse → plan → render → write. Nothing is written unless the content is clean.

    `deployment` says where the site is published (deploy.py; a local build when None),
    `baseline` what its changes page compares it with (none when None).
    Raises OutputError for a refused output path, UrlError for a bad base URL or a path clash.
    """
    deployment = deployment or Deployment()
    if base_url is not None:
        deployment = replace(deployment, base_url=base_url)
    # Refuse a dangerous output path before any work, and again in write_site before the swap.
    check_output_dir(out_dir, content_dir)
    parse_base_url(deployment.base_url)
    checked = check_content(content_dir)
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
    )
    site = plan_site(inputs)
    files = render_site(site, urls, progress)
    written = write_site(files, out_dir, content_dir)
    return BuiltSite(checked, written, len(site.pages) + 1, site.run_count, len(files), warnings)


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
