"""The benchmark's providers and the projects they come from: the one provider table, read by
the importer (FORMAT.md §5) and by the site (which project an implementation belongs to)."""

from __future__ import annotations

from dataclasses import dataclass

REPOSITORY = "https://github.com/linkedin/Liger-Kernel"


@dataclass(frozen=True)
class Project:
    title: str
    github: str  # owner/name

    @property
    def repository(self) -> str:
        return f"https://github.com/{self.github}"


PROJECTS = {
    "liger-kernel": Project("Liger-Kernel", "linkedin/Liger-Kernel"),
    "pytorch": Project("PyTorch", "pytorch/pytorch"),
    "transformers": Project("Hugging Face Transformers", "huggingface/transformers"),
    "megatron-lm": Project("NVIDIA Megatron-LM", "NVIDIA/Megatron-LM"),
    "deepspeed": Project("DeepSpeed", "deepspeedai/DeepSpeed"),
}


@dataclass(frozen=True)
class Provider:
    title: str
    project: str  # a key of PROJECTS
    licence: str  # SPDX id, declared (and, for Liger's own code, concluded)
    description: str
    language: str = "python"
    baseline: bool = False
    # How the benchmark calls it, where that alone tells it from another provider of the kernel.
    interface: str | None = None

    @property
    def is_liger(self) -> bool:
        return self.project == "liger-kernel"


def _liger(
    title: str, description: str, language: str = "triton", interface: str | None = None
) -> Provider:
    return Provider(title, "liger-kernel", "BSD-2-Clause", description, language, False, interface)


_CUTILE = "Liger-Kernel's cuTile backend (LIGER_KERNEL_IMPL=cutile)"
PROVIDERS = {
    "liger": _liger("Liger", "Liger-Kernel Triton implementation."),
    "liger_fused_add_rms_norm": _liger(
        "Liger fused", "Liger-Kernel Triton implementation: residual add and RMSNorm in one kernel."
    ),
    "liger_rms_norm": _liger(
        "Liger unfused", "Liger-Kernel Triton RMSNorm, with the residual add as a separate step."
    ),
    # The current fused-linear cross-entropy script runs Liger twice: as is, and accumulating in
    # fp32; only the call tells them apart.
    "liger-fp32-accum": _liger(
        "Liger fp32 accumulation",
        "Liger-Kernel Triton implementation, accumulating in fp32 whatever the input dtype.",
        interface="accum_dtype_float32",  # called with accum_dtype=torch.float32
    ),
    "liger_in_place": _liger(
        "Liger in-place", "Liger-Kernel Triton implementation writing its result in place."
    ),
    "liger_tiled": _liger(
        "Liger tiled",
        "Liger-Kernel tiled MLP: the sequence is processed in shards to bound activation memory.",
    ),
    "liger_triton": _liger(
        "Liger Triton",
        "Liger-Kernel's default Triton backend, the baseline of the cuTile and CuTe DSL runs.",
    ),
    "liger_triton_fused_add_rms_norm": _liger(
        "Liger Triton fused", "Liger-Kernel Triton backend: residual add and RMSNorm in one kernel."
    ),
    "liger_triton_rms_norm": _liger(
        "Liger Triton unfused",
        "Liger-Kernel Triton backend RMSNorm, with the residual add as a separate step.",
    ),
    "liger_cutile": _liger("Liger cuTile", f"{_CUTILE}.", "cutile"),
    "liger_cutile_fused_add_rms_norm": _liger(
        "Liger cuTile fused", f"{_CUTILE}: residual add and RMSNorm in one kernel.", "cutile"
    ),
    "liger_cutile_rms_norm": _liger(
        "Liger cuTile unfused",
        f"{_CUTILE}: RMSNorm, with the residual add as a separate step.",
        "cutile",
    ),
    "liger_cutedsl": _liger(
        "Liger CuTe DSL", "Liger-Kernel's CuTe DSL backend (LIGER_KERNEL_IMPL=cutedsl).", "cute_dsl"
    ),
    "huggingface": Provider(
        "Transformers",
        "transformers",
        "Apache-2.0",
        "Hugging Face Transformers reference implementation (PyTorch eager).",
        baseline=True,
    ),
    "torch": Provider(
        "PyTorch",
        "pytorch",
        "BSD-3-Clause",
        "PyTorch eager reference implementation.",
        baseline=True,
    ),
    "torch_compile": Provider(
        "torch.compile",
        "pytorch",
        "BSD-3-Clause",
        "PyTorch reference implementation compiled with torch.compile.",
    ),
    "megatron": Provider(
        "Megatron", "megatron-lm", "BSD-3-Clause", "NVIDIA Megatron-LM implementation."
    ),
    "megatron-fused": Provider(
        "Megatron fused", "megatron-lm", "BSD-3-Clause", "NVIDIA Megatron-LM fused implementation."
    ),
    "megatron-unfused": Provider(
        "Megatron unfused",
        "megatron-lm",
        "BSD-3-Clause",
        "NVIDIA Megatron-LM unfused implementation.",
        baseline=True,
    ),
    "deepspeed_tiled": Provider(
        "DeepSpeed tiled",
        "deepspeed",
        "Apache-2.0",
        "DeepSpeed tiled MLP: the sequence is processed in shards to bound activation memory.",
    ),
}
