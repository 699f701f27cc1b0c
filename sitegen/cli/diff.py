"""`sitegen diff BASE [HEAD]`: what HEAD adds, removes, modifies or moves compared with BASE."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from sitegen.cli.exit_codes import EXIT_OK


def add_to(commands: Any) -> None:
    parser = commands.add_parser(
        "diff",
        help="what HEAD adds, removes, modifies or moves compared with BASE (for CI comments)",
        description="BASE and HEAD are each a git ref (its content tree, read with git archive), "
        "a content directory, a built site or manifest.json, or an http(s) URL of one.",
    )
    parser.add_argument("base", metavar="BASE")
    parser.add_argument(
        "head", nargs="?", default="content", metavar="HEAD", help="default: content/"
    )
    parser.add_argument("--format", choices=("markdown", "json"), default="markdown")
    parser.add_argument(
        "--content-path",
        default="content",
        metavar="PATH",
        help="the content tree inside the repository, for git refs (default: content)",
    )
    parser.add_argument(
        "--base-url", metavar="URL", help="where a site built from content is published"
    )
    parser.add_argument(
        "--head-url", metavar="URL", help="link HEAD's pages under this URL (a deploy preview)"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from sitegen.publish.baseline import read_manifest
    from sitegen.publish.compare import changes_document, compare, format_markdown
    from sitegen.site.urls import UrlError, parse_base_url

    head_url = None
    if args.head_url is not None:  # the base of links in a comment: held as --base-url is
        if not args.head_url.startswith(("https://", "http://")):
            raise UrlError(f"--head-url must be an http(s) URL: {args.head_url!r}")
        head_url = parse_base_url(args.head_url, "--head-url")[1]

    sides = [
        read_manifest(spec, cwd=Path.cwd(), content_path=args.content_path, base_url=args.base_url)
        for spec in (args.base, args.head)
    ]  # a BaseError is the guard's to tell: exit_codes.py says which are the content's
    (base, base_label), (head, head_label) = sides
    changes = compare(base, head, base_label, head_label)
    if args.format == "json":
        print(json.dumps(changes_document(changes), ensure_ascii=False, indent=2))
    else:
        print(format_markdown(changes, head_url), end="")
    return EXIT_OK
