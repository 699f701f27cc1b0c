"""`sitegen digest FILE...`: the kind, name and digest of each resource in the files."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from sitegen.cli.arguments import existing_files
from sitegen.cli.exit_codes import EXIT_CONTENT, EXIT_OK
from sitegen.model.problems import printable


def add_to(commands: Any) -> None:
    parser = commands.add_parser("digest", help="print kind, name and digest of each resource")
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from sitegen.content.load import load_files  # the model (pydantic) only when digesting

    loaded = load_files(existing_files(args.files))
    for problem in sorted(loaded.problems):
        print(problem.line(), file=sys.stderr)
    for entry in loaded.resources:
        place = f"#{entry.where}" if entry.where else ""
        fields = (f"{entry.path}{place}", entry.kind, entry.name, entry.digest)
        print("\t".join(map(printable, fields)))  # tab-separated: a tab inside one is escaped
    return EXIT_CONTENT if loaded.problems else EXIT_OK
