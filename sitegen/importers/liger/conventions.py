"""What the site reads of Liger's conventions: whom to credit, which project each provider's
implementation belongs to, and the caseKey spelled inside each run's externalId (FORMAT.md §5)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from sitegen.content.reports import Attribution
from sitegen.importers.liger.providers import PROVIDERS, REPOSITORY
from sitegen.model.names import kebab

if TYPE_CHECKING:
    from sitegen.content.run_summary import Shape

SOURCE = "liger-kernel-bench"  # sourceNative.source; backend CSVs add a tag: `…-cutile`
IMPLEMENTATION_PREFIX = "liger-bench-"
ATTRIBUTION = Attribution(
    source=SOURCE,
    name="Liger-Kernel",
    licence="BSD-2-Clause",
    copyright="Copyright 2024 LinkedIn Corporation",
    repository=REPOSITORY,
)
# Implementation names end in the kebab-cased provider; longest first, so that
# `…-liger-rms-norm` is not taken for `…-liger`.
_PROVIDER_SUFFIXES = sorted(
    ((f"-{kebab(name)}", provider.project) for name, provider in PROVIDERS.items()),
    key=lambda item: -len(item[0]),
)
_CASE_PART = re.compile(r"^([a-z][a-z0-9_]*?)(\d+)$")
_DTYPE = re.compile(r"[a-z][a-z0-9_]*")


def is_ours(source: str) -> bool:
    """Whether runs of `source` came from this importer (any backend CSV's tag included)."""
    return source == SOURCE or source.startswith(SOURCE + "-")


def attribution(source: str) -> Attribution | None:
    return ATTRIBUTION if is_ours(source) else None


def project_of(implementation_name: str) -> str | None:
    """The project of `liger-bench-<kernel>-<provider>`, by the provider table."""
    if not implementation_name.startswith(IMPLEMENTATION_PREFIX):
        return None
    for suffix, project in _PROVIDER_SUFFIXES:
        if implementation_name.endswith(suffix):
            return project
    return None


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
