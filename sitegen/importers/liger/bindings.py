"""Binding a row: axes, dtype and scalars by the binding table (FORMAT.md §6, extended for the
backend CSVs), or the reason the row does not bind."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sitegen.importers.liger.rows import Row

DTYPES = {"torch.float32": "fp32", "torch.bfloat16": "bf16", "torch.float16": "fp16"}


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
    reads: tuple[str, ...] = ()  # the upstream kernel_names, when not the key of the entry


EPS = Scalar("eps", key="eps", positive=True)
ROWS_M_HIDDEN_X = (("rows", "M"), ("hidden", "x"))
ROWS_X_HIDDEN = (("rows", "x"), ("hidden", "hidden_size"))
TOKENS_BT_VOCAB_X = (("tokens", "B*T"), ("vocab", "x"))
TOKENS_X_VOCAB = (("tokens", "x"), ("vocab", "vocab_size"))
TOKENS_X_HIDDEN_VOCAB = (("tokens", "x"), ("hidden", "H"), ("vocab", "V"))
DYT = {
    "BT": (("tokens", "x"), ("hidden", "hidden_size")),
    "hidden_size": (("tokens", "BT"), ("hidden", "x")),
}
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
        "liger-rms-norm",
        {"H": ROWS_M_HIDDEN_X, "N": ROWS_M_HIDDEN_X, "T": ROWS_X_HIDDEN},
        scalars=(EPS,),
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
    "relu_squared": KernelBinding(
        "liger-relu-squared", {"N": ROWS_M_HIDDEN_X, "BT": ROWS_X_HIDDEN}
    ),
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
    "tvd": KernelBinding("liger-tvd", {"V": TOKENS_BT_VOCAB_X, "BT": TOKENS_X_VOCAB}, dtype="fp32"),
    "jsd": KernelBinding("liger-jsd", {"V": TOKENS_BT_VOCAB_X, "BT": TOKENS_X_VOCAB}, dtype="fp32"),
    "embedding": KernelBinding(
        "liger-embedding",
        {
            "V": (("batch", "B"), ("seq", "T"), ("hidden", "D"), ("vocab", "x")),
            # The current script sweeps B·T at a fixed T: the batch is B·T / T.
            "BT": (
                ("batch", "x/T"),
                ("seq", "T"),
                ("hidden", "hidden_size"),
                ("vocab", "vocab_size"),
            ),
        },
    ),
    "rope": KernelBinding("liger-rope", ROPE, divisible=(("hidden", "q_heads"),)),
    "llama4_rope": KernelBinding("liger-llama4-rope", ROPE, divisible=(("hidden", "q_heads"),)),
    "qwen2vl_mrope": KernelBinding("liger-qwen2vl-mrope", ROPE, divisible=(("hidden", "q_heads"),)),
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
    # The main CSV's configs name the sizes H and V, the current script's hidden_size, vocab_size.
    "fused_linear_cross_entropy": KernelBinding(
        "liger-fused-linear-cross-entropy",
        {"BT": (("tokens", "x"), ("hidden", "H|hidden_size"), ("vocab", "V|vocab_size"))},
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
    # The history's CI runs name the two `dyt_beta=True` and `dyt_beta=False`, sweeping the
    # hidden size at a fixed BT.
    "dyt": KernelBinding("liger-dyt", DYT, require={"beta": True}, reads=("dyt", "dyt_beta=True")),
    "dyt_no_beta": KernelBinding(
        "liger-dyt-no-beta", DYT, require={"beta": False}, reads=("dyt", "dyt_beta=False")
    ),
    # The history's sweep over the hidden size is the main CSV's norm form (rows = M).
    "poly_norm": KernelBinding(
        "liger-poly-norm", {"T": ROWS_X_HIDDEN, "H": ROWS_M_HIDDEN_X}, scalars=(EPS,)
    ),
    # History only (the DPO script's rows on gh-pages); an OperationSpec of our own.
    "dpo_loss": KernelBinding(
        "liger-fused-linear-dpo-loss",
        PREFERENCE,
        scalars=(Scalar("beta", key="beta"),),
        require={"bias": True},
    ),
}
# One upstream kernel_name may have several entries (dyt); a row takes the first whose `require`
# holds.
CANDIDATES: dict[str, tuple[tuple[str, KernelBinding], ...]] = {}
for _key, _binding in BINDINGS.items():
    for _upstream in _binding.reads or (_key,):
        CANDIDATES[_upstream] = (*CANDIDATES.get(_upstream, ()), (_key, _binding))


def case_key(axes: Mapping[str, int], dtype: str) -> str:
    """`hidden16384-rows4096-fp32`: axes sorted by name, then the dtype."""
    return "-".join([*(f"{axis}{axes[axis]}" for axis in sorted(axes)), dtype])


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
