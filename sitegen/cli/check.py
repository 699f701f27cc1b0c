"""`sitegen check [CONTENT_DIR] [--strict]`: validate every file and resolve every digest."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from sitegen.cli.exit_codes import EXIT_CONTENT, EXIT_OK, EXIT_USAGE
from sitegen.model.problems import format_report
from sitegen.model.values import EpochError
from sitegen.pipeline import check_content


def add_to(commands: Any) -> None:
    parser = commands.add_parser("check", help="validate a content tree and resolve every digest")
    parser.add_argument(
        "content_dir", nargs="?", type=Path, default=Path("content"), metavar="CONTENT_DIR"
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="warnings are errors; runs must resolve workload and implementation",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if not args.content_dir.is_dir():
        print(f"sitegen check: {args.content_dir}: no such directory", file=sys.stderr)
        return EXIT_USAGE
    try:
        checked = check_content(args.content_dir, strict=args.strict)
    except EpochError as error:
        print(f"sitegen check: {error}", file=sys.stderr)
        return EXIT_USAGE
    print(format_report(checked.problems, checked.resource_count, checked.file_count))
    return EXIT_OK if checked.ok else EXIT_CONTENT
