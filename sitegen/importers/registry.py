"""The importer protocol and registry: each importer turns a source's files into content
(`sitegen import NAME …`) and tells the site what only it knows about that content.

An importer is an object with the `Importer` protocol's members, registered with `register`
when its module is imported. The site asks the registry (`attribution_for`, `project_of`,
`shape_of`, `provider`, `release_of`, `revision_of`), never an importer by name: nothing outside
this package knows a source's names.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, NamedTuple, Protocol

from sitegen.content.reports import Attribution

if TYPE_CHECKING:  # the model (pydantic) is not needed to parse a command line
    from sitegen.content.run_summary import Shape


class Provider(NamedTuple):
    """A provider as an importer names it: what runs call an implementation."""

    label: str  # its display name: `Transformers`
    baseline: bool  # a reference the others are compared with (eager PyTorch, Transformers)


class Revision(NamedTuple):
    """The revision of the measured code a run records: where it sits in a series' history."""

    repository: str  # https://github.com/owner/name: commits link there
    commit: str  # the full commit; "" when the run records only its release
    committed_at: str  # an instant; "" with no commit
    tag: str  # the release this run was made for (`0.6.4`); "" for a run of a CI build
    reference: str  # the commit the source compares this kernel against; ""
    reference_at: str  # its instant; ""


# The importers that ship with sitegen, by module: imported (and so registered) on first use.
BUILTIN = ("sitegen.importers.kernelindex", "sitegen.importers.liger")


class Importer(Protocol):
    """What the command line and the site need of one upstream source."""

    name: str  # the command: `sitegen import NAME`
    summary: str  # its line in `sitegen import --help`

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add the command's arguments to its own subparser."""

    def run(self, args: argparse.Namespace) -> int:
        """Run the import the arguments describe; the command's exit code."""

    def attribution(self, source: str) -> Attribution | None:
        """The credit line for runs whose `sourceNative.source` is `source`, if it is ours."""

    def project_of(self, implementation_name: str) -> str | None:
        """The SoftwareProject name an implementation belongs to, by this source's naming."""

    def shape_of(self, source: str, external_id: str) -> Shape | None:
        """A run's shape spelled out in its `sourceNative.externalId` (an export without
        workloads), if `source` is ours and the id holds one."""

    def provider(self, source: str, provider: str) -> Provider | None:
        """What the importer knows of `provider` (as a run's title spells it) in runs from
        `source`: its display name (`Transformers` for `huggingface`) and whether it is a
        baseline. None when the importer does not know it."""

    def release(self, source: str, labels: Mapping[str, str]) -> str | None:
        """The release of the measured code a run from `source` records in its labels (Liger's
        `liger_version`), if `source` is ours and it does: what the across-releases charts
        compare."""

    def revision(self, source: str, labels: Mapping[str, str]) -> Revision | None:
        """The commit of the measured code a run from `source` records in its labels, if
        `source` is ours and it does: what a series' history is ordered and located by."""


_registry: dict[str, Importer] = {}
_ordered: tuple[Importer, ...] | None = None  # `registered()`, until another registers


def register(importer: Importer) -> None:
    """Make `importer` known to the command line and the site; a name is registered once."""
    global _ordered
    if _registry.get(importer.name, importer) is not importer:
        raise ValueError(f"an importer named {importer.name!r} is already registered")
    _registry[importer.name] = importer
    _ordered = None


def registered() -> tuple[Importer, ...]:
    """Every importer, by name; the built-in ones are imported the first time."""
    global _ordered
    if _ordered is None:
        for module in BUILTIN:
            importlib.import_module(module)
        _ordered = tuple(_registry[name] for name in sorted(_registry))
    return _ordered


def attribution_for(source: str) -> Attribution | None:
    """The first importer's credit line for `source`, or None when no importer owns it."""
    for importer in registered():
        found = importer.attribution(source)
        if found is not None:
            return found
    return None


def project_of(implementation_name: str) -> str | None:
    for importer in registered():
        found = importer.project_of(implementation_name)
        if found is not None:
            return found
    return None


def shape_of(source: str, external_id: str) -> Shape | None:
    for importer in registered():
        found = importer.shape_of(source, external_id)
        if found is not None:
            return found
    return None


def provider(source: str, name: str) -> Provider | None:
    for importer in registered():
        found = importer.provider(source, name)
        if found is not None:
            return found
    return None


def release_of(source: str, labels: Mapping[str, str]) -> str | None:
    for importer in registered():
        found = importer.release(source, labels)
        if found is not None:
            return found
    return None


def revision_of(source: str, labels: Mapping[str, str]) -> Revision | None:
    for importer in registered():
        found = importer.revision(source, labels)
        if found is not None:
            return found
    return None
