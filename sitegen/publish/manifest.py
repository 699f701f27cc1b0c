"""The site's digest manifest (`/manifest.json`): every resource once, with what a diff needs.

Every build publishes one. Two manifests alone are enough to say what changed between two sites
(changes.py): each entry has the resource's digest, a hash of its metadata, where its page is, its
kernel, and for a run the facts a reviewer reads (pass, GPU, implementation, shape) with its
headline value and its identity key. Entries are sorted by digest, kernels by key.

A manifest read back (from a file or a URL) is untrusted: `parse_manifest` checks every field,
with content's value rules where a field holds content's text or values (model/values.py): no
control or bidirectional character in a text, no negative or out-of-range value, a site URL of
plain characters only (it is written into links, Markdown included).
"""

from __future__ import annotations

import bisect
import hashlib
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from sitegen.analysis.kernels import Analysis, RunFacts
from sitegen.content.catalog import Catalog
from sitegen.content.loaded import LoadedResource
from sitegen.content.run_summary import Shape
from sitegen.content.stretches import Stretch
from sitegen.model.digest import DIGEST_PATTERN, canonical_json
from sitegen.model.resources import KINDS
from sitegen.model.text import check_line
from sitegen.model.values import check_measured
from sitegen.publish.deploy import Deployment
from sitegen.site.format import environment_label, title_of
from sitegen.site.urls import SiteUrls
from sitegen.superseded import asking_every, stop_if_superseded

FORMAT = "kernelindex-site-manifest"
VERSION = 1
MAX_TEXT = 400  # titles ≤ 200 and labels are shorter; anything longer is not ours
# Site paths are made by urls.py from names, kebabs and hex: nothing else may come back in.
_SITE_PATH = re.compile(r"^(?:[a-z0-9][a-z0-9._-]*/)*(?:[a-z0-9][a-z0-9._-]*)?$")
_KERNEL_KEY = re.compile(r"^(?:sha256:[0-9a-f]{64}|kernel:.{1,200})$", re.DOTALL)
# What a published site's URL is made of: a host, a port, a path of unreserved characters.
# Nothing that could end a Markdown link or an HTML attribute, or start another.
_SITE_URL = re.compile(r"https?://[A-Za-z0-9.-]+(?::[0-9]{1,5})?/(?:[A-Za-z0-9._~%-]+/)*")


class ManifestError(ValueError):
    """A manifest we cannot read: the wrong format, version, or a field of the wrong shape."""


@dataclass(frozen=True, slots=True)
class RunInfo:
    """What a reviewer reads about a run, and its headline value (the first the page shows)."""

    identity: str  # sha256 of JCS([implementation, workload, protocol, environment] digests)
    pass_name: str
    gpu: str
    implementation: str
    shape: str
    status: str
    observed_at: str
    metric: str | None = None  # None: the run records no value (failed runs, for example)
    unit: str | None = None
    statistic: str | None = None  # median, or mean when the run has no median
    value: float | None = None


@dataclass(frozen=True, slots=True)
class Entry:
    digest: str
    kind: str
    name: str
    title: str
    path: str  # site path of its page: `runs/f0cf6dd69e048a9b/`
    source: str  # where it was read: `content/runs/x.json` (`#run` inside a bundle)
    metadata: str  # sha256 of the canonical JSON of its metadata: editorial changes show here
    kernel: str | None  # the kernel key its page belongs to; None for protocols, GPUs, projects
    run: RunInfo | None = None


class KernelInfo(NamedTuple):
    key: str
    title: str
    path: str


class Manifest(NamedTuple):
    site: str  # the absolute URL of the site root its paths are under
    deploy: tuple[tuple[str, str], ...]  # (context, commit, branch, reviewId, url) where known
    kernels: tuple[KernelInfo, ...]
    entries: tuple[Entry, ...]


def run_identity(implementation: str, workload: str, protocol: str, environment: str) -> str:
    """Two runs of one identity measure the same thing: one kernel-page cell (FORMAT.md §3)."""
    parts = [implementation, workload, protocol, environment]
    if all(DIGEST_PATTERN.fullmatch(part) for part in parts):
        # Validated digests are ASCII without escapes: their canonical JSON is spelled out.
        text = ('["' + '","'.join(parts) + '"]').encode()
    else:  # a manifest read back from another build may hold anything
        text = canonical_json(parts)
    return "sha256:" + hashlib.sha256(text).hexdigest()


def plan_manifest(
    catalog: Catalog, analysis: Analysis, urls: SiteUrls, deployment: Deployment
) -> Manifest:
    """The manifest of a planned site: one entry per resource, kernels by key."""
    entries = _Entries(catalog, analysis, urls).all(catalog.resources)  # by digest
    return Manifest(
        site=urls.base,
        deploy=_deploy_facts(deployment),
        kernels=tuple(
            KernelInfo(k.key, k.title, urls.path_of(k.key) or "")
            for k in sorted(analysis.kernels, key=lambda k: k.key)
        ),
        entries=tuple(entries),
    )


class _Entries:
    """Each resource's manifest entry; a GPU's label and a shape's, made once for all runs."""

    def __init__(self, catalog: Catalog, analysis: Analysis, urls: SiteUrls) -> None:
        self.catalog = catalog
        self.runs = analysis.runs
        self.held = analysis.held  # a state held in memory: a run's entry is made once a run
        self.urls = urls
        self.kernels = {k.key: k for k in analysis.kernels}
        self.gpus: dict[str, str] = {}
        self.shapes: dict[Shape, str] = {}  # one label string per shape, shared by its runs

    def all(self, resources: Iterable[LoadedResource]) -> list[Entry]:
        """Each resource's entry, in order. With `held`, a run's is the last build's while its
        resource is the very same object: its facts are then the very same too (the analysis
        holds a run's facts while its resource's digests, file and place are, and makes every
        run's again when a resource that is not a run changes, a GPU's or a shape's label
        with it), and so is its page's path (its digest's). Found a stretch of unchanged
        resources at a time (`same_stretches`), never reading them: ~100k runs a rebuild,
        and reading each resource's digest from memory took most of the time (~0.3 s at
        100k). Every other resource's entry is made again (it names a kernel, if one has it),
        and kept as the last build's very object where it is equal."""
        if self.held is None:
            return [self._entry(r, self.runs.get(r.digest)) for r in asking_every(resources)]
        items = tuple(resources)
        last_items, last_entries, last_others = self.held.entries
        entries: list[Entry] = []
        others: list[int] = []  # the places of the resources that are not runs
        done = 0
        found = self.held.stretches(last_items, items)
        for stretch in [*found, Stretch(len(items), len(items), 0)]:
            for number in range(done, stretch.start):
                resource = items[number]
                run = self.runs.get(resource.digest)
                if run is None:
                    others.append(number)
                entries.append(self._entry(resource, run))
            stop_if_superseded()
            if stretch.stop > stretch.start:
                length = stretch.stop - stretch.start
                entries += last_entries[stretch.last : stretch.last + length]
                first = bisect.bisect_left(last_others, stretch.last)
                final = bisect.bisect_left(last_others, stretch.last + length)
                for held in last_others[first:final]:
                    number = stretch.start + held - stretch.last
                    others.append(number)
                    made = self._entry(items[number], None)
                    # The last build's very entry where equal: its manifest line is then
                    # taken with its stretch, not written again (~1.5k entries at 100k runs).
                    if made != entries[number]:
                        entries[number] = made
            done = stretch.stop
        self.held.entries = (items, entries, others)
        return entries

    def _entry(self, entry: LoadedResource, run: RunFacts | None) -> Entry:
        info = None
        if run is not None:
            if run.environment not in self.gpus:
                self.gpus[run.environment] = environment_label(self.catalog, run.environment)
            if run.shape not in self.shapes:
                self.shapes[run.shape] = run.shape.label()
            info = _run_info(run, self.gpus[run.environment], self.shapes[run.shape])
        return Entry(
            digest=entry.digest,
            kind=entry.kind,
            name=entry.name,
            title=title_of(entry),
            path=self.urls.path_of(entry.digest) or "",
            source=entry.path + (f"#{entry.where}" if entry.where else ""),
            metadata=entry.metadata_digest,
            kernel=_kernel_of(entry, run, self.kernels),
            run=info,
        )


def _kernel_of(entry: LoadedResource, run: RunFacts | None, kernels: dict[str, Any]) -> str | None:
    if run is not None:
        return run.kernel_key
    if entry.kind == "OperationSpec":
        return entry.digest
    if entry.kind == "WorkloadCase":
        key = entry.spec["operationSpecDigest"]
    elif entry.kind == "ImplementationRevision":
        key = entry.spec["operation"]["specDigest"]
    else:
        return None
    return key if key in kernels else None


def _run_info(run: RunFacts, gpu: str, shape: str) -> RunInfo:
    value = run.values[0] if run.values else None
    return RunInfo(
        identity=run_identity(run.implementation, run.workload, run.protocol, run.environment),
        pass_name=run.pass_name,
        gpu=gpu,
        implementation=run.provider,
        shape=shape,
        status=run.status,
        observed_at=run.observed_at,
        metric=value.metric if value else None,
        unit=value.unit if value else None,
        statistic=value.statistic if value else None,
        value=value.centre if value else None,
    )


def _deploy_facts(deployment: Deployment) -> tuple[tuple[str, str], ...]:
    facts = (
        ("context", deployment.context),
        ("commit", deployment.commit),
        ("branch", deployment.branch),
        ("reviewId", deployment.review_id),
        ("url", deployment.deploy_url),
    )
    return tuple((key, value) for key, value in facts if value)


# --- JSON ---------------------------------------------------------------------------------------


def entry_document(entry: Entry) -> dict[str, Any]:
    """One resource as the manifest lists it: absent fields absent."""
    item: dict[str, Any] = {
        "digest": entry.digest,
        "kind": entry.kind,
        "name": entry.name,
        "title": entry.title,
        "path": entry.path,
        "source": entry.source,
        "metadata": entry.metadata,
        "kernel": entry.kernel,
    }
    run = entry.run
    if run is not None:
        item["run"] = {
            "identity": run.identity,
            "pass": run.pass_name,
            "gpu": run.gpu,
            "implementation": run.implementation,
            "shape": run.shape,
            "status": run.status,
            "observedAt": run.observed_at,
        }
        if run.value is not None:
            item["run"] |= {
                "metric": run.metric,
                "unit": run.unit,
                "statistic": run.statistic,
                "value": run.value,
            }
    return item


def manifest_document(manifest: Manifest) -> dict[str, Any]:
    """The manifest as published."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "site": manifest.site,
        "deploy": dict(manifest.deploy),
        "kernels": [{"key": k.key, "title": k.title, "path": k.path} for k in manifest.kernels],
        "resources": [entry_document(e) for e in manifest.entries],
    }


def parse_manifest(document: Any) -> Manifest:
    """A manifest read back from JSON, every field checked; raises ManifestError."""
    top = _object(
        document, "manifest", {"format", "version", "site", "deploy", "kernels", "resources"}
    )
    if top.get("format") != FORMAT:
        raise ManifestError(f"manifest: format is not {FORMAT!r}")
    if top.get("version") != VERSION:
        raise ManifestError(f"manifest: version {top.get('version')!r} is not {VERSION}")
    site = _text(top.get("site"), "site")
    parts = urlsplit(site)
    if parts.scheme not in ("http", "https") or not parts.hostname or not site.endswith("/"):
        raise ManifestError(f"site: not an http(s) URL ending in '/': {site!r}")
    if not _SITE_URL.fullmatch(site):
        raise ManifestError(f"site: a URL of other characters than a site's: {site!r}")
    deploy = _object(
        top.get("deploy", {}), "deploy", {"context", "commit", "branch", "reviewId", "url"}
    )
    kernels = []
    for number, item in enumerate(_list(top.get("kernels"), "kernels")):
        where = f"kernels[{number}]"
        kernel = _object(item, where, {"key", "title", "path"})
        key = _text(kernel.get("key"), f"{where}.key")
        if not _KERNEL_KEY.fullmatch(key):
            raise ManifestError(f"{where}.key: not a kernel key: {key!r}")
        kernels.append(
            KernelInfo(
                key, _text(kernel.get("title"), f"{where}.title", free=True), _path(kernel, where)
            )
        )
    entries = []
    for number, item in enumerate(_list(top.get("resources"), "resources")):
        entries.append(_entry(item, f"resources[{number}]"))
    entries.sort(key=lambda e: e.digest)
    if len({e.digest for e in entries}) != len(entries):
        raise ManifestError("resources: a digest is listed twice")
    return Manifest(
        site=site,
        deploy=tuple((k, _text(v, f"deploy.{k}")) for k, v in sorted(deploy.items())),
        kernels=tuple(sorted(kernels, key=lambda k: k.key)),
        entries=tuple(entries),
    )


_ENTRY_KEYS = {"digest", "kind", "name", "title", "path", "source", "metadata", "kernel", "run"}
_RUN_KEYS = {
    "identity",
    "pass",
    "gpu",
    "implementation",
    "shape",
    "status",
    "observedAt",
    "metric",
    "unit",
    "statistic",
    "value",
}


def _entry(item: Any, where: str) -> Entry:
    entry = _object(item, where, _ENTRY_KEYS)
    digest_value = _digest(entry.get("digest"), f"{where}.digest")
    kind = _text(entry.get("kind"), f"{where}.kind")
    if kind not in KINDS:
        raise ManifestError(f"{where}.kind: not a kind: {kind!r}")
    kernel = entry.get("kernel")
    if kernel is not None and not (isinstance(kernel, str) and _KERNEL_KEY.fullmatch(kernel)):
        raise ManifestError(f"{where}.kernel: not a kernel key: {kernel!r}")
    run = None
    if "run" in entry:
        run = _run(entry["run"], f"{where}.run")
    return Entry(
        digest=digest_value,
        kind=kind,
        name=_text(entry.get("name"), f"{where}.name"),
        title=_text(entry.get("title"), f"{where}.title", free=True),
        path=_path(entry, where),
        source=_text(entry.get("source"), f"{where}.source"),
        metadata=_digest(entry.get("metadata"), f"{where}.metadata"),
        kernel=kernel,
        run=run,
    )


def _run(item: Any, where: str) -> RunInfo:
    run = _object(item, where, _RUN_KEYS)
    value = run.get("value")
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value)
    ):
        raise ManifestError(f"{where}.value: not a finite number: {value!r}")
    if value is not None:
        try:
            check_measured(value)
        except ValueError as error:
            raise ManifestError(f"{where}.value: {error}") from None

    def optional(key: str) -> str | None:
        return None if value is None else _text(run.get(key), f"{where}.{key}")

    return RunInfo(
        identity=_digest(run.get("identity"), f"{where}.identity"),
        pass_name=_text(run.get("pass"), f"{where}.pass", free=True),
        gpu=_text(run.get("gpu"), f"{where}.gpu", free=True),
        implementation=_text(run.get("implementation"), f"{where}.implementation", free=True),
        shape=_text(run.get("shape"), f"{where}.shape", free=True),
        status=_text(run.get("status"), f"{where}.status"),
        observed_at=_text(run.get("observedAt"), f"{where}.observedAt"),
        metric=optional("metric"),
        unit=optional("unit"),
        statistic=optional("statistic"),
        value=value,
    )


def _object(value: Any, where: str, allowed: set[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ManifestError(f"{where}: expected an object")
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise ManifestError(f"{where}: unknown field {unknown[0]!r}")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise ManifestError(f"{where}: expected a list")
    return value


def _text(value: Any, where: str, free: bool = False) -> str:
    """A string of at most MAX_TEXT characters; one line of plain text unless `free` (content's
    own text, which the format lets hold any character: whatever shows it escapes them)."""
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        raise ManifestError(f"{where}: expected a string of at most {MAX_TEXT} characters")
    if free:
        return value
    try:
        return check_line(value)
    except ValueError as error:
        raise ManifestError(f"{where}: {error}") from None


def _digest(value: Any, where: str) -> str:
    if not isinstance(value, str) or not DIGEST_PATTERN.fullmatch(value):
        raise ManifestError(f"{where}: not a sha256 digest: {value!r}")
    return value


def _path(item: dict[str, Any], where: str) -> str:
    path = _text(item.get("path"), f"{where}.path")
    if not _SITE_PATH.fullmatch(path) or ".." in path:
        raise ManifestError(f"{where}.path: not a site path: {path!r}")
    return path
