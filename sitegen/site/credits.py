"""Whom a page credits: the credit line of each source whose numbers it shows.

An upstream an importer knows is credited in the importer's words (its licence and copyright are
a duty, not a report's to change); otherwise an import report naming the source, else the bare id.
"""

from __future__ import annotations

from sitegen.content.reports import Attribution, SourceReport
from sitegen.importers import registry


def attribution_for(source: str, reports: dict[str, SourceReport] | None = None) -> Attribution:
    known = registry.attribution_for(source)
    if known is not None:
        return known
    for report in (reports or {}).values():
        if report.source == source:
            return Attribution(
                source,
                report.name or source,
                report.licence or "",
                report.copyright or "",
                report.repository,
            )
    return Attribution(source, source, "", "", None)
