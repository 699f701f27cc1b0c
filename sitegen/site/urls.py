"""The only place that turns a resource into a URL and a URL into an output path.

Site paths are relative to the site root (`runs/f0cf6dd69e048a9b/`, `feed.xml`); `href` puts the
base path in front, `absolute` the full base URL (sitemap, feed, canonical links). Resource names
repeat (FORMAT.md §1), so a name shared by several resources of one section gets the first 12 hex
of its digest appended, and runs are addressed by digest alone.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from sitegen.analysis.kernels import Kernel
from sitegen.content.catalog import Catalog
from sitegen.content.loaded import LoadedResource
from sitegen.model.digest import short
from sitegen.model.names import short_hash
from sitegen.model.problems import Problem

DEFAULT_BASE_URL = "https://kernelindex.dev/"
RUN_ID_HEX = 16  # 64 bits: collisions are checked, not assumed away
SECTIONS = {
    "OperationSpec": "kernels",
    "WorkloadCase": "workloads",
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
}


class UrlError(ValueError):
    """A base URL we cannot publish under, or two things that would share one path."""


class PathClash(UrlError):
    """Two resources that would share one page: the content's problem, not the command's."""


def parse_base_url(value: str | None) -> tuple[str, str]:
    """(path prefix, absolute base) from `--base-url`: `https://host/sub/` or `/sub/` or None."""
    if value is None:
        return "/", DEFAULT_BASE_URL
    parts = urlsplit(value)
    if parts.scheme in ("http", "https") and parts.hostname:
        if parts.query or parts.fragment:
            raise UrlError(f"--base-url must not have a query or fragment: {value!r}")
        path = "/" + parts.path.strip("/") + "/" if parts.path.strip("/") else "/"
        return path, f"{parts.scheme}://{parts.netloc}{path}"
    if value.startswith("/") and not value.startswith("//") and not parts.scheme:
        path = "/" + value.strip("/") + "/" if value.strip("/") else "/"
        return path, DEFAULT_BASE_URL.rstrip("/") + path
    raise UrlError(f"--base-url must be an http(s) URL or a path starting with '/': {value!r}")


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


def plan_paths(catalog: Catalog, kernels: Iterable[Kernel]) -> tuple[dict[str, str], list[Problem]]:
    """A site path for every resource and kernel (digest or kernel key → path), and a problem
    for each resource whose page would clash with another page or file: `sitegen check`
    reports them, so a tree that checks clean always builds."""
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
            unique = name if counts[name] == 1 else f"{name}-{tag}"
            paths[key] = f"{section}/{unique}/"
    for entry in catalog.of_kind("BenchmarkRun"):
        paths[entry.digest] = run_path(entry.digest)
    # An OperationSpec's page is its kernel page: the kernel loop above gave it its path.
    return paths, _clashes(paths, owners)


def _clashes(paths: dict[str, str], owners: dict[str, tuple[LoadedResource, str]]) -> list[Problem]:
    """Two keys with one path, and a path one of whose folders is a file of another page (a
    resource named `index.json` would be a folder where its section's list page writes its
    JSON twin)."""
    by_path: dict[str, list[str]] = defaultdict(list)
    for key, path in paths.items():
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


def history_path(kernel_path: str, environment_path: str, workload_path: str = "") -> str:
    """A kernel's history on one GPU (`kernels/<kernel>/history/<gpu>/`) and at one shape
    (`…/<workload>/`): inside the kernel's folder, named as the GPU's and the workload's
    pages are."""
    gpu = environment_path.rstrip("/").rsplit("/", 1)[-1]
    path = f"{kernel_path}history/{gpu}/"
    if workload_path:
        path += workload_path.rstrip("/").rsplit("/", 1)[-1] + "/"
    return path
