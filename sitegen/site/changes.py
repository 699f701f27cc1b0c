"""A preview's banner and its changes page (`/changes/`): what the build changes compared with
its base (publish/compare.py), grouped by kernel, each run and resource linked here or there."""

from __future__ import annotations

from typing import Any, NamedTuple

from sitegen.model.digest import short
from sitegen.publish.compare import (
    Group,
    Modified,
    RunChange,
    changes_document,
    run_facts,
    summary_line,
    value_text,
)
from sitegen.publish.deploy import BRANCH_DEPLOY, DEPLOY_PREVIEW
from sitegen.publish.manifest import Entry
from sitegen.site.format import KIND_WORDS, anchor
from sitegen.site.lookup import SiteLookup
from sitegen.site.records import Fact, Link, Page, PageMeta

PATH = "changes/"
_TOTALS = (
    ("added", "Added"),
    ("removed", "Removed"),
    ("modified", "Metadata modified"),
    ("moved", "Runs moved"),
    ("replaced", "Runs measured again, same value"),
)


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


def has_changes_page(lookup: SiteLookup) -> bool:
    return lookup.inputs.baseline is not None or lookup.inputs.deployment.compares


def previewed(lookup: SiteLookup) -> bool:
    """Whether the pages load the preview's styles: a banner or a changes page to style."""
    return bool(banner(lookup)) or has_changes_page(lookup)


def banner(lookup: SiteLookup) -> tuple[Link, ...]:
    """`Deploy preview for pull request #123 · commit abc1234 · see what it changes →`."""
    deployment = lookup.inputs.deployment
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
    if has_changes_page(lookup):
        parts.append(Link("see what it changes →", lookup.urls.href(PATH)))
    return tuple(parts)


def changes_page(lookup: SiteLookup) -> Page:
    changes, baseline = lookup.inputs.changes, lookup.inputs.baseline
    deployment = lookup.inputs.deployment
    review = deployment.review_id
    title = f"What pull request #{review} changes" if review else "What this build changes"
    base = baseline.label if baseline is not None else "nothing"
    if changes is None:
        summary = "The base could not be read, so there is nothing to compare with."
        if baseline is None:
            summary = "No base was given to compare with."
    else:
        summary = summary_line(changes)
    meta = lookup.meta(title, PATH, summary, "")
    sections: tuple[ChangeSection, ...] = ()
    counts: tuple[Fact, ...] = ()
    if changes is not None:
        base_site = changes.base.site
        sections = tuple(change_section(lookup, g, base_site) for g in changes.groups)
        counts = tuple(
            Fact(label, f"{changes.total(what):,}")
            for what, label in _TOTALS
            if changes.total(what)
        )
    commit = deployment.short_commit
    this_build = f"this build at {commit}" if commit else "this build"
    context = ChangesContext(
        meta=meta,
        head=changes.head.label if changes else this_build,
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
    return Page(PATH, "changes.html", context, twin)


def change_section(lookup: SiteLookup, group: Group, base_site: str) -> ChangeSection:
    href = lookup.urls.href
    kernel = None
    if group.kernel is not None:
        path = group.kernel.path
        kernel = Link(group.kernel.title, href(path) if group.kernel_in_head else base_site + path)
    title = kernel.text if kernel else "Protocols, GPUs and projects"
    return ChangeSection(
        anchor="kernel-" + anchor(title) if kernel else "other-resources",
        title=title,
        kernel=kernel,
        moved=tuple(run_change_row(lookup, c, base_site) for c in group.moved),
        replaced=tuple(run_change_row(lookup, c, base_site) for c in group.replaced),
        added=tuple(change_item(e, href(e.path)) for e in group.added),
        removed=tuple(change_item(e, base_site + e.path) for e in group.removed),
        modified=tuple(modified_item(lookup, m) for m in group.modified),
    )


def change_item(entry: Entry, href: str, note: str = "") -> ChangeItem:
    return ChangeItem(
        kind_word=KIND_WORDS[entry.kind],
        resource=Link(entry.title, href),
        facts=run_facts(entry),
        value=value_text(entry),
        note=note,
    )


def modified_item(lookup: SiteLookup, item: Modified) -> ChangeItem:
    notes = []
    for change in item.fields:
        if change.before is None:
            notes.append("description, labels, authors or source references changed")
        else:
            notes.append(f"{change.field}: “{change.before}” → “{change.after}”")
    return change_item(item.head, lookup.urls.href(item.head.path), "; ".join(notes))


def run_change_row(lookup: SiteLookup, change: RunChange, base_site: str) -> RunChangeRow:
    run = change.head.run
    assert run is not None  # only runs are paired
    return RunChangeRow(
        run=Link(change.head.title, lookup.urls.href(change.head.path)),
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
