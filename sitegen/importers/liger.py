"""Import Liger-Kernel's benchmark CSVs into a content tree (FORMAT.md §5–6, docs/liger-import.md).

`import_rows` reads and binds every row in memory; `main` writes the result. Each row is imported
as one BenchmarkRun (with the resources it points at) or skipped with a named reason; a malformed
file (missing columns, ragged rows, non-numeric values, bad config JSON, an unknown GPU …) stops the
import before anything is written.
"""

from __future__ import annotations

import ast
import csv
import json
import math
import operator
import re
import shutil
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from importlib import resources as package_files
from pathlib import Path
from typing import Any

from sitegen.digest import API_VERSION, digest
from sitegen.kernels import kebab  # FORMAT §5's kebab, one definition for site and importer
from sitegen.problems import Problem

Json = dict[str, Any]

# --- upstream facts ------------------------------------------------------------------------------

REPOSITORY = "https://github.com/linkedin/Liger-Kernel"
SNAPSHOT_COMMIT = "ead96b618e5c67bddc6a6e9bcb99bfe6b5ab661c"
# The last upstream commit touching each CSV (shared/data/liger/README.md).
FILE_COMMITS = {
    "all_benchmark_data.csv": "2120862ba532c9449e72d603ba6324310ae756e7",
    "all_benchmark_data_cutile.csv": "7a12e092579dba20fa02388bf80a2c39cbc9010a",
    "all_benchmark_data_cutedsl.csv": "4d899a0bdcd1b2b79241fd611e99c3fb1a6b1297",
}
MAIN_FILE = "all_benchmark_data.csv"
LICENCE = {"spdx": "BSD-2-Clause", "copyright": "Copyright 2024 LinkedIn Corporation"}
REPORT_PATH = "_sources/liger-kernel.json"  # `_` folders are data for the site, not resources

COLUMNS = (
    "kernel_name",
    "kernel_provider",
    "kernel_operation_mode",
    "metric_name",
    "metric_unit",
    "x_name",
    "x_label",
    "x_value",
    "y_value_50",
    "y_value_20",
    "y_value_80",
    "extra_benchmark_config_str",
    "gpu_name",
    "timestamp",
    "liger_version",
)
Y_COLUMNS = ("y_value_50", "y_value_20", "y_value_80")  # median, p20, p80: do_bench's quantiles
METRICS = {("speed", "ms"): "latency", ("memory", "MB"): "peak_memory"}

# What each pass times, in the words of the protocol notes.
PASSES = {
    "forward": "the module forward pass",
    "backward": "the backward pass of the module output given a random upstream gradient",
    "full": "the forward pass plus the backward pass",
    "no-grad-forward": "the module forward pass under torch.no_grad()",
}

DTYPES = {"torch.float32": "fp32", "torch.bfloat16": "bf16", "torch.float16": "fp16"}


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

    @property
    def is_liger(self) -> bool:
        return self.project == "liger-kernel"


def _liger(title: str, description: str, language: str = "triton") -> Provider:
    return Provider(title, "liger-kernel", "BSD-2-Clause", description, language)


_CUTILE = "Liger-Kernel's cuTile backend (LIGER_KERNEL_IMPL=cutile)"
PROVIDERS = {
    "liger": _liger("Liger", "Liger-Kernel Triton implementation."),
    "liger_fused_add_rms_norm": _liger(
        "Liger fused", "Liger-Kernel Triton implementation: residual add and RMSNorm in one kernel."
    ),
    "liger_rms_norm": _liger(
        "Liger unfused", "Liger-Kernel Triton RMSNorm, with the residual add as a separate step."
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

# Model-config sweeps name a model in x_value; the harness's MODEL_REGISTRY gives its shapes
# (benchmark/scripts/benchmark_model_configs.py). Only what a binding reads is kept.
MODELS: dict[str, dict[str, int]] = {
    "llama_2_7b": {"vocab_size": 32000},
    "llama_3_8b": {"vocab_size": 128256},
    "qwen2.5_7b": {"vocab_size": 152064},
    "qwen2.5_14b": {"vocab_size": 152064},
    "qwen2.5_72b": {"vocab_size": 152064},
    "deepseek_v2_lite": {"vocab_size": 102400},
    "deepseek_v3": {"vocab_size": 129280},
}

# --- the binding table (FORMAT.md §6, extended for the backend CSVs) ------------------------------


@dataclass(frozen=True)
class Scalar:
    """A workload scalar: read from a config key, or a constant the config does not carry."""

    name: str
    key: str | None = None
    value: float | None = None
    positive: bool = False  # FORMAT §6 "finite > 0, required"


@dataclass(frozen=True)
class KernelBinding:
    """How rows of one kernel bind to an OperationSpec.

    `sweeps` maps each allowed x_name to its axes, in binding order, each read from a *source*:
    `x` (x_value as a positive integer), a config key, `a|b` (the first key present), `a*b`
    (a product), `x/key` (an exact quotient) or `model.<field>` (x_value names a model of MODELS).
    """

    operation: str
    sweeps: Mapping[str, tuple[tuple[str, str], ...]]
    dtype: str = "config"  # `config`: from config.dtype; otherwise a fixed dtype token
    scalars: tuple[Scalar, ...] = ()
    require: Mapping[str, object] = field(default_factory=dict)  # config key = JSON value
    divisible: tuple[tuple[str, str | int], ...] = ()  # (axis, axis or integer divisor)
    reads: str | None = None  # the upstream kernel_name, when the key of the entry differs


EPS = Scalar("eps", key="eps", positive=True)
ROWS_M_HIDDEN_X = (("rows", "M"), ("hidden", "x"))
ROWS_X_HIDDEN = (("rows", "x"), ("hidden", "hidden_size"))
TOKENS_BT_VOCAB_X = (("tokens", "B*T"), ("vocab", "x"))
TOKENS_X_VOCAB = (("tokens", "x"), ("vocab", "vocab_size"))
TOKENS_X_HIDDEN_VOCAB = (("tokens", "x"), ("hidden", "H"), ("vocab", "V"))
PREFERENCE = {"B": (("batch", "x"), ("seq", "T"), ("hidden", "H"), ("vocab", "V"))}
ROPE = {
    "T": (
        ("seq", "x"),
        ("hidden", "hidden_size"),
        ("q_heads", "num_q_heads|num_attention_heads"),
        ("kv_heads", "num_kv_heads|num_key_value_heads"),
    ),
    "H": (
        ("seq", "seq_len"),
        ("hidden", "x"),
        ("q_heads", "num_q_heads"),
        ("kv_heads", "num_kv_heads"),
    ),
}
GLU_T = {
    "T": (
        ("batch", "bsz"),
        ("seq", "x"),
        ("hidden", "hidden_size"),
        ("intermediate", "intermediate_size"),
    )
}
MULTI_TOKEN_ATTENTION = {
    "L": (("batch", "B"), ("heads_in", "C_in"), ("heads_out", "C_out"), ("seq", "x"), ("k", "K"))
}
GRPO = {"B": (("batch", "x"), ("seq", "T"), ("vocab", "V|vocab_size"))}


def _distill(operation: str) -> KernelBinding:
    return KernelBinding(
        operation,
        {"BT": TOKENS_X_HIDDEN_VOCAB},
        scalars=(
            Scalar("weight_hard_loss", "weight_hard_loss"),
            Scalar("weight_soft_loss", "weight_soft_loss"),
        ),
        require={"bias": False},
        divisible=(("hidden", 2),),  # the student's hidden size is half the teacher's
    )


BINDINGS: dict[str, KernelBinding] = {
    "rms_norm": KernelBinding(
        "liger-rms-norm", {"H": ROWS_M_HIDDEN_X, "N": ROWS_M_HIDDEN_X}, scalars=(EPS,)
    ),
    "fused_add_rms_norm": KernelBinding(
        "liger-fused-add-rms-norm",
        {"H": ROWS_M_HIDDEN_X, "N": ROWS_M_HIDDEN_X, "BT": ROWS_X_HIDDEN},
        scalars=(EPS,),
    ),
    "layer_norm": KernelBinding(
        "liger-layer-norm",
        {"H": ROWS_M_HIDDEN_X, "N": ROWS_M_HIDDEN_X, "T": ROWS_X_HIDDEN},
        scalars=(EPS,),
    ),
    "softmax": KernelBinding(
        "liger-softmax", {"H": ROWS_M_HIDDEN_X, "N": ROWS_M_HIDDEN_X, "BT": ROWS_X_HIDDEN}
    ),
    "relu_squared": KernelBinding("liger-relu-squared", {"N": ROWS_M_HIDDEN_X}),
    "cross_entropy": KernelBinding(
        "liger-cross-entropy",
        {
            "V": TOKENS_BT_VOCAB_X,
            "BT": TOKENS_X_VOCAB,
            "model_config": (("tokens", "bsz*seq_len"), ("vocab", "model.vocab_size")),
        },
        dtype="fp32",
    ),
    "kl_div": KernelBinding(
        "liger-kl-div", {"V": TOKENS_BT_VOCAB_X, "BT": TOKENS_X_VOCAB}, dtype="fp32"
    ),
    "tvd": KernelBinding("liger-tvd", {"V": TOKENS_BT_VOCAB_X}, dtype="fp32"),
    "jsd": KernelBinding("liger-jsd", {"V": TOKENS_BT_VOCAB_X, "BT": TOKENS_X_VOCAB}, dtype="fp32"),
    "embedding": KernelBinding(
        "liger-embedding",
        {"V": (("batch", "B"), ("seq", "T"), ("hidden", "D"), ("vocab", "x"))},
    ),
    "rope": KernelBinding("liger-rope", ROPE, divisible=(("hidden", "q_heads"),)),
    "llama4_rope": KernelBinding("liger-llama4-rope", ROPE, divisible=(("hidden", "q_heads"),)),
    "qwen2vl_mrope": KernelBinding(
        "liger-qwen2vl-mrope", {"T": ROPE["T"]}, divisible=(("hidden", "q_heads"),)
    ),
    # The main CSV's swiglu rows name the batch B, the cuTile rows bsz.
    "swiglu": KernelBinding(
        "liger-swiglu",
        {"T": (("batch", "B|bsz"), *GLU_T["T"][1:])},
        require={"hidden_act": "silu"},
    ),
    "geglu": KernelBinding("liger-geglu", GLU_T, require={"hidden_act": "gelu_pytorch_tanh"}),
    "tiled_swiglu": KernelBinding("liger-tiled-swiglu", GLU_T, require={"hidden_act": "silu"}),
    "tiled_geglu": KernelBinding(
        "liger-tiled-geglu", GLU_T, require={"hidden_act": "gelu_pytorch_tanh"}
    ),
    "group_norm": KernelBinding(
        "liger-group-norm",
        {
            "C": (
                ("batch", "M"),
                ("channels", "x"),
                ("hidden", "H"),
                ("channels_per_group", "channels_per_group"),
            ),
            # The cuTile script sweeps B·T and reshapes it to (B·T / H) × channels × H.
            "BT": (
                ("batch", "x/H"),
                ("channels", "hidden_size"),
                ("hidden", "H"),
                ("channels_per_group", "channels_per_group"),
            ),
        },
        scalars=(EPS,),
        divisible=(("channels", "channels_per_group"),),
    ),
    "sparsemax": KernelBinding(
        "liger-sparsemax",
        {
            "V": (("tokens", "B*T"), ("features", "x")),
            "BT": (("tokens", "x"), ("features", "hidden_size")),
        },
        require={"dim": -1},
    ),
    "megatron_rms_norm": KernelBinding(
        "liger-megatron-rms-norm",
        {"H": (("seq", "S"), ("batch", "B"), ("hidden", "x"))},
        dtype="bf16",
        scalars=(Scalar("eps", value=1e-6),),
    ),
    "megatron_swiglu": KernelBinding(
        "liger-megatron-swiglu",
        {"ffn_local": (("seq", "S"), ("batch", "B"), ("ffn", "x"))},
        dtype="bf16",
    ),
    "megatron_cross_entropy": KernelBinding(
        "liger-megatron-cross-entropy",
        {"V": (("seq", "S"), ("batch", "B"), ("vocab", "x"))},
        dtype="bf16",
        require={"TP": 1},
    ),
    "fused_moe": KernelBinding(
        "liger-fused-moe",
        {
            "T": (
                ("tokens", "x"),
                ("hidden", "H"),
                ("intermediate", "intermediate_dim"),
                ("experts", "E"),
                ("k", "K"),
            ),
            "E": (
                ("tokens", "T"),
                ("hidden", "H"),
                ("intermediate", "intermediate_dim"),
                ("experts", "x"),
                ("k", "K"),
            ),
        },
    ),
    "fused_neighborhood_attention": KernelBinding(
        "liger-fused-neighborhood-attention",
        {
            "seq_len": (
                ("batch", "batch_size"),
                ("seq", "x"),
                ("hidden", "hidden_size"),
                ("heads", "num_heads"),
                ("kernel_size", "kernel_size"),
                ("dilation", "dilation"),
            )
        },
        require={"bias": True},
        divisible=(("hidden", "heads"),),
    ),
    "multi_token_attention": KernelBinding(
        "liger-multi-token-attention", MULTI_TOKEN_ATTENTION, require={"groups": 1, "bias": True}
    ),
    "sparse_multi_token_attention": KernelBinding(
        "liger-sparse-multi-token-attention",
        MULTI_TOKEN_ATTENTION,
        require={"groups": 1, "bias": True},
    ),
    "fused_linear_cross_entropy": KernelBinding(
        "liger-fused-linear-cross-entropy", {"BT": TOKENS_X_HIDDEN_VOCAB}
    ),
    "fused_linear_jsd": KernelBinding(
        "liger-fused-linear-jsd",
        {"BT": (("tokens", "x"), ("hidden", "H|hidden_size"), ("vocab", "V|vocab_size"))},
        scalars=(Scalar("beta", value=0.5),),
    ),
    "distill_jsd_loss": _distill("liger-distill-jsd-loss"),
    "distill_cosine_loss": _distill("liger-distill-cosine-loss"),
    "fused_linear_orpo_loss": KernelBinding("liger-fused-linear-orpo-loss", PREFERENCE),
    "fused_linear_cpo_loss": KernelBinding("liger-fused-linear-cpo-loss", PREFERENCE),
    "fused_linear_simpo_loss": KernelBinding("liger-fused-linear-simpo-loss", PREFERENCE),
    "kto_loss": KernelBinding(
        "liger-fused-linear-kto-loss",
        PREFERENCE,
        scalars=(Scalar("beta", key="beta"),),
        require={"bias": True},
    ),
    "fused_linear_grpo_loss_token": KernelBinding(
        "liger-grpo-loss-token", GRPO, require={"importance_sampling_level": "token"}
    ),
    "fused_linear_grpo_loss_sequence": KernelBinding(
        "liger-grpo-loss-sequence", GRPO, require={"importance_sampling_level": "sequence"}
    ),
    # cuTile CSV only. DyT runs with and without its shift term; each is its own operation.
    "dyt": KernelBinding(
        "liger-dyt", {"BT": (("tokens", "x"), ("hidden", "hidden_size"))}, require={"beta": True}
    ),
    "dyt_no_beta": KernelBinding(
        "liger-dyt-no-beta",
        {"BT": (("tokens", "x"), ("hidden", "hidden_size"))},
        require={"beta": False},
        reads="dyt",
    ),
    "poly_norm": KernelBinding("liger-poly-norm", {"T": ROWS_X_HIDDEN}, scalars=(EPS,)),
}
# One upstream kernel_name may have several entries (dyt); a row takes the first whose `require`
# holds.
CANDIDATES: dict[str, tuple[tuple[str, KernelBinding], ...]] = {}
for _key, _binding in BINDINGS.items():
    _upstream = _binding.reads or _key
    CANDIDATES[_upstream] = (*CANDIDATES.get(_upstream, ()), (_key, _binding))

# --- naming rules (FORMAT.md §5) ------------------------------------------------------------------


def case_key(axes: Mapping[str, int], dtype: str) -> str:
    """`hidden16384-rows4096-fp32`: axes sorted by name, then the dtype."""
    return "-".join([*(f"{axis}{axes[axis]}" for axis in sorted(axes)), dtype])


def nanoseconds(milliseconds: float) -> int:
    """ECMAScript `Math.round(ms * 1e6)`: halves round up (46.8328125 ms → 46832813 ns)."""
    return math.floor(milliseconds * 1e6 + 0.5)


def source_tag(file_name: str) -> str:
    """The source a CSV stands for: "" for the main one, `cutile` for `…_cutile.csv`, and so on."""
    stem = file_name.removesuffix(".csv")
    return "" if file_name == MAIN_FILE else kebab(stem.removeprefix("all_benchmark_data_"))


# --- reading the CSVs -----------------------------------------------------------------------------

TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$")


@dataclass(frozen=True)
class SourceFile:
    name: str
    rows: int


@dataclass(frozen=True)
class Row:
    """One well-formed CSV record: every field present, numbers parsed, config a JSON object."""

    file: str
    line: int
    values: Mapping[str, str]
    config: Mapping[str, Any]
    y: tuple[float, float, float]  # y_value_50, y_value_20, y_value_80

    def __getitem__(self, column: str) -> str:
        return self.values[column]


def read_csv(path: Path) -> tuple[SourceFile, list[Row], list[Problem]]:
    """Every record of one CSV, or a problem for each malformed one (`file:line`, column)."""
    name = path.name
    rows: list[Row] = []
    problems: list[Problem] = []
    count = 0
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            reader = csv.reader(handle)
            header = next(reader, None)
            missing = [column for column in COLUMNS if column not in (header or [])]
            if missing:
                message = f"missing column(s): {', '.join(missing)}" if header else "empty file"
                return SourceFile(name, 0), [], [Problem(f"{name}:1", "header", message)]
            for fields in reader:
                if not fields:  # a blank line is no record
                    continue
                count += 1
                row, row_problems = _parse_record(name, reader.line_num, header or [], fields)
                problems.extend(row_problems)
                if row is not None:
                    rows.append(row)
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        problems.append(Problem(name, "file", f"cannot read: {error}"))
    return SourceFile(name, count), rows, problems


def _parse_record(
    file: str, line: int, header: list[str], fields: list[str]
) -> tuple[Row | None, list[Problem]]:
    at = f"{file}:{line}"
    if len(fields) != len(header):
        return None, [Problem(at, "row", f"expected {len(header)} fields, found {len(fields)}")]
    values = dict(zip(header, fields, strict=True))
    problems: list[Problem] = []
    y: list[float] = []
    for column in Y_COLUMNS:
        try:
            y.append(float(values[column]))
        except ValueError:
            problems.append(Problem(at, column, f"not a number: {values[column]!r}"))
    config: Any = {}
    try:
        config = json.loads(values["extra_benchmark_config_str"])
    except json.JSONDecodeError as error:
        problems.append(
            Problem(
                at,
                "extra_benchmark_config_str",
                f"not valid JSON: {error.msg} (column {error.colno})",
            )
        )
    else:
        if not isinstance(config, dict):
            problems.append(Problem(at, "extra_benchmark_config_str", "not a JSON object"))
    if values["gpu_name"] not in GPUS:
        problems.append(
            Problem(at, "gpu_name", f"unknown GPU {values['gpu_name']!r}", "add it to GPUS")
        )
    if not _is_timestamp(values["timestamp"]):
        problems.append(
            Problem(at, "timestamp", f"expected YYYY-MM-DD HH:MM:SS, found {values['timestamp']!r}")
        )
    if not values["liger_version"]:
        problems.append(Problem(at, "liger_version", "empty"))
    if problems:
        return None, problems
    return Row(file, line, values, config, (y[0], y[1], y[2])), []


def _is_timestamp(text: str) -> bool:
    if not TIMESTAMP.match(text):
        return False
    try:
        datetime.strptime(text, "%Y-%m-%d %H:%M:%S")
    except ValueError:  # 2025-02-30
        return False
    return True


# --- binding a row --------------------------------------------------------------------------------


class Unbound(Exception):
    """The row is well formed but does not bind: it is skipped with this reason."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class Binding:
    key: str  # the BINDINGS entry (the upstream kernel_name but for dyt_no_beta)
    kernel: KernelBinding
    axes: dict[str, int]  # in binding order
    dtype: str
    scalars: dict[str, float]
    model: str | None  # the model a model-config sweep names


def bind(row: Row) -> Binding:
    """Axes, dtype and scalars of a row, by the binding table; raises Unbound."""
    candidates = CANDIDATES.get(row["kernel_name"])
    if not candidates:
        raise Unbound("unknown-kernel", f"no binding for kernel {row['kernel_name']!r}")
    failures = [_requirement_failure(kernel, row.config) for _, kernel in candidates]
    chosen = [
        candidate for candidate, failure in zip(candidates, failures, strict=True) if not failure
    ]
    if not chosen:
        raise Unbound("requirement-failed", str(failures[0]))
    key, kernel = chosen[0]
    x_name = row["x_name"]
    sweep = kernel.sweeps.get(x_name)
    if sweep is None:
        allowed = ", ".join(sorted(kernel.sweeps))
        raise Unbound("unknown-x-name", f"{key} binds x_name {allowed}, not {x_name!r}")
    axes = {axis: _read(source, row) for axis, source in sweep}
    for axis, divisor in kernel.divisible:
        by = divisor if isinstance(divisor, int) else axes[divisor]
        if axes[axis] % by:
            raise Unbound(
                "not-divisible", f"{axis}={axes[axis]} is not divisible by {divisor}={by}"
            )
    return Binding(
        key=key,
        kernel=kernel,
        axes=axes,
        dtype=_dtype(kernel, row.config),
        scalars={scalar.name: _scalar(scalar, row.config) for scalar in kernel.scalars},
        model=row["x_value"] if x_name == "model_config" else None,
    )


def _requirement_failure(kernel: KernelBinding, config: Mapping[str, Any]) -> str | None:
    for key, expected in kernel.require.items():
        actual = config.get(key)
        # JSON equality: `true` is not `1`
        if type(actual) is not type(expected) or actual != expected:
            found = "nothing" if key not in config else json.dumps(actual)
            return f"requires {key} = {json.dumps(expected)}, found {found}"
    return None


def _read(source: str, row: Row) -> int:
    """The positive integer a source names (see KernelBinding)."""
    if "*" in source:
        return math.prod(_read(part, row) for part in source.split("*"))
    if "/" in source:
        dividend, divisor = (_read(part, row) for part in source.split("/"))
        if dividend % divisor:
            raise Unbound("not-divisible", f"{source} = {dividend}/{divisor} is not whole")
        return dividend // divisor
    if source == "x":
        return _positive_integer(row["x_value"], "x_value")
    if source.startswith("model."):
        model = MODELS.get(row["x_value"])
        if model is None:
            raise Unbound("unknown-model", f"no shapes for model {row['x_value']!r}")
        return model[source.removeprefix("model.")]
    for key in source.split("|"):
        if row.config.get(key) is not None:  # a null under the swept key is no value
            return _positive_integer(row.config[key], f"config {key}")
    raise Unbound("missing-config-key", f"config has no {' or '.join(source.split('|'))}")


def _positive_integer(value: object, what: str) -> int:
    number: object = value
    if isinstance(value, str):  # x_value: "4096.0" counts, "llama_2_7b" does not
        try:
            number = float(value)
        except ValueError:
            number = None
    if isinstance(number, float) and number.is_integer():
        number = int(number)
    if type(number) is not int or number <= 0:
        raise Unbound("not-a-positive-integer", f"{what} is {json.dumps(value)}")
    return number


def _dtype(kernel: KernelBinding, config: Mapping[str, Any]) -> str:
    if kernel.dtype != "config":
        return kernel.dtype
    dtype = DTYPES.get(config["dtype"]) if isinstance(config.get("dtype"), str) else None
    if dtype is None:
        raise Unbound("unknown-dtype", f"config dtype is {json.dumps(config.get('dtype'))}")
    return dtype


def _scalar(scalar: Scalar, config: Mapping[str, Any]) -> float:
    if scalar.key is None:
        return scalar.value  # type: ignore[return-value]
    value = config.get(scalar.key)
    valid = type(value) in (int, float) and math.isfinite(value)  # type: ignore[arg-type]
    if not valid or (scalar.positive and value <= 0):  # type: ignore[operator]
        wanted = "a positive number" if scalar.positive else "a number"
        raise Unbound("bad-scalar", f"config {scalar.key} is {json.dumps(value)}, not {wanted}")
    return value  # type: ignore[return-value]


_ARITHMETIC: dict[type[ast.operator], Callable[[int, int], int]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}


def evaluate(expression: str, axes: Mapping[str, int]) -> int:
    """A derived-axis expression (integers, axis names, + - * // %, parentheses) over `axes`."""

    def walk(node: ast.expr) -> int:
        if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
            return _ARITHMETIC[type(node.op)](walk(node.left), walk(node.right))
        if isinstance(node, ast.Name):
            return axes[node.id]
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        raise ValueError(f"not a derived-axis expression: {expression!r}")

    return walk(ast.parse(expression, mode="eval").body)


# --- building resources ---------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Built:
    """A resource, its digest, and the file it goes to (relative to the content root)."""

    path: str
    document: Json
    digest: str

    @property
    def kind(self) -> str:
        return str(self.document["kind"])

    @property
    def name(self) -> str:
        return str(self.document["metadata"]["name"])


def _built(path: str, kind: str, metadata: Json, spec: Json) -> Built:
    document = {"apiVersion": API_VERSION, "kind": kind, "metadata": metadata, "spec": spec}
    return Built(path, document, digest(kind, spec))


@cache
def _operation_documents() -> dict[str, Json]:
    """The OperationSpecs shipped beside this module (liger_operations/*.json)."""
    folder = package_files.files(__package__ or "sitegen.importers") / "liger_operations"
    documents = [
        json.loads(entry.read_text(encoding="utf-8"))
        for entry in folder.iterdir()
        if entry.name.endswith(".json")
    ]
    return {document["metadata"]["name"]: document for document in documents}


@cache
def operation(name: str) -> Built:
    document = _operation_documents()[name]
    return Built(f"operations/{name}.json", document, digest("OperationSpec", document["spec"]))


@cache
def project(slug: str) -> Built:
    about = PROJECTS[slug]
    spec = {
        "name": about.title,
        "kind": "library",
        "repository": about.repository,
        "host": {"kind": "github", "id": about.github},
    }
    return _built(
        f"projects/{slug}.json", "SoftwareProject", {"name": slug, "title": about.title}, spec
    )


@cache
def implementation(key: str, provider_name: str) -> Built:
    provider = PROVIDERS[provider_name]
    op = operation(BINDINGS[key].operation)
    spec: Json = {
        "projectRevision": {},
        "operation": {"specDigest": op.digest},
        "callable": {"language": provider.language},
        "support": {"hardwareArchitectures": [], "dtypes": []},
    }
    if provider.is_liger:
        spec["buildVariants"] = [
            {"name": "pip", "install": {"kind": "pip", "package": "liger-kernel"}}
        ]
        spec["licensing"] = {"declared": provider.licence, "concluded": provider.licence}
    else:
        spec["licensing"] = {"declared": provider.licence}
    name = kebab(f"liger-bench-{key}-{provider_name}")
    metadata: Json = {
        "name": name,
        "title": f"{op.document['metadata']['title']} · {provider.title}",
        "description": provider.description,
    }
    if provider.baseline:
        metadata["labels"] = {"role": "baseline"}
    metadata["sourceRefs"] = [{"url": PROJECTS[provider.project].repository}]
    return _built(f"implementations/{name}.json", "ImplementationRevision", metadata, spec)


HARNESS = {"name": "Liger-Kernel benchmark scripts", "repository": REPOSITORY}
UNRECORDED = (
    "The upstream CSV records no CUDA, driver, or torch version; the Liger release rides each "
    "run's labels."
)


@cache
def protocol(metric: str, mode: str) -> Built:
    """How a pass was measured: do_bench latency, or peak allocated memory (never a latency)."""
    if metric == "latency":
        name, title = f"liger-bench-do-bench-{mode}", f"Liger benchmark harness · {mode} pass"
        measurement = {"timer": "cuda_events", "primaryStatistic": "median"}
        family = "liger_kernel_bench"
        notes = (
            f"Timed: {PASSES[mode]}, via triton.testing.do_bench with quantiles 0.5/0.2/0.8 "
            f"(median with p20/p80 spread). {UNRECORDED} Comparable only within one kernel, "
            "workload, timed pass, and GPU."
        )
    else:
        name = f"liger-bench-peak-memory-{mode}"
        title = f"Liger benchmark harness · {mode} pass · peak memory"
        measurement = {"timer": "not_timed", "primaryStatistic": "median"}
        family = "liger_kernel_bench_memory"
        notes = (
            f"Measured: the peak GPU memory allocated during {PASSES[mode]}, read with "
            "torch.cuda.max_memory_allocated() after reset_peak_memory_stats() and divided by "
            "2**20, so in MiB (the upstream CSV says MB); median with p20/p80 over repeated calls "
            f"(torch.quantile). Not a latency. {UNRECORDED} Comparable only within one kernel, "
            "workload, measured pass, and GPU."
        )
    spec = {
        "harness": HARNESS,
        "measurement": measurement,
        "comparability": {"family": family, "notes": notes},
    }
    metadata = {"name": name, "title": title}
    return _built(f"protocols/{name}.json", "BenchmarkProtocol", metadata, spec)


@cache
def environment(gpu_name: str) -> Built:
    gpu = GPUS[gpu_name]
    hardware = {"vendor": "nvidia", "product": gpu.product, "architecture": gpu.architecture}
    if gpu.form_factor:
        hardware["formFactor"] = gpu.form_factor
    name = kebab(f"liger-bench-{gpu_name}")
    metadata = {"name": name, "title": f"Liger benchmark host · {gpu_name.removeprefix('NVIDIA ')}"}
    spec = {"hardware": hardware, "software": {}}
    return _built(f"environments/{name}.json", "ExecutionEnvironment", metadata, spec)


def workload(binding: Binding) -> Built:
    op = operation(binding.kernel.operation)
    op_spec = op.document["spec"]
    axes = binding.axes

    def size(dimension: int | str) -> int:
        if isinstance(dimension, int):
            return dimension
        if dimension in axes:
            return axes[dimension]
        try:
            value = evaluate(op_spec["axes"][dimension]["expression"], axes)
        except ZeroDivisionError:
            value = 0
        if value <= 0:
            raise Unbound("not-a-positive-integer", f"derived axis {dimension} is {value}")
        return value

    tensors = {
        operand["name"]: {
            "shape": [size(dimension) for dimension in operand["tensor"]["shape"]],
            "dtype": binding.dtype
            if operand["tensor"]["dtype"] == "float"
            else operand["tensor"]["dtype"],
        }
        for operand in op_spec["inputs"]
        if "tensor" in operand
    }
    spec: Json = {"operationSpecDigest": op.digest, "axes": axes, "tensors": tensors}
    if binding.scalars:
        spec["scalars"] = {
            name: {"dtype": "fp32", "value": value} for name, value in binding.scalars.items()
        }
    spec["correctness"] = {"comparator": "not_asserted"}
    op_name = op.name
    name = kebab(f"{op_name}-{case_key(axes, binding.dtype)}")
    shown_axes = ", ".join(f"{axis}={value}" for axis, value in axes.items())
    title = f"{op.document['metadata']['title']} · {shown_axes} · {binding.dtype}"
    return _built(
        f"workloads/{op_name}/{name}.json", "WorkloadCase", {"name": name, "title": title}, spec
    )


def benchmark_run(row: Row, binding: Binding, metric: str, refs: Mapping[str, Built]) -> Built:
    """The BenchmarkRun of one row; `refs` holds the resources it points at."""
    mode, provider, gpu_name = row["kernel_operation_mode"], row["kernel_provider"], row["gpu_name"]
    case = case_key(binding.axes, binding.dtype)
    timestamp = row["timestamp"]
    memory = metric == "peak_memory"
    # Backend files and memory rows get a segment of their own: no row shares another's identity.
    tag = source_tag(row.file)
    prefix = [tag] if tag else []
    measured = ["memory"] if memory else []
    # A model-config sweep can give two models the same shapes (qwen2.5 7B and 14B share a vocab).
    model = [binding.model] if binding.model else []
    detail = [provider, kebab(gpu_name), case, *model, kebab(timestamp)]
    external_id = "/".join([*prefix, binding.key, mode, *measured, *detail])
    spec: Json = {
        "implementationDigest": refs["implementation"].digest,
        "workloadDigest": refs["workload"].digest,
        "protocolDigest": refs["protocol"].digest,
        "environmentDigest": refs["environment"].digest,
        "status": "passed",
    }
    median, p20, p80 = row.y
    if memory:
        spec["measurements"] = [
            {
                "metric": "peak_memory_allocated",
                "unit": "mib",
                "statistic": statistic,
                "value": value,
            }
            for statistic, value in (("median", median), ("p20", p20), ("p80", p80))
        ]
        metrics = {"mib_50": median, "mib_20": p20, "mib_80": p80}
    else:
        spec["timing"] = {
            "primaryStatistic": "median",
            "latencyNs": {"median": nanoseconds(median)},
        }
        spec["measurements"] = [
            {"metric": "latency", "unit": "ns", "statistic": statistic, "value": nanoseconds(value)}
            for statistic, value in (("p20", p20), ("p80", p80))
        ]
        metrics = {"ms_50": median, "ms_20": p20, "ms_80": p80}
    spec["sourceNative"] = {
        "source": f"liger-kernel-bench-{tag}" if tag else "liger-kernel-bench",
        "benchmark": f"{row['kernel_name']}/{mode}",
        "externalId": external_id,
        "metrics": metrics,
    }
    spec["observedAt"] = timestamp.replace(" ", "T") + ".000Z"  # the CSV's zone-less time is UTC
    kernel_title = operation(binding.kernel.operation).document["metadata"]["title"]
    labels = {"liger_version": row["liger_version"]}
    if binding.model:
        labels["model_config"] = binding.model
    name_parts = [
        "liger",
        *prefix,
        binding.key,
        mode,
        *measured,
        provider,
        gpu_name,
        case,
        *model,
        timestamp,
    ]
    metadata = {
        "name": kebab("-".join(name_parts)),
        "title": " · ".join([kernel_title, provider, mode, *(["peak memory"] if memory else [])]),
        "labels": labels,
    }
    # File names cannot be run names (cut at 100 characters, they repeat): use the externalId.
    stem = ".".join([*prefix, *measured, *detail])
    return _built(f"runs/{binding.key}/{mode}/{stem}.json", "BenchmarkRun", metadata, spec)


# --- importing ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ImportedRow:
    file: str
    line: int
    metric: str  # latency | peak_memory
    resources: Mapping[str, Built]  # run, workload, implementation, project, protocol, …

    @property
    def run(self) -> Built:
        return self.resources["run"]


@dataclass(frozen=True)
class SkippedRow:
    file: str
    line: int
    reason: str  # a short slug, counted in the report
    detail: str


# Kinds in the order the report lists them.
KINDS = (
    "OperationSpec",
    "WorkloadCase",
    "SoftwareProject",
    "ImplementationRevision",
    "BenchmarkProtocol",
    "ExecutionEnvironment",
    "BenchmarkRun",
)


@dataclass(frozen=True)
class ImportResult:
    sources: tuple[SourceFile, ...]
    imported: tuple[ImportedRow, ...]
    skipped: tuple[SkippedRow, ...]
    problems: tuple[Problem, ...]  # malformed input: when any, nothing may be written

    def resources(self) -> list[Built]:
        """Every resource once per digest, sorted by path.

        Identities collapse (swiglu and tiled_swiglu share an OperationSpec; providers the format
        cannot tell apart share an ImplementationRevision): the survivor is the copy whose
        `metadata.name` sorts first, then whose path does, whatever the order of the input. A
        shared ImplementationRevision is retitled to name every provider it stands for.
        """
        copies: dict[str, dict[str, Built]] = {}  # digest → path → copy
        for row in self.imported:
            for built in row.resources.values():
                copies.setdefault(built.digest, {})[built.path] = built
        survivors = []
        for same in copies.values():
            ordered = sorted(same.values(), key=lambda built: (built.name, built.path))
            survivor = ordered[0]
            if survivor.kind == "ImplementationRevision":
                survivor = _shared_implementation(ordered)
            survivors.append(survivor)
        return sorted(survivors, key=lambda built: built.path)

    def tree(self) -> dict[str, Json]:
        """The content tree: relative path → JSON document (the resources and the report)."""
        resources = self.resources()
        tree: dict[str, Json] = {}
        for built in resources:
            if built.path in tree:  # two identities, one file: a naming rule is wrong
                raise RuntimeError(f"two resources would be written to {built.path}")
            tree[built.path] = built.document
        tree[REPORT_PATH] = self.report(resources)
        return tree

    def report(self, resources: Iterable[Built] | None = None) -> Json:
        """Where the data came from and what became of every row, for the site to show."""
        written = Counter(built.kind for built in (resources or self.resources()))
        files = []
        for source in self.sources:
            commit = FILE_COMMITS.get(source.name)
            upstream = f"benchmark/data/{source.name}"
            imported = [row for row in self.imported if row.file == source.name]
            entry: Json = {"name": source.name, "path": upstream}
            if commit:
                entry["commit"] = commit
                entry["url"] = f"{REPOSITORY}/blob/{commit}/{upstream}"
            entry["rows"] = source.rows
            entry["imported"] = dict(sorted(Counter(row.metric for row in imported).items()))
            entry["skipped"] = sum(1 for row in self.skipped if row.file == source.name)
            files.append(entry)
        return {
            "title": "Liger-Kernel benchmark data",
            "repository": REPOSITORY,
            "snapshot": SNAPSHOT_COMMIT,
            "licence": LICENCE,
            "files": files,
            "resources": {kind: written[kind] for kind in KINDS},
            "runs": dict(sorted(Counter(row.metric for row in self.imported).items())),
            "skipped": dict(sorted(Counter(row.reason for row in self.skipped).items())),
            "skippedRows": [
                {"row": f"{row.file}:{row.line}", "reason": row.reason, "detail": row.detail}
                for row in self.skipped
            ],
        }


def _shared_implementation(copies: list[Built]) -> Built:
    """One ImplementationRevision standing for several providers: its metadata names them all."""
    first = copies[0].document["metadata"]
    kernel_title = first["title"].rsplit(" · ", 1)[0]
    about: dict[str, str] = {}  # provider title → description, first seen first
    for copy in copies:
        provider_title = copy.document["metadata"]["title"].rsplit(" · ", 1)[1]
        about.setdefault(provider_title, copy.document["metadata"]["description"])
    if len(about) == 1:  # one provider under two kernel names (swiglu and tiled_swiglu)
        return copies[0]
    providers = list(about)
    parts = [f"{title}: {description}" for title, description in about.items()]
    metadata: Json = {
        "name": first["name"],
        "title": f"{kernel_title} · {' / '.join(providers)}",
        "description": (
            "The benchmark's providers "
            + ", ".join(providers)
            + " share this identity: the format tells implementations apart by operation, "
            "language, build and licence only, and these agree. Each run's title names its "
            "provider. " + " ".join(parts)
        ),
    }
    if all(copy.document["metadata"].get("labels") for copy in copies):
        metadata["labels"] = first["labels"]
    urls = dict.fromkeys(
        ref["url"] for copy in copies for ref in copy.document["metadata"]["sourceRefs"]
    )
    metadata["sourceRefs"] = [{"url": url} for url in urls]
    document = {**copies[0].document, "metadata": metadata}
    return Built(copies[0].path, document, copies[0].digest)


def import_rows(csv_paths: Iterable[Path]) -> ImportResult:
    """Read and bind every row of the CSVs in memory; nothing touches the disk but the reading."""
    sources: list[SourceFile] = []
    imported: list[ImportedRow] = []
    skipped: list[SkippedRow] = []
    problems: list[Problem] = []
    seen: dict[str, str] = {}  # externalId → file:line
    # Sorted by file name: the report and duplicate detection must not depend on argument order.
    for path in sorted(csv_paths, key=lambda p: p.name):
        if any(source.name == path.name for source in sources):
            problems.append(
                Problem(path.name, "file", "given twice (sources are told apart by name)")
            )
            continue
        source, rows, file_problems = read_csv(path)
        sources.append(source)
        problems.extend(file_problems)
        for row in rows:
            try:
                outcome = import_row(row)
                external_id = outcome.run.document["spec"]["sourceNative"]["externalId"]
                if external_id in seen:
                    raise Unbound("duplicate-row", f"same externalId as {seen[external_id]}")
            except Unbound as unbound:
                skipped.append(SkippedRow(row.file, row.line, unbound.reason, unbound.detail))
                continue
            seen[external_id] = f"{row.file}:{row.line}"
            imported.append(outcome)
    return ImportResult(tuple(sources), tuple(imported), tuple(skipped), tuple(problems))


def import_row(row: Row) -> ImportedRow:
    """The resources one row imports to; raises Unbound when it does not bind."""
    metric = METRICS.get((row["metric_name"], row["metric_unit"]))
    if metric is None:
        found = f"{row['metric_name']} in {row['metric_unit']}"
        raise Unbound("unsupported-metric", f"{found}; known: speed in ms, memory in MB")
    if row["kernel_provider"] not in PROVIDERS:
        raise Unbound(
            "unknown-provider", f"no implementation for provider {row['kernel_provider']!r}"
        )
    if row["kernel_operation_mode"] not in PASSES:
        raise Unbound("unknown-pass", f"no protocol for pass {row['kernel_operation_mode']!r}")
    binding = bind(row)
    if not all(math.isfinite(value) for value in row.y):
        raise Unbound("non-finite-value", f"y values are {', '.join(map(str, row.y))}")
    implementation_ = implementation(binding.key, row["kernel_provider"])
    refs = {
        "operation": operation(binding.kernel.operation),
        "workload": workload(binding),
        "project": project(PROVIDERS[row["kernel_provider"]].project),
        "implementation": implementation_,
        "protocol": protocol(metric, row["kernel_operation_mode"]),
        "environment": environment(row["gpu_name"]),
    }
    return ImportedRow(
        row.file, row.line, metric, {**refs, "run": benchmark_run(row, binding, metric, refs)}
    )


# --- writing --------------------------------------------------------------------------------------


def render(document: Json) -> str:
    """Pretty JSON: two-space indent, keys in the order built, UTF-8 as is, a final newline."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def write_tree(tree: Mapping[str, Json], out_dir: Path) -> None:
    """Replace `out_dir` with `tree`, all or nothing: staged beside it, then swapped in.

    The importer owns `out_dir` entirely: whatever it held before is replaced.
    """
    staging = out_dir.with_name(f".{out_dir.name}.importing")
    previous = out_dir.with_name(f".{out_dir.name}.previous")
    for leftover in (staging, previous):  # from an import that died half-way
        if leftover.exists():
            shutil.rmtree(leftover)
    try:
        for relative, document in sorted(tree.items()):
            path = staging / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(render(document), encoding="utf-8")
        if out_dir.exists():
            out_dir.rename(previous)
        try:
            staging.rename(out_dir)
        except OSError:
            if previous.exists():
                previous.rename(out_dir)
            raise
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    if previous.exists():
        shutil.rmtree(previous)


def main(csv_paths: list[Path], out_dir: Path) -> int:
    """`sitegen import liger CSV... --out DIR`: prints counts per skip reason and a summary; returns exit code 0 ok / 1 malformed input (nothing written)."""  # noqa: E501
    result = import_rows(csv_paths)
    if result.problems:
        for problem in result.problems:
            print(problem.line(), file=sys.stderr)
        count = len(result.problems)
        print(
            f"{count} problem{'s' if count != 1 else ''} in the input; nothing written",
            file=sys.stderr,
        )
        return 1
    tree = result.tree()
    write_tree(tree, out_dir)
    report = tree[REPORT_PATH]
    for source in report["files"]:
        imported, skipped = sum(source["imported"].values()), source["skipped"]
        print(f"{source['name']}: {source['rows']} rows, {imported} imported, {skipped} skipped")
    for reason, count in report["skipped"].items():
        print(f"skipped, {reason}: {count}")
    runs = ", ".join(
        f"{count} {metric.replace('_', ' ')}" for metric, count in report["runs"].items()
    )
    kinds = ", ".join(f"{count} {kind}" for kind, count in report["resources"].items())
    total = sum(report["runs"].values())
    plural = "s" if total != 1 else ""
    print(f"imported {total} run{plural} ({runs or 'none'}) into {out_dir}: {kinds}")
    return 0
