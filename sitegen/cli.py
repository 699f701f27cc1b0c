"""Command line: `sitegen check | digest | import | build | serve | diff`."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from sitegen.build import build_site, check_content
from sitegen.deploy import CONTEXTS, DeployError, Deployment, deployment_from
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


def _deployment(args: argparse.Namespace) -> Deployment:
    """Netlify's environment, each variable overridden by its option (docs/deploy.md)."""
    return deployment_from(
        os.environ,
        context=args.context,
        base_url=args.base_url,
        deploy_url=args.deploy_url,
        review_id=args.review_id,
        branch=args.branch,
        commit=args.commit,
        compare_with=args.compare_with,
        base_branch=args.base_branch,
    )


def _build(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    try:
        deployment = _deployment(args)
    except DeployError as error:
        print(f"sitegen build: {error}", file=sys.stderr)
        return EXIT_USAGE
    baseline = None
    if deployment.compares:
        # git and urllib (ssl: ~30 ms) only when comparing
        from sitegen.baseline import preview_baseline

        baseline = preview_baseline(deployment, args.content_dir)
        for note in baseline.notes:
            print(f"warning: base: {note}", file=sys.stderr)
        if baseline.manifest is None:
            print("warning: the changes page says the base could not be read", file=sys.stderr)
        else:
            print(f"changes compared with {baseline.label}", file=sys.stderr)
    try:
        built = build_site(
            args.content_dir,
            args.out,
            build_date=build_date_from_epoch(os.environ.get("SOURCE_DATE_EPOCH")),
            progress=_progress(),
            deployment=deployment,
            baseline=baseline,
            incremental=args.incremental,
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
    if not deployment.production:
        print(f"{deployment.context}: noindex, with a preview banner", file=sys.stderr)
    return EXIT_OK


def _diff(args: argparse.Namespace) -> int:
    from sitegen.baseline import BaseContentError, BaseError, read_manifest
    from sitegen.changes import changes_document, compare, format_markdown

    sides = []
    for spec in (args.base, args.head):
        try:
            sides.append(
                read_manifest(
                    spec, cwd=Path.cwd(), content_path=args.content_path, base_url=args.base_url
                )
            )
        except BaseError as error:
            print(f"sitegen diff: {error}", file=sys.stderr)
            return EXIT_CONTENT if isinstance(error, BaseContentError) else EXIT_USAGE
    (base, base_label), (head, head_label) = sides
    changes = compare(base, head, base_label, head_label)
    if args.format == "json":
        print(json.dumps(changes_document(changes), ensure_ascii=False, indent=2))
    else:
        print(format_markdown(changes, args.head_url), end="")
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
    build.add_argument(
        "--incremental",
        action="store_true",
        help="keep a cache beside OUT_DIR and redo only what changed since the last "
        "--incremental build (same bytes as a full build; docs/performance.md)",
    )
    deploy = build.add_argument_group(
        "deploy", "each defaults to Netlify's environment variable in brackets (docs/deploy.md)"
    )
    deploy.add_argument(
        "--context", choices=CONTEXTS, help="production, deploy-preview, … [CONTEXT]"
    )
    deploy.add_argument(
        "--deploy-url", metavar="URL", help="where this deploy is served [DEPLOY_PRIME_URL]"
    )
    deploy.add_argument("--review-id", metavar="N", help="the pull request number [REVIEW_ID]")
    deploy.add_argument("--branch", metavar="NAME", help="the branch built [HEAD, then BRANCH]")
    deploy.add_argument("--commit", metavar="SHA", help="the commit built [COMMIT_REF]")
    deploy.add_argument(
        "--compare-with",
        metavar="BASE",
        help="what the changes page compares with: git ref, content dir, manifest path or URL "
        "[SITEGEN_COMPARE_WITH; previews default to the base branch, then production]",
    )
    deploy.add_argument(
        "--base-branch",
        metavar="NAME",
        help="the branch a preview is compared with [SITEGEN_BASE_BRANCH, default main]",
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

    diff = commands.add_parser(
        "diff",
        help="what HEAD adds, removes, modifies or moves compared with BASE (for CI comments)",
        description="BASE and HEAD are each a git ref (its content tree, read with git archive), "
        "a content directory, a built site or manifest.json, or an http(s) URL of one.",
    )
    diff.add_argument("base", metavar="BASE")
    diff.add_argument(
        "head", nargs="?", default="content", metavar="HEAD", help="default: content/"
    )
    diff.add_argument("--format", choices=("markdown", "json"), default="markdown")
    diff.add_argument(
        "--content-path",
        default="content",
        metavar="PATH",
        help="the content tree inside the repository, for git refs (default: content)",
    )
    diff.add_argument(
        "--base-url", metavar="URL", help="where a site built from content is published"
    )
    diff.add_argument(
        "--head-url", metavar="URL", help="link HEAD's pages under this URL (a deploy preview)"
    )
    diff.set_defaults(handler=_diff)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return int(args.handler(args))


def run() -> None:
    """The `sitegen` command: `main`, then exit without the interpreter's teardown.

    A normal exit collects garbage once more and tears down every module with what its caches
    hold (templates, rendered fact lists, labels), after the output is complete: 40–70 ms of
    the real catalog's build. As mypy does, the output streams are flushed and the process
    ends with `os._exit`. `main` itself returns normally (tests call it in-process).
    """
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    run()
