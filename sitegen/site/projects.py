"""Which SoftwareProject an implementation belongs to (docs/site.md): no digest points at a
project (FORMAT.md §3), so the link is found by the implementation's repository, then its pip
package, then the naming convention of the importer that wrote it."""

from __future__ import annotations

from sitegen.content.catalog import Catalog
from sitegen.content.loaded import LoadedResource
from sitegen.importers import registry

PROJECT_LABEL = "project"  # an implementation's label naming its SoftwareProject


def project_links(catalog: Catalog) -> dict[str, LoadedResource]:
    """Implementation digest → its project, for every implementation that has one."""
    by_repository: dict[str, LoadedResource] = {}
    by_package: dict[str, LoadedResource] = {}
    by_name: dict[str, LoadedResource] = {}
    for project in catalog.of_kind("SoftwareProject"):
        spec = project.spec
        for repository in (spec.get("repository"), _host_url(spec.get("host"))):
            if repository:
                by_repository.setdefault(_repository_key(repository), project)
        for package in spec.get("packages", []):
            by_package.setdefault(f"{package['ecosystem']}:{package['name'].lower()}", project)
        by_name.setdefault(project.name, project)
    found = {}
    for implementation in catalog.of_kind("ImplementationRevision"):
        owner = _project_of(implementation, by_repository, by_package, by_name)
        if owner is not None:
            found[implementation.digest] = owner
    return found


def _repository_key(url: str) -> str:
    return url.lower().rstrip("/").removesuffix(".git")


def _host_url(host: dict[str, str] | None) -> str | None:
    if host and host.get("kind") == "github":
        return f"https://github.com/{host['id']}"
    return None


def _project_of(
    implementation: LoadedResource,
    by_repository: dict[str, LoadedResource],
    by_package: dict[str, LoadedResource],
    by_name: dict[str, LoadedResource],
) -> LoadedResource | None:
    spec = implementation.spec
    repositories = [
        spec["projectRevision"].get("repository"),
        spec.get("source", {}).get("repository"),
    ]
    repositories += [v["install"].get("repository") for v in spec.get("buildVariants", [])]
    for repository in repositories:
        if repository and _repository_key(repository) in by_repository:
            return by_repository[_repository_key(repository)]
    for variant in spec.get("buildVariants", []):
        install = variant["install"]
        if install["kind"] == "pip" and "package" in install:
            found = by_package.get(f"pypi:{install['package'].lower()}")
            if found is not None:
                return found
    # An importer that knows the project names it in the implementation's labels (metadata,
    # never hashed); else the importer's naming convention.
    labels = implementation.metadata.get("labels") or {}
    name = labels.get(PROJECT_LABEL) or registry.project_of(implementation.name)
    return by_name.get(name) if name is not None else None
