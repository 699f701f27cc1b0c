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
from sitegen.model.text import line_problem

API_VERSION = "kernelindex.dev/v1alpha1"
FRAMEWORK = "torch"
LIBRARIES = ("triton",)  # read whenever installed: the compiler of every Triton kernel
NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,199}$")  # metadata.name (FORMAT.md §1)
MAX_TITLE = 200  # metadata.title, a ShortText
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
    if title is not None and (problem := line_problem(title)):
        raise CaptureError(f"--title {problem}: {_cut(title)!r}")
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
    derived_name = kebab(gpu.name)
    if name is None and not NAME.match(derived_name):
        raise CaptureError(
            f"nvidia-smi: GPU {gpu.index}'s name {_cut(gpu.name)!r} gives no resource name; "
            "hint: pass one with --name"
        )
    derived_title = " · ".join(shown)
    if len(derived_title) > MAX_TITLE:  # a long product name: the facts are in spec anyway
        derived_title = derived_title[: MAX_TITLE - 1] + "…"
    metadata = {
        "name": name or derived_name,
        "title": title or derived_title,
        "description": DESCRIPTION,
    }
    document = {
        "apiVersion": API_VERSION,
        "kind": "ExecutionEnvironment",
        "metadata": metadata,
        "spec": {"hardware": hardware, "software": software},
    }
    _check_printed(document)
    return Capture(document, tuple(notes))


# Where each field of the document comes from, for an error naming it.
_SOURCES = {
    "metadata": "the title",
    "hardware": "nvidia-smi",
    "operatingSystem": "/etc/os-release",
    "kernel": "uname -r",
    "driver": "nvidia-smi",
    "cudaToolkit": "the --python probe",
    "framework": "the --python probe",
    "libraries": "the --python probe",
}


def _check_printed(document: dict[str, Any]) -> None:
    """CaptureError unless every text the document holds is one line of 1 to 200 plain
    characters, as `check` requires (FORMAT.md §1): a tool's odd output fails here, named,
    rather than in the pull request that carries it. Every field read was checked as it was
    read; this is the net for those that are not (the OS release, the kernel)."""
    spec = document["spec"]
    fields: list[tuple[str, str, Any]] = [
        ("metadata", "metadata.title", document["metadata"]["title"])
    ]
    fields += [
        ("hardware", f"spec.hardware.{key}", value) for key, value in spec["hardware"].items()
    ]
    fields += [(key, f"spec.software.{key}", value) for key, value in spec["software"].items()]
    while fields:
        source, path, value = fields.pop()
        if isinstance(value, dict):
            fields += [(source, f"{path}.{key}", item) for key, item in value.items()]
        elif isinstance(value, list):
            fields += [(source, f"{path}[{number}]", item) for number, item in enumerate(value)]
        elif isinstance(value, str) and (problem := line_problem(value)):
            raise CaptureError(
                f"{_SOURCES[source]}: {path} {problem}: {_cut(value)!r}; nothing was printed"
            )


def _cut(text: str) -> str:
    return text if len(text) <= 100 else text[:99] + "…"


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
