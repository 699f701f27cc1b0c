"""`sitegen build [CONTENT_DIR] [--out OUT_DIR] …`: check, then write the static site."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sitegen.cli.arguments import content_directory
from sitegen.cli.exit_codes import EXIT_CONTENT, EXIT_OK
from sitegen.model.problems import format_report, printable
from sitegen.model.wording import counted
from sitegen.progress import Progress
from sitegen.publish.deploy import CONTEXTS, Deployment, deployment_from

if TYPE_CHECKING:
    from sitegen.publish.incremental import State


def add_to(commands: Any) -> None:
    parser = commands.add_parser("build", help="check the content, then write the static site")
    parser.add_argument(
        "content_dir", nargs="?", type=Path, default=Path("content"), metavar="CONTENT_DIR"
    )
    parser.add_argument(
        "--out", type=Path, default=Path("public"), metavar="OUT_DIR", help="default: public/"
    )
    parser.add_argument(
        "--base-url",
        default=None,
        metavar="URL",
        help="where the site is published, e.g. https://kernelindex.dev/ or /sub/ "
        "(default: links from /, absolute URLs under https://kernelindex.dev/)",
    )
    parser.add_argument(
        "--incremental",
        action="store_true",
        help="keep a cache (in ~/.cache/sitegen) and redo only what changed since the last "
        "--incremental build (same bytes as a full build; docs/performance.md)",
    )
    parser.add_argument(
        "--daemon",
        action="store_true",
        help="an --incremental build whose state a background process keeps in memory for "
        "the next --incremental build of this content into this output, which it runs (it "
        "ends after 30 minutes without one; docs/performance.md)",
    )
    parser.add_argument(
        "--stop-daemon",
        action="store_true",
        help="build nothing: stop the build daemon of this content and output, which keeps "
        "its state on disk for the next --incremental build",
    )
    parser.add_argument(
        "--wait", action="store_true", help="wait for another build writing OUT_DIR to finish"
    )
    parser.add_argument(
        "--no-search",
        dest="search",
        action="store_false",
        help="make no search index (one is made where Pagefind is installed: "
        "pip install 'sitegen[search]')",
    )
    parser.add_argument(
        "--regression-threshold",
        type=_threshold,
        default=None,
        metavar="FACTOR",
        help="the factor a step in a series' history must reach to be reported as a "
        "regression or improvement (default 1.10: 10%%; docs/site.md)",
    )
    deploy = parser.add_argument_group(
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
    parser.set_defaults(handler=run, interrupted=interrupted)


def run(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    held: State | None = getattr(args, "held_state", None)  # set by the build daemon
    if args.stop_daemon and held is None:  # its folders need not exist any more
        from sitegen.cli.daemon import stop_daemon

        print(printable(stop_daemon(args.out, args.content_dir)))
        return EXIT_OK
    content = content_directory(args.content_dir, "build")
    if held is None and (args.incremental or args.daemon):
        # Run by the daemon of this output and content, where there is one (or --daemon).
        from sitegen.cli.daemon import build_by_daemon

        answer = build_by_daemon(args)
        if answer is not None:
            return answer
    # Only when building here: every command's module is imported to parse any command, and a
    # command the daemon runs would wait ~0.4 s for the pipeline's modules (pydantic's models).
    from sitegen.pipeline import build_site
    from sitegen.site.format import build_date_from_epoch

    deployment = _deployment(args)
    baseline = None
    if deployment.compares:
        # git and urllib (ssl) only when comparing
        from sitegen.publish.baseline import preview_baseline

        baseline = preview_baseline(deployment, content)
        for note in baseline.notes:
            print(printable(f"warning: base: {note}"), file=sys.stderr)
        if baseline.manifest is None:
            print("warning: the changes page says the base could not be read", file=sys.stderr)
        else:
            print(printable(f"changes compared with {baseline.label}"), file=sys.stderr)
    # Read where the build reads it: the analysis loads only when a build runs.
    threshold = (
        {}
        if args.regression_threshold is None
        else {"regression_threshold": args.regression_threshold}
    )
    built = build_site(
        content,
        args.out,
        build_date=build_date_from_epoch(os.environ.get("SOURCE_DATE_EPOCH")),
        progress=TerminalProgress() if sys.stderr.isatty() else LogProgress(),
        deployment=deployment,
        baseline=baseline,
        incremental=args.incremental or args.daemon,
        state=held,
        # What the daemon's file watcher saw change since its last build (None: walk it all).
        changed=getattr(args, "held_changed", None),
        wait=args.wait,
        search=args.search,
        **threshold,
    )
    checked = built.checked
    if built.out_dir is None:
        print(format_report(checked.problems, checked.resource_count, checked.file_count))
        print("build failed: nothing was written", file=sys.stderr)
        return EXIT_CONTENT
    for problem in checked.problems:  # warnings only: errors stop the build above
        print(problem.line(), file=sys.stderr)
    for warning in built.warnings:
        print(printable(f"warning: {warning}"), file=sys.stderr)
    elapsed = time.perf_counter() - started
    pages, runs = counted(built.page_count, "page"), counted(built.run_count, "run")
    index = built.search
    indexed = ""
    if index is not None:  # its time apart: indexing is a stage of its own
        size = f"{counted(index.pages, 'page')}, {index.size / 2**20:.1f} MiB"
        indexed = f", of which the search index {index.seconds:.1f} s ({size})"
    print(printable(f"built {pages} ({runs}) in {elapsed:.1f} s{indexed} → {args.out}"))
    if not deployment.production:
        print(f"{deployment.context}: noindex, with a preview banner", file=sys.stderr)
    if held is not None:
        from sitegen.cli.daemon import IDLE_S

        print(
            f"run by the build daemon (process {os.getpid()}), which keeps the state for the "
            f"next --incremental build for {IDLE_S // 60} minutes (--stop-daemon ends it)",
            file=sys.stderr,
        )
    return EXIT_OK


def interrupted(interrupt: KeyboardInterrupt) -> str:
    """What an interrupted build left: the staging tree is removed on the way out (write.py)."""
    from sitegen.publish.write import InterruptedAfterSwap  # ~11 ms a command: not to parse

    if isinstance(interrupt, InterruptedAfterSwap):
        return "the new site is in place; the next build removes what is left of the old one"
    return "the previous site is intact"


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


class TerminalProgress(Progress):
    """On a terminal: the page count, redrawn in place."""

    def pages(self, done: int, total: int) -> None:
        if done % 100 == 0 or done == total:
            end = "\n" if done == total else ""
            print(f"\rrendering pages {done:,}/{total:,}", end=end, file=sys.stderr, flush=True)


class LogProgress(Progress):
    """Into a log (Netlify's, CI's): a line per stage with its time, and one every 5,000
    pages while a big site renders."""

    def stage(self, name: str, seconds: float) -> None:
        print(f"{name}: {seconds:.2f} s", file=sys.stderr, flush=True)

    def pages(self, done: int, total: int) -> None:
        if done % 5000 == 0:
            print(f"rendering pages {done:,}/{total:,}", file=sys.stderr, flush=True)


def _threshold(text: str) -> float:
    """`--regression-threshold`: a finite factor above 1 (argparse reports anything else)."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 1 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"a factor above 1, such as 1.1, not {text!r}")
    return value
