"""`sitegen serve [CONTENT_DIR] [--port N]`: build, serve on 127.0.0.1, rebuild on change."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_to(commands: Any) -> None:
    parser = commands.add_parser(
        "serve", help="build to a temporary directory, serve, rebuild on change"
    )
    parser.add_argument(
        "content_dir", nargs="?", type=Path, default=Path("content"), metavar="CONTENT_DIR"
    )
    parser.add_argument("--port", type=int, default=8000, help="default: 8000 (on 127.0.0.1)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from sitegen.serve.server import serve  # watchfiles and http.server only when serving

    return serve(args.content_dir, port=args.port, base_url=None)
