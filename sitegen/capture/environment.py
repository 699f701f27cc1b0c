"""A record of the machine's tools, as the ExecutionEnvironment resource it describes.

Every field comes from a tool's output; a field no tool reported is left out and said so in a
note, never guessed. The format has no field for the Python version: it is listed among the
libraries as `python`. The libraries are keyed by token: `liger-kernel` is `liger_kernel`.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Any

from sitegen.capture.nvidia_smi import Gpu, read_gpus
from sitegen.capture.python_probe import PythonReading, read_python
from sitegen.capture.record import Record
from sitegen.capture.tools import CaptureError
from sitegen.model.names import kebab

API_VERSION = "kernelindex.dev/v1alpha1"
FRAMEWORK = "torch"
LIBRARIES = ("triton",)  # read whenever installed: the compiler of every Triton kernel
NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,199}$")  # metadata.name (FORMAT.md §1)
DESCRIPTION = (
    "Captured by `sitegen environment` on the machine that measured: the GPU from nvidia-smi, "
    "the software from the Python that ran the benchmark."
)


@dataclass(frozen=True)
class Capture:
    document: dict[str, Any]  # the ExecutionEnvironment, keys in the format's order
    notes: tuple[str, ...]  # what was not recorded, and why


def packages_to_read(libraries: list[str]) -> list[str]:
    """The distributions the probe asks about: the framework, Triton, then those named."""
    return list(dict.fromkeys([FRAMEWORK, *LIBRARIES, *libraries]))


def describe(
    record: Record,
    libraries: list[str],
    gpu_index: int = 0,
    name: str | None = None,
    title: str | None = None,
) -> Capture:
    """The environment of `record`'s machine; `libraries` are the benchmarked packages, each of
    which must be installed. Raises CaptureError."""
    if name is not None and not NAME.match(name):
        raise CaptureError(f"--name {name!r}: not a resource name (a-z, 0-9, '.', '_', '-')")
    notes: list[str] = []
    gpu = _chosen_gpu(read_gpus(record.nvidia_smi), gpu_index, notes)
    python = read_python(record.python)
    hardware: dict[str, Any] = {
        "vendor": "nvidia",
        "product": gpu.name,
        "architecture": _architecture(gpu),
    }
    if gpu.memory_mib is not None:
        hardware["memoryBytes"] = gpu.memory_mib * 2**20
    else:
        notes.append(f"nvidia-smi reports no memory.total for GPU {gpu.index}: not recorded")
    software = _software(record, gpu, python, libraries, notes)
    shown = [gpu.name]
    shown += [f"driver {software['driver']}"] if "driver" in software else []
    shown += [f"CUDA {software['cudaToolkit']}"] if "cudaToolkit" in software else []
    if "framework" in software:
        shown.append(f"{software['framework']['name']} {software['framework']['version']}")
    metadata = {
        "name": name or kebab(gpu.name),
        "title": title or " · ".join(shown),
        "description": DESCRIPTION,
    }
    document = {
        "apiVersion": API_VERSION,
        "kind": "ExecutionEnvironment",
        "metadata": metadata,
        "spec": {"hardware": hardware, "software": software},
    }
    return Capture(document, tuple(notes))


def _chosen_gpu(gpus: list[Gpu], index: int, notes: list[str]) -> Gpu:
    chosen = next((gpu for gpu in gpus if gpu.index == index), None)
    if chosen is None:
        listed = ", ".join(str(gpu.index) for gpu in gpus)
        raise CaptureError(f"--gpu {index}: nvidia-smi lists GPU {listed}")
    if len({gpu.name for gpu in gpus}) > 1:
        notes.append(
            f"{len(gpus)} GPUs of {len({gpu.name for gpu in gpus})} kinds: describing GPU "
            f"{chosen.index} ({chosen.name}); pass --gpu for the one that measured"
        )
    return chosen


def _architecture(gpu: Gpu) -> str:
    if gpu.architecture is None:
        found = gpu.compute_capability or "nothing"
        raise CaptureError(
            f"nvidia-smi reports compute capability {found!r} for GPU {gpu.index}: "
            "the architecture (e.g. sm_90) cannot be read; a driver older than 510 does not "
            "report it"
        )
    return gpu.architecture


def _software(
    record: Record, gpu: Gpu, python: PythonReading, libraries: list[str], notes: list[str]
) -> dict[str, Any]:
    interpreter = record.python.command[0] if record.python.command else "python"
    missing = [name for name in libraries if not python.packages.get(name)]
    if missing:
        raise CaptureError(
            f"--library {', '.join(missing)}: not installed in {interpreter}; "
            "pass the Python that ran the benchmark with --python"
        )
    software: dict[str, Any] = {}
    operating_system = _pretty_name(record.os_release)
    if operating_system:
        software["operatingSystem"] = operating_system
    else:
        notes.append("/etc/os-release names no operating system: not recorded")
    if record.kernel:
        software["kernel"] = record.kernel
    if gpu.driver:
        software["driver"] = gpu.driver
    else:
        notes.append(f"nvidia-smi reports no driver version for GPU {gpu.index}: not recorded")
    framework = python.packages.get(FRAMEWORK)
    if framework and python.torch_cuda:
        software["cudaToolkit"] = python.torch_cuda
    elif framework:
        notes.append(f"{FRAMEWORK} {framework} reports no CUDA build: CUDA not recorded")
    if framework:
        software["framework"] = {"name": FRAMEWORK, "version": framework}
    else:
        notes.append(f"{FRAMEWORK}: not installed in {interpreter}: framework not recorded")
    found = {"python": python.version}
    for library in (*LIBRARIES, *libraries):
        version = python.packages.get(library)
        if version:
            found[library] = version
        else:
            notes.append(f"{library}: not installed in {interpreter}: not recorded")
    software["libraries"] = {
        library_key(library): version for library, version in sorted(found.items())
    }
    return software


def library_key(distribution: str) -> str:
    """A distribution's name as the format keys its map of libraries, a token:
    `liger-kernel` → `liger_kernel`."""
    key = re.sub(r"[^a-z0-9]+", "_", distribution.lower()).strip("_")
    if not re.fullmatch(r"[a-z][a-z0-9_]{0,99}", key):
        raise CaptureError(f"--library {distribution}: no token names it (a letter first)")
    return key


def _pretty_name(os_release: str | None) -> str | None:
    """PRETTY_NAME of os-release(5): shell-quoted, read without a shell."""
    for line in (os_release or "").splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "PRETTY_NAME":
            try:
                words = shlex.split(value)
            except ValueError:
                return None
            return " ".join(words)[:200] or None
    return None
