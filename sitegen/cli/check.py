"""`sitegen check [CONTENT_DIR] [--strict]`: validate every file and resolve every digest."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from sitegen.cli.arguments import content_directory
from sitegen.cli.exit_codes import EXIT_CONTENT, EXIT_OK
from sitegen.model.problems import format_report


def add_to(commands: Any) -> None:
    parser = commands.add_parser("check", help="validate a content tree and resolve every digest")
    parser.add_argument(
        "content_dir", nargs="?", type=Path, default=Path("content"), metavar="CONTENT_DIR"
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="warnings are errors: runs must resolve workload and implementation, copies agree",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from sitegen.pipeline import check_content  # the pipeline only when checking

    content = content_directory(args.content_dir, "check")
    checked = check_content(content, strict=args.strict)
    print(format_report(checked.problems, checked.resource_count, checked.file_count))
    return EXIT_OK if checked.ok else EXIT_CONTENT
