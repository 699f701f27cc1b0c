"""The GPUs upstream's CSVs name, and the hardware each stands for (FORMAT.md §5)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Gpu:
    product: str
    architecture: str
    form_factor: str | None = None


GPUS = {
    "NVIDIA A100-SXM4-80GB": Gpu("NVIDIA A100", "sm_80", "SXM4-80GB"),
    "NVIDIA H100 80GB HBM3": Gpu("NVIDIA H100", "sm_90", "80GB HBM3"),
    "NVIDIA H100 PCIe": Gpu("NVIDIA H100", "sm_90", "PCIe"),
    "NVIDIA B200": Gpu("NVIDIA B200", "sm_100"),
    "NVIDIA GeForce RTX 3090": Gpu("NVIDIA GeForce RTX 3090", "sm_86"),
    "NVIDIA GeForce RTX 4090": Gpu("NVIDIA GeForce RTX 4090", "sm_89"),
}
