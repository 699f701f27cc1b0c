"""Command line: `sitegen check | digest | import | build | serve`."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from sitegen.build import build_site, check_content
from sitegen.load import load_files
from sitegen.pages import build_date_from_epoch
from sitegen.problems import format_report
from sitegen.render import RenderError
from sitegen.urls import UrlError
from sitegen.write import OutputError

EXIT_OK, EXIT_CONTENT, EXIT_USAGE = 0, 1, 2


def _check(args: argparse.Namespace) -> int:
    if not args.content_dir.is_dir():
        print(f"sitegen check: {args.content_dir}: no such directory", file=sys.stderr)
        return EXIT_USAGE
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


def _progress() -> Callable[[int, int], None]:
    """Page counts on stderr: redrawn in place on a terminal, else a line every 5,000 pages."""
    tty = sys.stderr.isatty()

    def report(done: int, total: int) -> None:
        if tty and (done % 100 == 0 or done == total):
            end = "\n" if done == total else ""
            print(f"\rrendering pages {done:,}/{total:,}", end=end, file=sys.stderr, flush=True)
        elif not tty and done % 5000 == 0:
            print(f"rendering pages {done:,}/{total:,}", file=sys.stderr, flush=True)

    return report


def _build(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    try:
        built = build_site(
            args.content_dir,
            args.out,
            base_url=args.base_url,
            build_date=build_date_from_epoch(os.environ.get("SOURCE_DATE_EPOCH")),
            progress=_progress(),
        )
    except (OutputError, UrlError, RenderError) as error:
        print(f"sitegen build: {error}", file=sys.stderr)
        return EXIT_USAGE if not isinstance(error, RenderError) else EXIT_CONTENT
    checked = built.checked
    if built.out_dir is None:
        print(format_report(checked.problems, checked.resource_count, checked.file_count))
        print("build failed: nothing was written", file=sys.stderr)
        return EXIT_CONTENT
    for problem in checked.problems:  # warnings only: errors stop the build above
        print(problem.line(), file=sys.stderr)
    for warning in built.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    elapsed = time.perf_counter() - started
    pages, runs = f"{built.page_count:,} pages", f"{built.run_count:,} runs"
    print(f"built {pages} ({runs}) in {elapsed:.1f} s → {args.out}")
    return EXIT_OK


def _serve(args: argparse.Namespace) -> int:
    from sitegen.serve import serve  # watchfiles and http.server only when serving

    return serve(args.content_dir, port=args.port, base_url=None)


def _import_liger(args: argparse.Namespace) -> int:
    from sitegen.importers import liger  # only this command needs the importer

    return liger.main(list(args.csv_files), args.out)


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

    importing = commands.add_parser("import", help="import an upstream benchmark source")
    sources = importing.add_subparsers(dest="source", required=True, metavar="SOURCE")
    liger = sources.add_parser(
        "liger", help="Liger-Kernel benchmark CSVs (FORMAT.md §5–6); replaces OUT_DIR whole"
    )
    liger.add_argument("csv_files", nargs="+", type=Path, metavar="CSV")
    liger.add_argument(
        "--out", type=Path, default=Path("content"), metavar="CONTENT_DIR", help="default: content/"
    )
    liger.set_defaults(handler=_import_liger)

    build = commands.add_parser("build", help="check the content, then write the static site")
    build.add_argument(
        "content_dir", nargs="?", type=Path, default=Path("content"), metavar="CONTENT_DIR"
    )
    build.add_argument(
        "--out", type=Path, default=Path("public"), metavar="OUT_DIR", help="default: public/"
    )
    build.add_argument(
        "--base-url",
        default=None,
        metavar="URL",
        help="where the site is published, e.g. https://kernelindex.dev/ or /sub/ "
        "(default: links from /, absolute URLs under https://kernelindex.dev/)",
    )
    build.set_defaults(handler=_build)

    serve = commands.add_parser(
        "serve", help="build to a temporary directory, serve, rebuild on change"
    )
    serve.add_argument(
        "content_dir", nargs="?", type=Path, default=Path("content"), metavar="CONTENT_DIR"
    )
    serve.add_argument("--port", type=int, default=8000, help="default: 8000 (on 127.0.0.1)")
    serve.set_defaults(handler=_serve)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return int(args.handler(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
