"""The GPUs as nvidia-smi lists them: product name, memory, driver and compute capability."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass

from sitegen.capture.tools import CaptureError, ToolOutput
from sitegen.model.text import line_problem

FIELDS = ("index", "name", "memory.total", "driver_version", "compute_cap")
# What nvidia-smi prints for a field a GPU or driver does not report.
NOT_REPORTED = frozenset({"[N/A]", "N/A", "[Not Supported]", "Not Supported", ""})
_CAPABILITY = re.compile(r"^([0-9]{1,2})\.([0-9])$")
MAX_MEMORY_MIB = (2**53 - 1) // 2**20  # memoryBytes is an exact JSON integer


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


def _gpu(fields: list[str]) -> Gpu:
    """One line of nvidia-smi's answer, each field held to the format's rules (FORMAT.md §1):
    what `sitegen environment` prints must check."""
    values = [value.strip() for value in fields]
    if len(values) != len(FIELDS) or not _ascii_number(values[0]):
        raise CaptureError(f"nvidia-smi: unexpected line {_cut(', '.join(values))!r}")
    index, name, memory, driver, capability = (
        None if value in NOT_REPORTED else value for value in values
    )
    if not name:
        raise CaptureError(f"nvidia-smi: GPU {index} has no product name")
    for field, value in (("name", name), ("driver_version", driver)):
        problem = line_problem(value) if value is not None else None
        if problem:
            raise CaptureError(
                f"nvidia-smi: GPU {index}'s {field} {problem}: {_cut(value or '')!r}"
            )
    if memory is not None and not _ascii_number(memory):
        raise CaptureError(
            f"nvidia-smi: GPU {index}'s memory.total is not a number of MiB: {_cut(memory)!r}"
        )
    if memory is not None and not 0 < int(memory) <= MAX_MEMORY_MIB:
        raise CaptureError(
            f"nvidia-smi: GPU {index}'s memory.total of {_cut(memory)} MiB is out of range "
            f"(1 to {MAX_MEMORY_MIB:,} MiB: 2^53 bytes)"
        )
    return Gpu(
        index=int(values[0]),
        name=name,
        memory_mib=int(memory) if memory is not None else None,
        driver=driver,
        compute_capability=capability,
    )


def _ascii_number(text: str) -> bool:
    """ASCII digits only, at most 100 (int() of thousands is slow, then refused): `²` and `٣`
    are digits to str.isdigit, not to int()."""
    return text.isascii() and text.isdigit() and len(text) <= 100


def _cut(text: str) -> str:
    return text if len(text) <= 100 else text[:99] + "…"


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
    try:
        lines = (line for line in output.stdout.splitlines() if line.strip())
        gpus = [_gpu(fields) for fields in csv.reader(lines)]
    except csv.Error as error:  # a field over csv's limit of 131,072 characters, say
        raise CaptureError(f"nvidia-smi: output that is not CSV: {error}") from None
    if not gpus:
        raise CaptureError("nvidia-smi listed no GPU")
    return gpus
