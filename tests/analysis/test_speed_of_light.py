"""Speed-of-light figures (sitegen/analysis/speed_of_light.py): bytes and FLOPs of known
workloads computed by hand, nothing where the traffic is not the tensors, and the reviewed
GPU table matched by product and form factor."""

from __future__ import annotations

from typing import Any

import pytest

from sitegen.analysis.speed_of_light import (
    GpuRow,
    figures_of,
    gpu_table,
    peak_of,
    work_of,
)
from tests.analysis.test_quality import latency, run_facts


def tensor(*shape: int | str, dtype: str = "float") -> dict[str, Any]:
    return {"tensor": {"shape": list(shape), "dtype": dtype}}


def variable() -> dict[str, str]:
    return {"role": "variable", "type": "integer"}


LAYER_NORM = {
    "family": "layernorm",
    "axes": {"rows": variable(), "hidden": variable()},
    "inputs": [
        {"name": "x", **tensor("rows", "hidden")},
        {"name": "weight", **tensor("hidden")},
        {"name": "bias", **tensor("hidden")},
    ],
    "outputs": [{"name": "y", **tensor("rows", "hidden")}],
}


def layer_norm_case(rows: int, hidden: int, dtype: str = "fp32") -> dict[str, Any]:
    return {
        "axes": {"rows": rows, "hidden": hidden},
        "tensors": {
            "x": {"shape": [rows, hidden], "dtype": dtype},
            "weight": {"shape": [hidden], "dtype": dtype},
            "bias": {"shape": [hidden], "dtype": dtype},
        },
    }


def test_layer_norm_moves_its_input_weights_and_output_once() -> None:
    work = work_of(LAYER_NORM, layer_norm_case(4096, 1024))
    # x and y: 4096 × 1024 fp32 each; weight and bias: 1024 fp32 each.
    assert work.bytes_moved == 4096 * 1024 * 4 * 2 + 1024 * 4 * 2 == 33_562_624
    assert work.flops is None and work.why_no_flops


def test_an_output_takes_the_workloads_dtype_and_its_derived_axes() -> None:
    swiglu = {
        "axes": {
            "seq": variable(),
            "batch": variable(),
            "ffn": variable(),
            "ffn_double": {"role": "derived", "type": "integer", "expression": "ffn * 2"},
        },
        "inputs": [{"name": "y", **tensor("seq", "batch", "ffn_double")}],
        "outputs": [{"name": "out", **tensor("seq", "batch", "ffn")}],
    }
    case = {
        "axes": {"seq": 2, "batch": 3, "ffn": 4},
        "tensors": {"y": {"shape": [2, 3, 8], "dtype": "bf16"}},
    }
    # In: 2 × 3 × 8 bf16 = 96 bytes; out: 2 × 3 × 4 bf16 = 48 bytes.
    assert work_of(swiglu, case).bytes_moved == 144


def test_a_matmul_does_2mnk_flops_and_states_no_bytes() -> None:
    gemm = {
        "family": "gemm",
        "axes": {
            "m": variable(),
            "n": {"role": "constant", "type": "integer", "value": 4096},
            "k": {"role": "constant", "type": "integer", "value": 14336},
        },
        "inputs": [
            {"name": "a", **tensor("m", "k", dtype="fp16")},
            {"name": "b", **tensor("n", "k", dtype="fp16")},
        ],
        "outputs": [{"name": "c", **tensor("m", "n", dtype="fp16")}],
    }
    case = {
        "axes": {"m": 128},
        "tensors": {
            "a": {"shape": [128, 14336], "dtype": "fp16"},
            "b": {"shape": [4096, 14336], "dtype": "fp16"},
        },
    }
    work = work_of(gemm, case)
    assert work.flops == 2 * 128 * 4096 * 14336 == 15_032_385_536
    assert work.dtype == "fp16"
    assert work.bytes_moved is None and "matmul" in work.why_no_bytes


@pytest.mark.parametrize(
    ("operation", "case", "why"),
    [
        (  # a fused linear layer: the weight is not a map over the input
            {
                "axes": {"tokens": variable(), "hidden": variable(), "vocab": variable()},
                "inputs": [
                    {"name": "x", **tensor("tokens", "hidden")},
                    {"name": "weight", **tensor("vocab", "hidden")},
                ],
                "outputs": [{"name": "loss", **tensor(1)}],
            },
            {
                "axes": {"tokens": 8, "hidden": 4, "vocab": 16},
                "tensors": {
                    "x": {"shape": [8, 4], "dtype": "bf16"},
                    "weight": {"shape": [16, 4], "dtype": "bf16"},
                },
            },
            "map over one tensor",
        ),
        (  # a square weight matrix: a projection inside
            {
                "axes": {"seq": variable(), "hidden": variable()},
                "inputs": [
                    {"name": "x", **tensor("seq", "hidden")},
                    {"name": "w", **tensor("hidden", "hidden")},
                ],
                "outputs": [{"name": "y", **tensor("seq", "hidden")}],
            },
            {
                "axes": {"seq": 8, "hidden": 4},
                "tensors": {
                    "x": {"shape": [8, 4], "dtype": "bf16"},
                    "w": {"shape": [4, 4], "dtype": "bf16"},
                },
            },
            "twice",
        ),
        (  # a size axis in no tensor: data the spec does not list
            {
                "axes": {"rows": variable(), "hidden": variable(), "inner": variable()},
                "inputs": [{"name": "x", **tensor("rows", "hidden")}],
                "outputs": [{"name": "y", **tensor("rows", "hidden")}],
            },
            {
                "axes": {"rows": 8, "hidden": 4, "inner": 2},
                "tensors": {"x": {"shape": [8, 4], "dtype": "bf16"}},
            },
            "no tensor's shape",
        ),
        (  # a dtype without a stated size
            LAYER_NORM,
            layer_norm_case(8, 4, dtype="nvfp4"),
            "dtype size is not stated",
        ),
        (  # an output axis the workload does not resolve
            {**LAYER_NORM, "outputs": [{"name": "y", **tensor("rows", "hidden", "extra")}]},
            layer_norm_case(8, 4),
            "shape or dtype size is not stated",
        ),
    ],
)
def test_no_bytes_where_the_traffic_is_not_the_tensors(
    operation: dict[str, Any], case: dict[str, Any], why: str
) -> None:
    work = work_of(operation, case)
    assert work.bytes_moved is None
    assert why in work.why_no_bytes


ROWS = (
    GpuRow(
        "GPU X",
        "SXM",
        ("SXM",),
        1000.0,
        (("fp16", 100.0), ("fp32", 10.0)),
        "X datasheet",
        "https://example.com/x",
        "",
    ),
    GpuRow(
        "GPU X",
        "PCIe",
        ("PCIe",),
        800.0,
        (("fp16", 120.0),),
        "X datasheet",
        "https://example.com/x",
        "",
    ),
)


def test_an_environment_gets_the_row_of_its_form_factor() -> None:
    peak = peak_of({"product": "GPU X", "formFactor": "PCIe"}, ROWS)
    assert peak is not None and peak.matched and peak.form == "PCIe"
    assert peak.bandwidth_gbs == 800 and peak.throughput("fp16") == 120


def test_without_a_known_form_factor_the_highest_figure_of_each_row() -> None:
    for hardware in ({"product": "GPU X"}, {"product": "GPU X", "formFactor": "runner:X"}):
        peak = peak_of(hardware, ROWS)
        assert peak is not None and not peak.matched
        assert peak.bandwidth_gbs == 1000 and peak.throughput("fp16") == 120
        assert peak.throughput("fp32") == 10


def test_a_gpu_not_in_the_table_has_no_peak() -> None:
    assert peak_of({"product": "GPU Y"}, ROWS) is None


def test_figures_are_the_work_over_the_median_against_the_peak() -> None:
    work = work_of(LAYER_NORM, layer_norm_case(4096, 1024))
    peak = peak_of({"product": "GPU X", "formFactor": "SXM"}, ROWS)
    run = run_facts("a", latency(33_562.624))  # 33.56 µs: 1,000 GB/s exactly
    figures = figures_of(run, work, peak)
    assert figures is not None
    assert figures.achieved_gbs == pytest.approx(1000.0)
    assert figures.bandwidth_share == pytest.approx(1.0)
    assert figures_of(run._replace(pass_name="backward"), work, peak) is None
    assert figures_of(run._replace(status="runtime_error"), work, peak) is None


def test_the_reviewed_table_cites_a_vendor_document_for_every_row() -> None:
    table = gpu_table()
    products = {row.product for row in table}
    # Every GPU product the catalog's environments name (content/, listed by issue 37).
    assert products >= {
        "NVIDIA A100",
        "NVIDIA H100",
        "NVIDIA H200",
        "NVIDIA B200",
        "NVIDIA GB200",
        "NVIDIA L4",
        "NVIDIA GeForce RTX 3090",
        "NVIDIA GeForce RTX 4090",
        "AMD Instinct MI300X",
        "AMD Instinct MI355X",
    }
    for row in table:
        assert row.url.startswith("https://") and row.title
        assert row.bandwidth_gbs > 0
        assert all(value > 0 for _, value in row.throughput_tflops)
        assert len({f for r in table if r.product == row.product for f in r.form_factors}) == sum(
            len(r.form_factors) for r in table if r.product == row.product
        ), "a form factor names one row of its product"
