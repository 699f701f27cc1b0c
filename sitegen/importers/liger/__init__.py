"""The Liger-Kernel benchmark importer (`sitegen import liger`), registered on import.

Its modules: rows.py reads the CSVs, bindings.py binds a row to axes (FORMAT.md §6),
resources.py builds what a row imports to, importing.py writes the tree; providers.py and
gpus.py are its tables, conventions.py what the site reads of them.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from sitegen.content.reports import Attribution
from sitegen.importers.liger import conventions
from sitegen.importers.registry import register

if TYPE_CHECKING:
    from sitegen.content.run_summary import Shape


class LigerImporter:
    name = "liger"
    summary = "Liger-Kernel benchmark CSVs (FORMAT.md §5–6); replaces OUT_DIR whole"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("csv_files", nargs="+", type=Path, metavar="CSV")
        parser.add_argument(
            "--out",
            type=Path,
            default=Path("content"),
            metavar="CONTENT_DIR",
            help="default: content/",
        )

    def run(self, args: argparse.Namespace) -> int:
        from sitegen.importers.liger.importing import main  # the import's code, only to import

        return main(list(args.csv_files), args.out)

    def attribution(self, source: str) -> Attribution | None:
        return conventions.attribution(source)

    def project_of(self, implementation_name: str) -> str | None:
        return conventions.project_of(implementation_name)

    def shape_of(self, source: str, external_id: str) -> Shape | None:
        return conventions.shape_of(source, external_id)


IMPORTER = LigerImporter()
register(IMPORTER)
