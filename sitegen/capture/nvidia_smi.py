"""The GPUs as nvidia-smi lists them: product name, memory, driver and compute capability."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass

from sitegen.capture.tools import CaptureError, ToolOutput

FIELDS = ("index", "name", "memory.total", "driver_version", "compute_cap")
# What nvidia-smi prints for a field a GPU or driver does not report.
NOT_REPORTED = frozenset({"[N/A]", "N/A", "[Not Supported]", "Not Supported", ""})
_CAPABILITY = re.compile(r"^(\d+)\.(\d)$")


@dataclass(frozen=True)
class Gpu:
    index: int
    name: str
    memory_mib: int | None  # memory.total, in MiB with `nounits`
    driver: str | None
    compute_capability: str | None  # `9.0`

    @property
    def architecture(self) -> str | None:
        """`sm_90` for compute capability 9.0, as the format spells architectures."""
        match = _CAPABILITY.match(self.compute_capability or "")
        return f"sm_{match.group(1)}{match.group(2)}" if match else None


def command() -> list[str]:
    return ["nvidia-smi", f"--query-gpu={','.join(FIELDS)}", "--format=csv,noheader,nounits"]


def read_gpus(output: ToolOutput) -> list[Gpu]:
    """Every GPU in nvidia-smi's answer; CaptureError when there is none to describe."""
    if output.returncode is None and not output.stderr:
        raise CaptureError(
            "nvidia-smi: not found on PATH, so this machine has no NVIDIA driver to describe; "
            "run sitegen environment on the machine that measured"
        )
    if output.returncode != 0:
        status = "did not finish" if output.returncode is None else f"exit {output.returncode}"
        raise CaptureError(f"nvidia-smi failed ({status}): {output.said()}")
    gpus = []
    for fields in csv.reader(line for line in output.stdout.splitlines() if line.strip()):
        values = [value.strip() for value in fields]
        if len(values) != len(FIELDS) or not values[0].isdigit():
            raise CaptureError(f"nvidia-smi: unexpected line {', '.join(values)!r}")
        index, name, memory, driver, capability = (
            None if value in NOT_REPORTED else value for value in values
        )
        if not name:
            raise CaptureError(f"nvidia-smi: GPU {index} has no product name")
        gpus.append(
            Gpu(
                index=int(values[0]),
                name=name,
                memory_mib=int(memory) if memory and memory.isdigit() else None,
                driver=driver,
                compute_capability=capability,
            )
        )
    if not gpus:
        raise CaptureError("nvidia-smi listed no GPU")
    return gpus
