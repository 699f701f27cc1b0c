"""The benchmark's Python: its version, the packages asked about, and torch's CUDA build.

The probe runs in the Python that ran the benchmark (`--python`), which need not be sitegen's
own: it prints one JSON object, read here as data.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sitegen.capture.tools import CANNOT_RUN, CaptureError, ToolOutput
from sitegen.model.text import line_problem

PYTHON_HINT = "pass the Python that ran the benchmark, e.g. --python .venv/bin/python"

# Run as `python -c SCRIPT NAME...`; standard library only, and torch only if it is installed.
SCRIPT = """\
import json, platform, sys
from importlib import metadata
packages = {}
for name in sys.argv[1:]:
    try:
        packages[name] = metadata.version(name)
    except metadata.PackageNotFoundError:
        packages[name] = None
cuda = None
if packages.get("torch"):
    try:
        import torch
        cuda = torch.version.cuda
    except Exception:
        cuda = None
print(json.dumps({"python": platform.python_version(), "packages": packages, "torchCuda": cuda}))
"""


@dataclass(frozen=True)
class PythonReading:
    version: str
    packages: dict[str, str | None]  # name → installed version, None when not installed
    torch_cuda: str | None  # torch.version.cuda: the CUDA toolkit torch was built with


def command(python: str, packages: list[str]) -> list[str]:
    return [python, "-c", SCRIPT, *packages]


def read_python(output: ToolOutput) -> PythonReading:
    python = output.command[0] if output.command else "python"
    if output.returncode is None and not output.stderr:
        raise CaptureError(f"--python {python}: not found; hint: {PYTHON_HINT}")
    if output.returncode is None and output.stderr.startswith(CANNOT_RUN):
        raise CaptureError(f"--python {python}: {output.stderr}; hint: {PYTHON_HINT}")
    if output.returncode != 0:
        status = "did not finish" if output.returncode is None else f"exit {output.returncode}"
        raise CaptureError(f"--python {python}: the probe failed ({status}): {output.said()}")
    lines = output.stdout.strip().splitlines()
    try:
        data: Any = json.loads(lines[-1]) if lines else None
    except (ValueError, RecursionError):  # not JSON, or nested past Python's recursion limit
        data = None
    if not _is_reading(data):
        raise CaptureError(f"--python {python}: unexpected probe output: {output.said()}")
    versions = [("Python's version", data["python"]), ("torch's CUDA", data["torchCuda"])]
    versions += [(f"{name}'s version", version) for name, version in data["packages"].items()]
    for what, version in versions:
        problem = line_problem(version) if version is not None else None
        if problem:
            shown = version if len(version) <= 100 else version[:99] + "…"
            raise CaptureError(
                f"--python {python}: the probe reports {what} that {problem}: {shown!r}"
            )
    return PythonReading(data["python"], dict(data["packages"]), data["torchCuda"])


def _is_reading(data: Any) -> bool:
    return (
        isinstance(data, dict)
        and isinstance(data.get("python"), str)
        and isinstance(data.get("packages"), dict)
        and all(isinstance(v, str | None) for v in data["packages"].values())
        and isinstance(data.get("torchCuda"), str | None)
    )
