"""The GPUs upstream's CSVs name, and the hardware each stands for (FORMAT.md §5); for any
other `gpu_name`, the hardware its name tells (a machine described by `--environment` needs
neither)."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Gpu:
    product: str
    architecture: str
    form_factor: str | None = None
    vendor: str = "nvidia"


GPUS = {
    "NVIDIA A100-SXM4-80GB": Gpu("NVIDIA A100", "sm_80", "SXM4-80GB"),
    "NVIDIA H100 80GB HBM3": Gpu("NVIDIA H100", "sm_90", "80GB HBM3"),
    "NVIDIA H100 PCIe": Gpu("NVIDIA H100", "sm_90", "PCIe"),
    # Hosts of the history (gh-pages benchmarks/). Its H200 is left to the name (a warning
    # says its hardware is derived): the table is what upstream's main CSV names.
    "NVIDIA H100 NVL": Gpu("NVIDIA H100", "sm_90", "NVL"),
    "NVIDIA A100-SXM4-40GB": Gpu("NVIDIA A100", "sm_80", "SXM4-40GB"),
    "NVIDIA B200": Gpu("NVIDIA B200", "sm_100"),
    "NVIDIA GeForce RTX 3090": Gpu("NVIDIA GeForce RTX 3090", "sm_86"),
    "NVIDIA GeForce RTX 4090": Gpu("NVIDIA GeForce RTX 4090", "sm_89"),
}

UNKNOWN = "unknown"  # an architecture or vendor the name does not tell
# Architecture by product family, as `torch.cuda.get_device_name()` spells products.
FAMILIES = (
    (re.compile(r"\b(V100)\b"), "sm_70"),
    (re.compile(r"\b(T4|RTX 20[0-9]0)\b"), "sm_75"),
    (re.compile(r"\b(A100|A800|A30)\b"), "sm_80"),
    (re.compile(r"\b(A10G?|A40|RTX 30[0-9]0|RTX A[0-9]000)\b"), "sm_86"),
    (re.compile(r"\b(L4|L40S?|RTX 40[0-9]0)\b"), "sm_89"),
    (re.compile(r"\b(H100|H200|H800|H20|GH200)\b"), "sm_90"),
    (re.compile(r"\b(B100|B200|GB200)\b"), "sm_100"),
    (re.compile(r"\b(RTX 50[0-9]0)\b"), "sm_120"),
    (re.compile(r"\b(MI250X?)\b"), "gfx90a"),
    (re.compile(r"\b(MI300[AX]?)\b"), "gfx942"),
)
VENDORS = {"NVIDIA": "nvidia", "AMD": "amd", "Intel": "intel"}


def gpu_of(gpu_name: str) -> tuple[Gpu, bool]:
    """The hardware `gpu_name` stands for, and whether upstream's table knows it (if not, it is
    derived from the name alone: the product verbatim, the architecture by family)."""
    known = GPUS.get(gpu_name)
    if known is not None:
        return known, True
    architecture = next((arch for pattern, arch in FAMILIES if pattern.search(gpu_name)), UNKNOWN)
    vendor = VENDORS.get(gpu_name.split(" ", 1)[0], UNKNOWN)
    return Gpu(gpu_name, architecture, vendor=vendor), False
