"""Command line: `sitegen check | digest | import | build | serve`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from sitegen.build import check_content
from sitegen.load import load_files
from sitegen.problems import format_report

EXIT_OK, EXIT_CONTENT, EXIT_USAGE = 0, 1, 2


def _check(args: argparse.Namespace) -> int:
    checked = check_content(args.content_dir, strict=args.strict)
    print(format_report(checked.problems, checked.resource_count, checked.file_count))
    return EXIT_OK if checked.ok else EXIT_CONTENT


def _digest(args: argparse.Namespace) -> int:
    """Each resource in the given files: kind, name and digest."""
    loaded = load_files([Path(file) for file in args.files])
    for problem in sorted(loaded.problems):
        print(problem.line(), file=sys.stderr)
    for entry in loaded.resources:
        place = f"#{entry.where}" if entry.where else ""
        print(f"{entry.path}{place}\t{entry.kind}\t{entry.name}\t{entry.digest}")
    return EXIT_CONTENT if loaded.problems else EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sitegen", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    check = commands.add_parser("check", help="validate a content tree and resolve every digest")
    check.add_argument(
        "content_dir", nargs="?", type=Path, default=Path("content"), metavar="CONTENT_DIR"
    )
    check.add_argument(
        "--strict",
        action="store_true",
        help="warnings are errors; runs must resolve workload and implementation",
    )
    check.set_defaults(handler=_check)

    digest = commands.add_parser("digest", help="print kind, name and digest of each resource")
    digest.add_argument("files", nargs="+", metavar="FILE")
    digest.set_defaults(handler=_digest)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return int(args.handler(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
