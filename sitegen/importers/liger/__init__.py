"""The Liger-Kernel benchmark importer (`sitegen import liger`), registered on import.

Its modules: rows.py reads the CSVs, sources.py tells where their rows come from (upstream, or
a machine a contributor describes), bindings.py binds a row to axes (FORMAT.md §6),
resources.py builds what a row imports to, import_reports.py the reports of content/_sources/,
importing.py writes the tree; providers.py and gpus.py are its tables, conventions.py what the
site reads of them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from sitegen.cli.exit_codes import EXIT_USAGE
from sitegen.content.reports import Attribution
from sitegen.importers.liger import conventions
from sitegen.importers.registry import Provider, Revision, register

if TYPE_CHECKING:
    from sitegen.content.run_summary import Shape


class LigerImporter:
    name = "liger"
    summary = "Liger-Kernel benchmark CSVs (FORMAT.md §5–6); replaces OUT_DIR whole"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.description = (
            "Import upstream's CSVs (each row's GPU by its gpu_name) and CSVs measured on a "
            "machine described by an ExecutionEnvironment file (`sitegen environment` prints "
            "one): `--environment HOST.json CSV...` binds those CSVs' rows to HOST.json; given "
            "without CSVs, it describes every CSV named before it."
        )
        parser.add_argument("csv_files", nargs="*", type=Path, metavar="CSV")
        parser.add_argument(
            "--environment",
            action="append",
            nargs="+",
            type=Path,
            default=[],
            metavar=("HOST.json", "CSV"),
            help="the machine the CSVs after it were measured on (repeatable)",
        )
        parser.add_argument(
            "--history",
            type=Path,
            metavar="DIR",
            help="upstream's benchmark history (gh-pages benchmarks/ with commits.tsv): each "
            "run bound to the commit it measured",
        )
        parser.add_argument(
            "--out",
            type=Path,
            default=Path("content"),
            metavar="CONTENT_DIR",
            help="default: content/",
        )

    def run(self, args: argparse.Namespace) -> int:
        from sitegen.importers.liger.importing import Measured, main  # the import's code

        upstream: list[Path] = list(args.csv_files)
        groups: list[list[Path]] = args.environment
        alone = [group[0] for group in groups if len(group) == 1]
        if alone and len(groups) > 1:
            print(
                f"sitegen import liger: --environment {alone[0]} names no CSV, so it describes "
                "every CSV before it, and may not be given with another --environment: give "
                "each its CSVs (--environment HOST.json CSV...)",
                file=sys.stderr,
            )
            return EXIT_USAGE
        if alone:
            measured = [Measured(alone[0], tuple(upstream))]
            upstream = []
        else:
            measured = [Measured(group[0], tuple(group[1:])) for group in groups]
        if not upstream and not any(group.csv_paths for group in measured) and not args.history:
            print("sitegen import liger: no CSV given", file=sys.stderr)
            return EXIT_USAGE
        return main(upstream, args.out, measured, args.history)

    def attribution(self, source: str) -> Attribution | None:
        return conventions.attribution(source)

    def project_of(self, implementation_name: str) -> str | None:
        return conventions.project_of(implementation_name)

    def shape_of(self, source: str, external_id: str) -> Shape | None:
        return conventions.shape_of(source, external_id)

    def provider(self, source: str, provider: str) -> Provider | None:
        return conventions.provider(source, provider)

    def release(self, source: str, labels: Mapping[str, str]) -> str | None:
        return conventions.release(source, labels)

    def revision(self, source: str, labels: Mapping[str, str]) -> Revision | None:
        return conventions.revision(source, labels)


IMPORTER = LigerImporter()
register(IMPORTER)
