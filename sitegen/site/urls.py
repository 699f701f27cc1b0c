"""The only place that turns a resource into a URL and a URL into an output path.

Site paths are relative to the site root (`runs/f0cf6dd69e048a9b/`, `feed.xml`); `href` puts the
base path in front, `absolute` the full base URL (sitemap, feed, canonical links). Resource names
repeat (FORMAT.md §1), so a name shared by several resources of one section gets the first 12 hex
of its digest appended, and runs are addressed by digest alone.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

from sitegen.analysis.kernels import HeldAnalysis, Kernel
from sitegen.content.catalog import Catalog
from sitegen.content.loaded import LoadedResource
from sitegen.content.stretches import changes
from sitegen.model.digest import short
from sitegen.model.names import short_hash
from sitegen.model.problems import Problem
from sitegen.model.web import check_web_url

DEFAULT_BASE_URL = "https://kernelindex.dev/"
RUN_ID_HEX = 16  # 64 bits: collisions are checked, not assumed away
SECTIONS = {
    "OperationSpec": "kernels",
    "WorkloadCase": "workloads",
    "WorkloadSuite": "workloads",
    "ImplementationRevision": "implementations",
    "SoftwareProject": "projects",
    "BenchmarkProtocol": "protocols",
    "ExecutionEnvironment": "gpus",
    "BenchmarkRun": "runs",
}
SECTION_TITLES = {
    "kernels": "Kernels",
    "gpus": "GPUs",
    "implementations": "Implementations",
    "projects": "Projects",
    "protocols": "Protocols",
    "workloads": "Workloads",
    "runs": "Runs",
    "sources": "Sources",
}


class UrlError(ValueError):
    """A base URL we cannot publish under, or two things that would share one path."""


class PathClash(UrlError):
    """Two resources that would share one page: the content's problem, not the command's."""


# A base URL's path: segments of unreserved characters and %-escapes, as a manifest's `site`.
_BASE_PATH = re.compile(
    r"/(?:[A-Za-z0-9._~-]|%[0-9A-Fa-f]{2})*(?:/(?:[A-Za-z0-9._~-]|%[0-9A-Fa-f]{2})*)*"
)


def parse_base_url(value: str | None, option: str = "--base-url") -> tuple[str, str]:
    """(path prefix, absolute base) from `--base-url` (or the `option` named):
    `https://host/sub/` or `/sub/` or None. UrlError, one line, for anything else: the base is
    published in every page, the sitemap, robots.txt and the manifest, so it is held to
    check_web_url's rules."""
    if value is None:
        return "/", DEFAULT_BASE_URL
    if value.startswith("/") and not value.startswith("//"):
        path, origin = value, DEFAULT_BASE_URL.rstrip("/")
    else:
        try:
            parts = check_web_url(value)
        except ValueError as error:
            raise UrlError(f"{option}: {error}; hint: {BASE_URL_HINT}") from None
        if parts.query or parts.fragment or value.endswith(("?", "#")):
            raise UrlError(f"{option} must not have a query or fragment: {value!r}")
        path, origin = parts.path or "/", f"{parts.scheme}://{parts.netloc}"
    if not _BASE_PATH.fullmatch(path) or any(s in (".", "..") for s in path.split("/")):
        raise UrlError(
            f"{option}: a path is letters, digits, -._~ and %-escapes, with no . or .. "
            f"segment: {value!r}; hint: {BASE_URL_HINT}"
        )
    prefix = "/" + path.strip("/") + "/" if path.strip("/") else "/"
    return prefix, origin + prefix


BASE_URL_HINT = "give an http(s) URL such as https://example.org/sub/, or a path such as /sub/"


PAGE_FILES = ("index.html", "index.json")  # what every page's folder holds


def output_path(path: str) -> str:
    """Where a site path is written: directories get `index.html`."""
    return path + PAGE_FILES[0] if path == "" or path.endswith("/") else path


def json_twin(path: str) -> str:
    """The machine-readable twin of a page: `index.json` beside `index.html`."""
    return path + PAGE_FILES[1]


@dataclass(frozen=True)
class SiteUrls:
    prefix: str  # "/" or "/sub/": what every internal link starts with
    base: str  # the absolute URL of the site root, ending in "/"
    paths: dict[str, str]  # digest or kernel key → site path

    def href(self, path: str) -> str:
        return self.prefix + path

    def absolute(self, path: str) -> str:
        return self.base + path

    def path_of(self, key: str) -> str | None:
        return self.paths.get(key)

    def link(self, key: str) -> str | None:
        path = self.paths.get(key)
        return None if path is None else self.prefix + path

    def schema(self, kind: str) -> str:
        return f"schemas/{kind}.json"


def plan_urls(catalog: Catalog, kernels: Iterable[Kernel], base_url: str | None) -> SiteUrls:
    """A path for every resource and kernel; raises UrlError if two would share one."""
    paths, clashes = plan_paths(catalog, kernels)
    if clashes:
        raise PathClash("pages would clash: " + "; ".join(p.line() for p in clashes))
    return site_urls(paths, base_url)


def site_urls(paths: dict[str, str], base_url: str | None) -> SiteUrls:
    """The URLs of pages at `paths` (from `plan_paths`), published under `base_url`."""
    prefix, base = parse_base_url(base_url)
    return SiteUrls(prefix, base, paths)


# Names Windows gives to devices, with or without an extension (`con`, `nul.json`): a folder so
# named cannot be checked out there. Case does not matter to Windows; names are lower case.
_WINDOWS_DEVICE = re.compile(r"(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?")


def portable_name(name: str) -> bool:
    """Whether a folder named `name` can be made on every system a site is checked out on:
    not a Windows device name, not ending in a dot (which Windows drops). A page whose name is
    not gets its short tag appended, as two pages of one name do (`gpus/con-1a2b3c4d/`)."""
    return not _WINDOWS_DEVICE.fullmatch(name) and not name.endswith(".")


def plan_paths(
    catalog: Catalog, kernels: Iterable[Kernel], held: HeldAnalysis | None = None
) -> tuple[dict[str, str], list[Problem]]:
    """A site path for every resource and kernel (digest or kernel key → path), and a problem
    for each resource whose page would clash with another page or file: `sitegen check`
    reports them, so a tree that checks clean always builds. `held`: `sitegen serve`'s held
    analysis, whose runs' paths are looked up rather than made again."""
    paths: dict[str, str] = {}
    # key → the resource its page is named after, and the field that names it
    owners: dict[str, tuple[LoadedResource, str]] = {}
    named: dict[str, list[tuple[str, str, str]]] = defaultdict(list)  # section → (name, key, tag)
    for kind, section in SECTIONS.items():
        if kind in ("OperationSpec", "BenchmarkRun"):
            continue
        for entry in catalog.of_kind(kind):
            named[section].append((entry.name, entry.digest, short(entry.digest)))
            owners[entry.digest] = (entry, "metadata.name")
    kernels = tuple(kernels)
    for kernel in kernels:
        tag = short(kernel.key) if kernel.key.startswith("sha256:") else short_hash(kernel.key)
        named["kernels"].append((kernel.slug, kernel.key, tag))
        if kernel.operation is not None:
            owners[kernel.key] = (kernel.operation, "metadata.name")
        elif kernel.runs:  # a kernel named by its runs (FORMAT.md §4)
            run = kernel.runs[0].entry
            named_by = "spec.sourceNative.benchmark" if kernel.runs[0].source else "metadata.title"
            owners[kernel.key] = (run, named_by)
    for section, items in sorted(named.items()):
        counts: dict[str, int] = defaultdict(int)
        for name, _, _ in items:
            counts[name] += 1
        for name, key, tag in items:
            unique = name if counts[name] == 1 and portable_name(name) else f"{name}-{tag}"
            paths[key] = f"{section}/{unique}/"
    # An OperationSpec's page is its kernel page: the kernel loop above gave it its path.
    if held is None:
        for entry in catalog.of_kind("BenchmarkRun"):
            paths[entry.digest] = run_path(entry.digest)
        return paths, _clashes(paths, owners)
    runs = _held_run_paths(catalog.of_kind("BenchmarkRun"), held.run_paths)
    held.run_paths = runs
    # The runs' copied (a dict's copy reads no key), the few others' added: ~0.1 s less at
    # 100k runs than a look-up and a count each. A run's path holds no page's file name.
    others, paths = paths, runs.paths.copy()
    paths.update(others)
    return paths, _clashes(paths, owners, Counter(others.values()), runs)


class HeldRunPaths(NamedTuple):
    """The runs' paths of the last build (`sitegen serve`), patched where runs changed."""

    runs: tuple[LoadedResource, ...]  # the runs, as the catalog listed them
    paths: dict[str, str]  # digest → path
    counts: Counter[str]  # path → how many runs have it
    twice: frozenset[str]  # the paths of more than one run


def _held_run_paths(runs: tuple[LoadedResource, ...], last: HeldRunPaths | None) -> HeldRunPaths:
    """Each run's path, counted: the last build's, a path made for each run not in it (its
    run's digest's: the runs found as stretches of the very objects), or all made anew."""
    found = changes(last.runs, runs) if last is not None else None
    if last is not None and found is not None and len(found[0]) + len(found[1]) <= len(runs) // 8:
        # Patched in place: the last build's are not read again.
        paths, counts, twice = last.paths, last.counts, set(last.twice)
        added, removed = found
        for entry in removed:  # out first: a run stepped over is in both
            path = paths.pop(entry.digest, None)
            if path is None:
                break  # not as the last build left it: all made anew
            counts[path] -= 1
            if counts[path] < 2:
                twice.discard(path)
            if not counts[path]:
                del counts[path]
        else:
            for entry in added:
                path = paths[entry.digest] = run_path(entry.digest)
                counts[path] += 1
                if counts[path] > 1:
                    twice.add(path)
            if len(paths) == len(runs):
                return HeldRunPaths(runs, paths, counts, frozenset(twice))
    paths = {entry.digest: run_path(entry.digest) for entry in runs}
    counts = Counter(paths.values())
    return HeldRunPaths(runs, paths, counts, frozenset(p for p, n in counts.items() if n > 1))


def _clashes(
    paths: dict[str, str],
    owners: dict[str, tuple[LoadedResource, str]],
    counts: Counter[str] | None = None,
    runs: HeldRunPaths | None = None,
) -> list[Problem]:
    """Two keys with one path, and a path one of whose folders is a file of another page (a
    resource named `index.json` would be a folder where its section's list page writes its
    JSON twin). `counts`, `runs`: the paths but the runs' counted, and the runs' (held)."""
    # Only a path of two keys, or with a page's file name in it, can clash: counted in C
    # first, so that the ~90,000 runs' paths are not each grouped, sorted and split.
    if counts is None:
        counts = Counter(paths.values())
    suspects = {path for path, count in counts.items() if count > 1}
    if runs is not None:
        suspects |= runs.twice | {path for path in counts if path in runs.counts}
    every_path = "\n".join(counts)
    if any(name in every_path for name in PAGE_FILES):  # one search, not one a path
        suspects |= {path for path in counts if any(name in path for name in PAGE_FILES)}
    by_path: dict[str, list[str]] = defaultdict(list)
    for key, path in paths.items() if suspects else ():  # none: no pass over ~100k paths
        if path in suspects:
            by_path[path].append(key)
    problems = []
    for path, keys in sorted(by_path.items()):
        for key in keys:
            owner = owners.get(key)
            others = [_owner_text(k, owners) for k in sorted(keys) if k != key]
            folders = path.rstrip("/").split("/")
            taken = next((f for f in folders[1:] if f in PAGE_FILES), None)
            if others:
                message = f"its page {path} is also the page of {', '.join(others)}"
            elif taken is not None:
                message = f"its page {path} would be a folder where a page writes its {taken}"
            else:
                continue
            if owner is None:  # never: every page is named after a resource
                raise PathClash(f"{path}: {message}")
            resource, field = owner
            problems.append(
                Problem(
                    resource.path,
                    resource.at(field),
                    message,
                    "rename it: a page's path is made from its name",
                )
            )
    return problems


def _owner_text(key: str, owners: dict[str, tuple[LoadedResource, str]]) -> str:
    if key not in owners:
        return key
    resource = owners[key][0]
    return f"{resource.kind} {resource.name!r} ({resource.path})"


def run_path(digest_value: str) -> str:
    return f"runs/{short(digest_value, RUN_ID_HEX)}/"


REGRESSIONS = "regressions/"  # every step the history shows (site/regressions.py)
REGRESSIONS_FEED = "regressions.xml"  # its Atom feed
METHODOLOGY = "methodology/"  # how figures and marks are computed (site/methodology.py)
DATA_QUALITY = "data-quality/"  # the marks counted (site/quality.py)
SOURCES = "sources/"  # every upstream credited (site/sources.py)


def history_path(kernel_path: str, environment_path: str, workload_path: str = "") -> str:
    """A kernel's history on one GPU (`kernels/<kernel>/history/<gpu>/`) and at one shape
    (`…/<workload>/`): inside the kernel's folder, named as the GPU's and the workload's
    pages are."""
    gpu = environment_path.rstrip("/").rsplit("/", 1)[-1]
    path = f"{kernel_path}history/{gpu}/"
    if workload_path:
        path += workload_path.rstrip("/").rsplit("/", 1)[-1] + "/"
    return path
