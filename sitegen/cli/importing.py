"""`sitegen import SOURCE …`: one subcommand per registered importer (sitegen/importers/)."""

from __future__ import annotations

from typing import Any

from sitegen.importers import registry


def add_to(commands: Any) -> None:
    parser = commands.add_parser("import", help="import an upstream benchmark source")
    sources = parser.add_subparsers(dest="source", required=True, metavar="SOURCE")
    for importer in registry.registered():
        command = sources.add_parser(importer.name, help=importer.summary)
        importer.add_arguments(command)
        command.set_defaults(handler=importer.run)
