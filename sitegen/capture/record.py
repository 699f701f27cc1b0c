"""Running the tools that describe a machine, and keeping what they printed.

A `Record` holds every tool's output as printed, so a capture can be replayed: tests read the
outputs recorded on real machines, and `sitegen environment --record FILE` saves them beside
the environment it prints.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from sitegen.capture import nvidia_smi, python_probe
from sitegen.capture.tools import ToolOutput, run_tool

OS_RELEASE = Path("/etc/os-release")
RECORD_VERSION = 1
PROBE = "<sitegen.capture.python_probe.SCRIPT>"


@dataclass(frozen=True)
class Record:
    nvidia_smi: ToolOutput
    python: ToolOutput
    os_release: str | None  # /etc/os-release as read, None when absent
    kernel: str  # uname -r


def read_record(python: str, packages: list[str]) -> Record:
    """Run nvidia-smi and `python`'s probe for `packages`; read the OS release and kernel."""
    try:
        os_release: str | None = OS_RELEASE.read_text(encoding="utf-8", errors="replace")
    except OSError:
        os_release = None
    return Record(
        nvidia_smi=run_tool(nvidia_smi.command()),
        python=run_tool(python_probe.command(python, packages)),
        os_release=os_release,
        kernel=os.uname().release,
    )


def record_json(record: Record) -> dict[str, Any]:
    data = {"version": RECORD_VERSION, **asdict(record)}
    data["nvidia_smi"]["command"] = list(record.nvidia_smi.command)
    # The probe's source is ours, not the machine's: named rather than repeated.
    data["python"]["command"] = [
        PROBE if part == python_probe.SCRIPT else part for part in record.python.command
    ]
    return data


def record_from_json(data: dict[str, Any]) -> Record:
    """A record saved by `record_json` (our own file: a wrong one fails loudly)."""
    if data.get("version") != RECORD_VERSION:
        raise ValueError(f"not a version {RECORD_VERSION} record")

    def tool(value: dict[str, Any]) -> ToolOutput:
        command = tuple(python_probe.SCRIPT if part == PROBE else part for part in value["command"])
        return ToolOutput(command, value["returncode"], value["stdout"], value["stderr"])

    return Record(
        nvidia_smi=tool(data["nvidia_smi"]),
        python=tool(data["python"]),
        os_release=data["os_release"],
        kernel=data["kernel"],
    )


def write_record(record: Record, path: Path) -> None:
    path.write_text(json.dumps(record_json(record), indent=2) + "\n", encoding="utf-8")
