"""`sitegen environment [--library NAME]...`: print the ExecutionEnvironment of this machine.

Run on the machine that measured; it reads nvidia-smi and the benchmark's Python, imports
nothing beyond the standard library, and prints the resource as JSON on stdout (notes on what
was not recorded go to stderr).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from sitegen.cli.exit_codes import EXIT_OK, EXIT_USAGE
from sitegen.model.problems import printable


def add_to(commands: Any) -> None:
    parser = commands.add_parser(
        "environment",
        help="print this machine's ExecutionEnvironment (GPU, driver, CUDA, packages) as JSON",
        description="Run on the machine that measured. The GPU comes from nvidia-smi; the "
        "software from the Python that ran the benchmark: torch, its CUDA build, triton, "
        "Python itself and each --library. Nothing a tool does not report is written.",
    )
    parser.add_argument(
        "--library",
        action="append",
        default=[],
        metavar="NAME",
        help="a benchmarked Python distribution to record (repeatable), e.g. the library whose "
        "kernels were measured; an error if it is not installed",
    )
    parser.add_argument(
        "--python",
        default=sys.executable,
        metavar="PYTHON",
        help="the Python that ran the benchmark (default: this one)",
    )
    parser.add_argument(
        "--gpu", type=int, default=0, metavar="INDEX", help="nvidia-smi's GPU index (default: 0)"
    )
    parser.add_argument(
        "--name", metavar="NAME", help="metadata.name (default: the GPU's name, kebab-cased)"
    )
    parser.add_argument("--title", metavar="TITLE", help="metadata.title (default: from facts)")
    parser.add_argument(
        "--record",
        type=Path,
        metavar="FILE",
        help="also save every tool's raw output here (JSON), to attach to a pull request",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    # Only when run: every command's module is imported to parse any command (~17 ms of a
    # `sitegen build` sent to the build daemon, which waits for it).
    from sitegen.capture.environment import describe, packages_to_read
    from sitegen.capture.record import read_record, write_record
    from sitegen.capture.tools import CaptureError

    record = read_record(args.python, packages_to_read(args.library))
    if args.record is not None:
        try:
            write_record(record, args.record)
        except OSError as error:
            message = f"sitegen environment: --record {args.record}: {error}"
            print(printable(message), file=sys.stderr)
            return EXIT_USAGE
    try:
        capture = describe(record, args.library, args.gpu, args.name, args.title)
    except CaptureError as error:
        print(printable(f"sitegen environment: {error}"), file=sys.stderr)
        return EXIT_USAGE
    for note in capture.notes:
        print(printable(f"note: {note}"), file=sys.stderr)
    print(json.dumps(capture.document, indent=2, ensure_ascii=False))
    return EXIT_OK
