"""The kernelindex.dev catalog export importer (`sitegen import kernelindex`), registered on
import.

Its modules: export.py reads the export's tables, manifests.py checks each manifest against its
recorded digest and links rows by id, import_reports.py writes each source's report and record
history, importing.py the tree. What the site needs of this source is in content (each source's
policy in its report, the project of an implementation in its labels), so the site's questions
of the registry are answered by content, not by this importer: each hook answers None.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from sitegen.content.reports import Attribution
from sitegen.importers.registry import Provider, Revision, register

if TYPE_CHECKING:
    from sitegen.content.run_summary import Shape


class KernelindexImporter:
    name = "kernelindex"
    summary = "kernelindex.dev's catalog export (.jsonl.zst); replaces OUT_DIR whole"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.description = (
            "Import every manifest of a kernelindex.dev catalog export, each checked against "
            "the digest the export recorded, for each source that states a policy (licence, "
            "terms, attribution) and each named with --source."
        )
        parser.add_argument("export", type=Path, metavar="EXPORT.jsonl.zst")
        parser.add_argument(
            "--source",
            action="append",
            default=[],
            metavar="SLUG",
            help="also import this source, which states no policy (repeatable)",
        )
        parser.add_argument(
            "--out",
            type=Path,
            default=Path("content/kernelindex"),
            metavar="CONTENT_DIR",
            help="default: content/kernelindex/",
        )

    def run(self, args: argparse.Namespace) -> int:
        from sitegen.importers.kernelindex.importing import main  # the import's code

        return main(args.export, args.out, list(args.source))

    def attribution(self, source: str) -> Attribution | None:
        return None  # each source's policy is in its import report (content/_sources)

    def project_of(self, implementation_name: str) -> str | None:
        return None  # an implementation's project is in its labels

    def shape_of(self, source: str, external_id: str) -> Shape | None:
        return None  # every run's workload is in the export

    def provider(self, source: str, provider: str) -> Provider | None:
        return None

    def release(self, source: str, labels: Mapping[str, str]) -> str | None:
        return None

    def revision(self, source: str, labels: Mapping[str, str]) -> Revision | None:
        return None  # the export's runs record no commit of the code they measured


IMPORTER = KernelindexImporter()
register(IMPORTER)
