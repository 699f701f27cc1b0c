"""Command line: `sitegen check | digest | import | build | serve | diff | environment`, one
module each.

Each command module has `add_to(commands)`, which adds its subparser and sets its handler; a
handler returns the exit code (exit_codes.py) or raises, and `guard.guarded` turns what it
raises into one line and that code. A handler may set `interrupted` too: what an interrupt
left behind, in words. Every module is imported to parse any command, so each imports its heavy
code in its handler: `sitegen environment` needs the standard library only.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from sitegen import __version__, process
from sitegen.cli import build, check, diff, digest, environment, importing, serve
from sitegen.cli.exit_codes import EXIT_OK, EXIT_USAGE
from sitegen.cli.guard import guarded

COMMANDS = (check, digest, importing, build, serve, diff, environment)


def build_parser() -> argparse.ArgumentParser:
    description = (
        "Command line: `sitegen check | digest | import | build | serve | diff | environment`."
    )
    epilog = (
        "Exit status: 0 ok; 1 the content has problems; 2 usage or environment (a wrong "
        "option, a missing path, a file system that refuses, an interrupt, sitegen's own bug)."
    )
    parser = argparse.ArgumentParser(prog="sitegen", description=description, epilog=epilog)
    parser.add_argument("--version", action="version", version=f"sitegen {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="print the traceback of a failure, before its line"
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_to(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The command `argv` names, run under the guard; its exit status (never raises SystemExit:
    `--help`, `--version` and argparse's usage errors return theirs)."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as stop:
        if stop.code is None:
            return EXIT_OK
        return stop.code if isinstance(stop.code, int) else EXIT_USAGE
    return guarded(args)


def run() -> None:
    """The `sitegen` command: `main`, then an exit without the interpreter's teardown (`main`
    itself returns normally: tests call it in-process)."""
    process.exit_now(main())
