"""What the site reads of Liger's conventions: whom to credit, which project each provider's
implementation belongs to, what each provider is called, and the caseKey spelled inside each
run's externalId (FORMAT.md §5).

Two kinds of runs are ours: upstream's published data (`liger-kernel-bench`, a backend CSV adds
its tag), and runs measured for this catalog with the same scripts on a machine a contributor
described (`liger-kernel-scripts-<environment>`), credited as such."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from sitegen.content.reports import Attribution
from sitegen.importers.liger.providers import PROVIDERS, REPOSITORY
from sitegen.importers.registry import Provider, Revision
from sitegen.model.names import kebab

if TYPE_CHECKING:
    from sitegen.content.run_summary import Shape

SOURCE = "liger-kernel-bench"  # sourceNative.source; backend CSVs add a tag: `…-cutile`
MEASURED_SOURCE = "liger-kernel-scripts"  # measured for this catalog: `…-<environment>`
IMPLEMENTATION_PREFIX = "liger-bench-"
LICENCE = "BSD-2-Clause"
COPYRIGHT = "Copyright 2024 LinkedIn Corporation"
ATTRIBUTION = Attribution(
    source=SOURCE, name="Liger-Kernel", licence=LICENCE, copyright=COPYRIGHT, repository=REPOSITORY
)
# The scripts are upstream's, and credited with their licence; the numbers are this catalog's.
MEASURED_NAME = "Measured for this catalog with the Liger-Kernel benchmark scripts"
# Implementation names end in the kebab-cased provider; longest first, so that
# `…-liger-rms-norm` is not taken for `…-liger`.
_PROVIDER_SUFFIXES = sorted(
    ((f"-{kebab(name)}", provider.project) for name, provider in PROVIDERS.items()),
    key=lambda item: -len(item[0]),
)
_CASE_PART = re.compile(r"^([a-z][a-z0-9_]*?)(\d+)$")
_DTYPE = re.compile(r"[a-z][a-z0-9_]*")


def is_upstream(source: str) -> bool:
    """Whether runs of `source` are upstream's published data (any backend CSV's tag included)."""
    return source == SOURCE or source.startswith(SOURCE + "-")


def is_measured(source: str) -> bool:
    """Whether runs of `source` were measured for this catalog with upstream's scripts."""
    return source.startswith(MEASURED_SOURCE + "-")


def is_ours(source: str) -> bool:
    return is_upstream(source) or is_measured(source)


def attribution(source: str) -> Attribution | None:
    if is_upstream(source):
        return ATTRIBUTION
    if is_measured(source):
        return Attribution(source, MEASURED_NAME, LICENCE, COPYRIGHT, REPOSITORY)
    return None


def project_of(implementation_name: str) -> str | None:
    """The project of `liger-bench-<kernel>-<provider>`, by the provider table."""
    if not implementation_name.startswith(IMPLEMENTATION_PREFIX):
        return None
    for suffix, project in _PROVIDER_SUFFIXES:
        if implementation_name.endswith(suffix):
            return project
    return None


def provider(source: str, name: str) -> Provider | None:
    """The provider's title in the table (`huggingface` → `Transformers`) and its role."""
    if not is_ours(source):
        return None
    found = PROVIDERS.get(name)
    return Provider(found.title, found.baseline) if found is not None else None


def shape_of(source: str, external_id: str) -> Shape | None:
    """The caseKey segment (`hidden16384-rows4096-fp32`), found by its form rather than its
    place: backend and memory runs carry extra segments."""
    if not is_ours(source):
        return None
    # The site's model (pydantic) only when the site asks: the command line imports this module.
    from sitegen.content.run_summary import Shape

    for segment in external_id.split("/"):
        *axis_parts, dtype = segment.split("-")
        matches = [_CASE_PART.match(part) for part in axis_parts]
        if axis_parts and all(matches) and _DTYPE.fullmatch(dtype):
            axes = tuple((m.group(1), int(m.group(2))) for m in matches if m)
            return Shape(axes, dtype, ())
    return None


RELEASE_LABEL = "liger_version"  # each run's labels: the Liger release the CSV row recorded


def release(source: str, labels: Mapping[str, str]) -> str | None:
    """The Liger release a run was measured with, from its labels."""
    if not is_ours(source):
        return None
    return labels.get(RELEASE_LABEL) or None


# What a history run's labels record of the code it measured (importing.revision_labels).
COMMIT_LABEL = "liger_commit"
COMMIT_DATE_LABEL = "liger_commit_date"
RELEASE_TAG_LABEL = "liger_release"
GOLDEN_LABEL = "liger_golden_commit"
GOLDEN_DATE_LABEL = "liger_golden_commit_date"


def revision(source: str, labels: Mapping[str, str]) -> Revision | None:
    """The Liger-Kernel commit a run measured, from its labels; None without one."""
    if not is_upstream(source) or COMMIT_LABEL not in labels:
        return None
    return Revision(
        REPOSITORY,
        labels[COMMIT_LABEL],
        labels.get(COMMIT_DATE_LABEL, ""),
        labels.get(RELEASE_TAG_LABEL, ""),
        labels.get(GOLDEN_LABEL, ""),
        labels.get(GOLDEN_DATE_LABEL, ""),
    )
