"""`sitegen serve [CONTENT_DIR] [--host H] [--port N]`: build, serve, rebuild on change, and
reload the browser after each rebuild."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from sitegen.cli.arguments import content_directory


def add_to(commands: Any) -> None:
    parser = commands.add_parser(
        "serve",
        help="build to a temporary directory, serve, rebuild on change, reload the browser",
    )
    parser.add_argument(
        "content_dir", nargs="?", type=Path, default=Path("content"), metavar="CONTENT_DIR"
    )
    parser.add_argument(
        "--host",
        "--bind",
        type=host_address,
        default="127.0.0.1",
        metavar="HOST",
        help="the address to listen on (default: 127.0.0.1; 0.0.0.0 or :: for every one)",
    )
    parser.add_argument(
        "--port", type=port_number, default=8000, help="default: 8000 (0: any free one)"
    )
    parser.set_defaults(handler=run)


def host_address(text: str) -> str:
    """An address to listen on, not empty: an empty one would listen on every address, which
    only 0.0.0.0 or :: should say."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an address to listen on, e.g. 127.0.0.1; not empty")
    return text


def port_number(text: str) -> int:
    """A TCP port, 0 to 65535: argparse's usage error (exit 2) for anything else."""
    if not (text.isascii() and text.isdigit() and int(text) <= MAX_PORT):
        raise argparse.ArgumentTypeError(f"a port is a number from 0 to {MAX_PORT}: {text!r}")
    return int(text)


MAX_PORT = 65535


def run(args: argparse.Namespace) -> int:
    from sitegen.serve.server import serve  # watchfiles and http.server only when serving

    content = content_directory(args.content_dir, "serve")
    return serve(content, host=args.host, port=args.port, base_url=None)
