"""Command line: `sitegen check | digest | import | build | serve | diff | environment`, one
module each.

Each command module has `add_to(commands)`, which adds its subparser and sets its handler; a
handler returns the exit code (exit_codes.py). Every module is imported to parse any command, so
each imports its heavy code in its handler: `sitegen environment` needs the standard library only.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from sitegen import process
from sitegen.cli import build, check, diff, digest, environment, importing, serve

COMMANDS = (check, digest, importing, build, serve, diff, environment)


def build_parser() -> argparse.ArgumentParser:
    description = (
        "Command line: `sitegen check | digest | import | build | serve | diff | environment`."
    )
    parser = argparse.ArgumentParser(prog="sitegen", description=description)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_to(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.handler(args))


def run() -> None:
    """The `sitegen` command: `main`, then an exit without the interpreter's teardown (`main`
    itself returns normally: tests call it in-process)."""
    process.exit_now(main())
