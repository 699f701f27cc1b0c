"""What one site changes compared with another, from their two manifests alone.

Resources are compared by digest: a digest only in the head was added, one only in the base was
removed, and one in both whose metadata hash differs had its metadata modified (a retitled
protocol keeps its digest, FORMAT.md §2). An added and a removed run with the same identity key
(implementation, workload, protocol, environment: one cell of a kernel page) are one run
measured again: it *moved* when its headline value differs, and is *replaced* otherwise (same
value, or nothing comparable). Everything is grouped by kernel; protocols, GPUs and projects
form the last group. `changes_document` is the JSON (the changes page's twin and `sitegen diff
--format json`), `format_markdown` the text `sitegen diff` prints for a pull request comment.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from typing import Any, NamedTuple

from sitegen.model.markdown import markdown_link, markdown_text
from sitegen.publish.manifest import Entry, KernelInfo, Manifest, entry_document
from sitegen.site.format import KIND_WORDS, Numbers

KIND_ORDER = (
    "OperationSpec",
    "WorkloadCase",
    "ImplementationRevision",
    "SoftwareProject",
    "BenchmarkProtocol",
    "ExecutionEnvironment",
    "BenchmarkRun",
)
OTHER_METADATA = "other metadata"  # description, labels, authors or source references


class Baseline(NamedTuple):
    """What a build is compared with: a manifest, or why none could be read."""

    label: str  # `main at 1a2b3c4 (merge base)`, `the production site (…/manifest.json)`
    manifest: Manifest | None
    notes: tuple[str, ...] = ()  # each way of finding a base that failed, in order


class Side(NamedTuple):
    """One of the two sites compared: what it is, and where its pages live."""

    label: str  # `main at 1a2b3c4 (merge base)`, `content/`, a manifest's URL
    site: str  # absolute URL its paths are under
    deploy: tuple[tuple[str, str], ...]

    def url(self, path: str) -> str:
        return self.site + path


class MetadataChange(NamedTuple):
    field: str  # `name`, `title` or OTHER_METADATA
    before: str | None
    after: str | None


class Modified(NamedTuple):
    base: Entry
    head: Entry
    fields: tuple[MetadataChange, ...]


class RunChange(NamedTuple):
    """A run measured again: the same identity key, a new digest."""

    base: Entry
    head: Entry
    before: str  # `0.166 ms`, or the status when there is no value
    after: str
    delta: float | None  # head − base in the run's unit; None when not comparable
    ratio: float | None  # head / base − 1
    change: str  # `+0.017 ms`, "" when not comparable
    percent: str  # `+10.0%`, "" when not comparable

    @property
    def moved(self) -> bool:
        return self.delta is not None and self.delta != 0


class Group(NamedTuple):
    """The changes of one kernel (or, with no kernel, of protocols, GPUs and projects)."""

    kernel: KernelInfo | None
    kernel_in_head: bool  # whether `kernel.path` is a page of the head (else of the base)
    moved: tuple[RunChange, ...]
    replaced: tuple[RunChange, ...]
    added: tuple[Entry, ...]
    removed: tuple[Entry, ...]
    modified: tuple[Modified, ...]


class Changes(NamedTuple):
    base: Side
    head: Side
    groups: tuple[Group, ...]

    def total(self, what: str) -> int:
        return sum(len(getattr(group, what)) for group in self.groups)

    @property
    def empty(self) -> bool:
        return not self.groups


def compare(base: Manifest, head: Manifest, base_label: str, head_label: str) -> Changes:
    """Everything the head adds, removes, modifies or moves compared with the base."""
    before = {e.digest: e for e in base.entries}
    after = {e.digest: e for e in head.entries}
    added = [after[d] for d in sorted(after.keys() - before.keys())]
    removed = [before[d] for d in sorted(before.keys() - after.keys())]
    modified = [
        Modified(before[d], after[d], _metadata_changes(before[d], after[d]))
        for d in sorted(before.keys() & after.keys())
        if before[d].metadata != after[d].metadata
    ]
    remeasured = _pair_runs(added, removed)
    paired = {c.head.digest for c in remeasured} | {c.base.digest for c in remeasured}
    added = [e for e in added if e.digest not in paired]
    removed = [e for e in removed if e.digest not in paired]

    keyed: dict[str | None, dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))
    for change in remeasured:
        keyed[change.head.kernel]["moved" if change.moved else "replaced"].append(change)
    for entry in added:
        keyed[entry.kernel]["added"].append(entry)
    for entry in removed:
        keyed[entry.kernel]["removed"].append(entry)
    for item in modified:
        keyed[item.head.kernel]["modified"].append(item)

    head_kernels = {k.key: k for k in head.kernels}
    base_kernels = {k.key: k for k in base.kernels}
    groups = []
    for key, lists in keyed.items():
        kernel = head_kernels.get(key) if key else None
        in_head = kernel is not None
        if key and kernel is None:
            kernel = base_kernels.get(key)
        groups.append(
            Group(
                kernel=kernel,
                kernel_in_head=in_head,
                moved=tuple(sorted(lists["moved"], key=_change_order)),
                replaced=tuple(sorted(lists["replaced"], key=_change_order)),
                added=tuple(sorted(lists["added"], key=_entry_order)),
                removed=tuple(sorted(lists["removed"], key=_entry_order)),
                modified=tuple(sorted(lists["modified"], key=lambda m: _entry_order(m.head))),
            )
        )
    # Kernels by title, the group without a kernel last.
    groups.sort(
        key=lambda g: (g.kernel is None, g.kernel.title.lower() if g.kernel else "", _key(g))
    )
    return Changes(
        Side(base_label, base.site, base.deploy),
        Side(head_label, head.site, head.deploy),
        tuple(groups),
    )


def _key(group: Group) -> str:
    return group.kernel.key if group.kernel else ""


def _metadata_changes(base: Entry, head: Entry) -> tuple[MetadataChange, ...]:
    fields = [
        MetadataChange(name, old, new)
        for name, old, new in (("name", base.name, head.name), ("title", base.title, head.title))
        if old != new
    ]
    return tuple(fields) or (MetadataChange(OTHER_METADATA, None, None),)


def _pair_runs(added: list[Entry], removed: list[Entry]) -> list[RunChange]:
    """Runs measured again: exactly one removed and one added run share an identity key."""
    new: dict[str, list[Entry]] = defaultdict(list)
    old: dict[str, list[Entry]] = defaultdict(list)
    for entry in added:
        if entry.run is not None:
            new[entry.run.identity].append(entry)
    for entry in removed:
        if entry.run is not None:
            old[entry.run.identity].append(entry)
    return [
        _run_change(old[identity][0], new[identity][0])
        for identity in sorted(new.keys() & old.keys())
        if len(new[identity]) == 1 and len(old[identity]) == 1
    ]


def _run_change(base: Entry, head: Entry) -> RunChange:
    was, now = base.run, head.run
    assert was is not None and now is not None
    before = value_text(base)
    after = value_text(head)
    comparable = (
        was.value is not None
        and now.value is not None
        and (was.metric, was.unit) == (now.metric, now.unit)
    )
    if not comparable or was.value is None or now.value is None or was.unit is None:
        return RunChange(base, head, before, after, None, None, "", "")
    delta = now.value - was.value
    ratio = delta / was.value if was.value else None
    if not math.isfinite(delta) or (ratio is not None and not math.isfinite(ratio)):
        return RunChange(base, head, before, after, None, None, "", "")  # beyond a double
    numbers = Numbers(was.metric or "", was.unit)
    sign = "+" if delta > 0 else "−" if delta < 0 else "±"
    change = f"{sign}{numbers.one(abs(delta))} {numbers.unit}"
    percent = "" if ratio is None else f"{'+' if ratio >= 0 else '−'}{abs(ratio) * 100:.1f}%"
    return RunChange(base, head, before, after, delta, ratio, change, percent)


def value_text(entry: Entry) -> str:
    """A run's headline value as the pages show it (`0.578 ms`), or its status without one."""
    run = entry.run
    if run is None:
        return ""
    if run.value is None or run.unit is None:
        return run.status
    numbers = Numbers(run.metric or "", run.unit)
    return f"{numbers.one(run.value)} {numbers.unit}"


def run_facts(entry: Entry) -> str:
    """`backward · NVIDIA H100 80GB HBM3 · <implementation> · hidden=4096, rows=4096 · fp32`."""
    run = entry.run
    if run is None:
        return ""
    return " · ".join((run.pass_name, run.gpu, run.implementation, run.shape))


def _entry_order(entry: Entry) -> tuple[Any, ...]:
    run = entry.run
    facts = (run.pass_name, run.gpu, run.implementation, run.shape) if run else ()
    return (KIND_ORDER.index(entry.kind), entry.title, facts, entry.digest)


def _change_order(change: RunChange) -> tuple[Any, ...]:
    return _entry_order(change.head)


# --- JSON ---------------------------------------------------------------------------------------


def changes_document(changes: Changes) -> dict[str, Any]:
    """The changes as JSON: paths are relative to each side's `site`."""

    def side(value: Side) -> dict[str, Any]:
        return {"label": value.label, "site": value.site, "deploy": dict(value.deploy)}

    def run_change(change: RunChange) -> dict[str, Any]:
        return {
            "identity": change.head.run.identity if change.head.run else None,
            "base": entry_document(change.base),
            "head": entry_document(change.head),
            "delta": change.delta,
            "ratio": change.ratio,
        }

    def modified(item: Modified) -> dict[str, Any]:
        return {
            "digest": item.head.digest,
            "kind": item.head.kind,
            "title": item.head.title,
            "path": item.head.path,
            "basePath": item.base.path,
            "fields": [
                {"field": f.field, "before": f.before, "after": f.after} for f in item.fields
            ],
        }

    return {
        "base": side(changes.base),
        "head": side(changes.head),
        "summary": {
            what: changes.total(what)
            for what in ("added", "removed", "modified", "moved", "replaced")
        },
        "groups": [
            {
                "kernel": None
                if g.kernel is None
                else {
                    "key": g.kernel.key,
                    "title": g.kernel.title,
                    "path": g.kernel.path,
                    "inHead": g.kernel_in_head,
                },
                "moved": [run_change(c) for c in g.moved],
                "replaced": [run_change(c) for c in g.replaced],
                "added": [entry_document(e) for e in g.added],
                "removed": [entry_document(e) for e in g.removed],
                "modified": [modified(m) for m in g.modified],
            }
            for g in changes.groups
        ],
    }


def summary_line(changes: Changes) -> str:
    """`1 resource added, 1 removed, 1 with modified metadata; 1 run moved.`"""
    if changes.empty:
        return "Nothing added, removed or modified."
    counts = [
        (changes.total(what), label)
        for what, label in (
            ("added", "added"),
            ("removed", "removed"),
            ("modified", "with modified metadata"),
        )
        if changes.total(what)
    ]
    resources = [f"{n:,} {label}" for n, label in counts]
    if resources:
        noun = "resource" if counts[0][0] == 1 else "resources"
        resources[0] = resources[0].replace(" ", f" {noun} ", 1)
    runs = [
        f"{n:,} {'run' if n == 1 else 'runs'} {label}"
        for n, label in (
            (changes.total("moved"), "moved"),
            (changes.total("replaced"), "measured again with the same value"),
        )
        if n
    ]
    return "; ".join(p for p in (", ".join(resources), ", ".join(runs)) if p) + "."


def format_markdown(changes: Changes, head_url: str | None = None) -> str:
    """The changes as GitHub-flavoured Markdown, for a pull request comment."""
    head_site = head_url or changes.head.site
    lines = [
        "## kernelindex: what this changes",
        "",
        f"Compared **{markdown_text(changes.head.label)}** with "
        f"**{markdown_text(changes.base.label)}**. " + summary_line(changes),
    ]
    for group in changes.groups:
        lines.append("")
        if group.kernel is None:
            lines.append("### Protocols, GPUs and projects")
        else:
            site = head_site if group.kernel_in_head else changes.base.site
            lines.append(f"### {markdown_link(group.kernel.title, site + group.kernel.path)}")
        if group.moved:
            lines += _run_changes("Medians moved", group.moved, changes, head_site, True)
        if group.replaced:
            lines += _run_changes("Measured again", group.replaced, changes, head_site, False)
        for title, entries, site in (
            ("Added", group.added, head_site),
            ("Removed", group.removed, changes.base.site),
        ):
            if entries:
                lines += ["", f"**{title}**", ""]
                lines += [_entry_line(e, site) for e in entries]
        if group.modified:
            lines += ["", "**Metadata modified**", ""]
            for item in group.modified:
                lines.append(_entry_line(item.head, head_site) + ": " + _fields_text(item.fields))
    return "\n".join(lines) + "\n"


def _run_changes(
    title: str, items: Iterable[RunChange], changes: Changes, head_site: str, moved: bool
) -> list[str]:
    lines = ["", f"**{title}**", ""]
    header = "| run | pass | GPU | implementation | shape | before | after |"
    lines.append(header + (" change |" if moved else ""))
    lines.append("|---" * (8 if moved else 7) + "|")
    for change in items:
        run = change.head.run
        assert run is not None
        cells = [
            markdown_link(change.head.title, head_site + change.head.path)
            + f" ({markdown_link('was', changes.base.url(change.base.path))})",
            markdown_text(run.pass_name),
            markdown_text(run.gpu),
            markdown_text(run.implementation),
            markdown_text(run.shape),
            markdown_text(change.before),
            markdown_text(change.after),
        ]
        if moved:
            cells.append(
                markdown_text(
                    f"{change.change} ({change.percent})" if change.percent else change.change
                )
            )
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _entry_line(entry: Entry, site: str) -> str:
    text = f"- {KIND_WORDS[entry.kind]} {markdown_link(entry.title, site + entry.path)}"
    if entry.run is not None:
        text += f": {markdown_text(run_facts(entry))} · {markdown_text(value_text(entry))}"
    return text


def _fields_text(fields: tuple[MetadataChange, ...]) -> str:
    parts = []
    for item in fields:
        if item.field == OTHER_METADATA:
            parts.append("description, labels, authors or source references")
        else:
            before, after = markdown_text(item.before or ""), markdown_text(item.after or "")
            parts.append(f"{item.field} “{before}” → “{after}”")
    return "; ".join(parts)
