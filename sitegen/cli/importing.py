"""`sitegen import SOURCE …`: one subcommand per registered importer (sitegen/importers/);
`sitegen import --all` runs every import step of sources/sources.toml after checking each source
file's sha256, and `sitegen import --verify` only checks."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sitegen.cli.exit_codes import EXIT_CONTENT, EXIT_OK, CommandError
from sitegen.importers import registry

if TYPE_CHECKING:
    from sitegen.model.problems import Problem

DEFAULT_MANIFEST = Path("sources") / "sources.toml"


def add_to(commands: Any) -> None:
    parser = commands.add_parser(
        "import",
        help="import an upstream benchmark source, or every one sources/sources.toml lists",
        description=(
            "Import one upstream source (`sitegen import SOURCE …`), or regenerate the content "
            "directory from every source in sources/sources.toml (`--all`): each file is first "
            "checked against its recorded sha256, then the manifest's import steps run in order."
        ),
    )
    every = parser.add_mutually_exclusive_group()
    every.add_argument(
        "--all",
        action="store_true",
        help="check every source file, then run every import step of the manifest",
    )
    every.add_argument(
        "--verify", action="store_true", help="only check every source file against its sha256"
    )
    parser.add_argument(
        "--sources",
        type=Path,
        default=DEFAULT_MANIFEST,
        metavar="MANIFEST",
        help="default: sources/sources.toml",
    )
    parser.add_argument(
        "--out",
        dest="content_out",
        type=Path,
        default=Path("content"),
        metavar="CONTENT_DIR",
        help="with --all: the content directory the steps write into (default: content/)",
    )
    parser.set_defaults(handler=from_manifest)
    sources = parser.add_subparsers(dest="source", required=False, metavar="SOURCE")
    for importer in registry.registered():
        command = sources.add_parser(importer.name, help=importer.summary)
        importer.add_arguments(command)
        command.set_defaults(handler=importer.run)


def from_manifest(args: argparse.Namespace) -> int:
    """`--all` or `--verify`: the manifest read and every file checked; with `--all`, each step
    run in order, stopping at the first that fails."""
    from sitegen.importers.sources import ManifestError, read_manifest, verify_files
    from sitegen.model.wording import counted

    if not (args.all or args.verify):
        raise CommandError(
            "name a source, or --all",
            "sitegen import SOURCE … imports one source; sitegen import --all regenerates "
            "content/ from sources/sources.toml",
        )
    manifest_path: Path = args.sources
    if not manifest_path.is_file():
        raise CommandError(f"{manifest_path}: no such file", "name the manifest: --sources FILE")
    names = [importer.name for importer in registry.registered()]
    try:
        manifest = read_manifest(manifest_path, names)
    except ManifestError as error:
        return _refused(error.problems)
    problems = verify_files(manifest)
    if problems:
        return _refused(problems)
    files = sum(len(source.files) for source in manifest.sources)
    print(
        f"{manifest_path}: {counted(len(manifest.sources), 'source')}, "
        f"{counted(files, 'file')}, every sha256 as recorded"
    )
    if args.verify:
        return EXIT_OK
    importers = {importer.name: importer for importer in registry.registered()}
    # Each step replaces its own folder, which an importer writes only where its parent exists.
    for step in manifest.steps:
        if step.out != ".":
            (args.content_out / step.out).parent.mkdir(parents=True, exist_ok=True)
    for index, step in enumerate(manifest.steps, start=1):
        importer = importers[step.importer]
        argv = manifest.command_line(step, args.content_out)
        print(
            f"step {index}/{len(manifest.steps)}: sitegen import {step.importer} {shlex.join(argv)}"
        )
        sys.stdout.flush()
        parser = argparse.ArgumentParser(
            prog=f"sitegen import {step.importer}", exit_on_error=False
        )
        importer.add_arguments(parser)
        try:
            step_args = parser.parse_args(argv)
        except (argparse.ArgumentError, SystemExit) as error:
            raise CommandError(
                f"{manifest_path}: import[{index - 1}].arguments: {error}",
                f"the arguments `sitegen import {step.importer}` takes: see its --help",
                EXIT_CONTENT,
            ) from None
        step_args.command, step_args.debug = "import", args.debug
        code = importer.run(step_args)
        if code != EXIT_OK:
            print(
                f"step {index} (sitegen import {step.importer}) failed; the steps after it "
                "were not run",
                file=sys.stderr,
            )
            return code
    return EXIT_OK


def _refused(problems: Sequence[Problem]) -> int:
    from sitegen.model.wording import counted

    for problem in problems:
        print(problem.line(), file=sys.stderr)
    print(f"{counted(len(problems), 'problem')} in the sources; nothing imported", file=sys.stderr)
    return EXIT_CONTENT
