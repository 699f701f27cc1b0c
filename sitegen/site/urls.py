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
from sitegen.model.digest import short
from sitegen.model.names import short_hash

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


def output_path(path: str) -> str:
    """Where a site path is written: directories get `index.html`."""
    return path + "index.html" if path == "" or path.endswith("/") else path


def json_twin(path: str) -> str:
    """The machine-readable twin of a page: `index.json` beside `index.html`."""
    return path + "index.json"


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
    prefix, base = parse_base_url(base_url)
    paths: dict[str, str] = {}
    named: dict[str, list[tuple[str, str, str]]] = defaultdict(list)  # section → (name, key, tag)
    for kind, section in SECTIONS.items():
        if kind in ("OperationSpec", "BenchmarkRun"):
            continue
        for entry in catalog.of_kind(kind):
            named[section].append((entry.name, entry.digest, short(entry.digest)))
    for kernel in kernels:
        tag = short(kernel.key) if kernel.key.startswith("sha256:") else short_hash(kernel.key)
        named["kernels"].append((kernel.slug, kernel.key, tag))
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
    _check_unique(paths)
    return SiteUrls(prefix, base, paths)


def run_path(digest_value: str) -> str:
    return f"runs/{short(digest_value, RUN_ID_HEX)}/"


def _check_unique(paths: dict[str, str]) -> None:
    owners: dict[str, list[str]] = defaultdict(list)
    for key, path in paths.items():
        owners[path].append(key)
    clashes = sorted((path, sorted(keys)) for path, keys in owners.items() if len(keys) > 1)
    if clashes:
        pages = "; ".join(f"{path}: {', '.join(keys)}" for path, keys in clashes)
        raise PathClash(f"two resources would be written to the same page: {pages}")
