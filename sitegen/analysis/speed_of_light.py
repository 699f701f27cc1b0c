"""Speed-of-light figures: how far a run is from what its GPU can do, where the format lets
that be stated honestly, and nothing where it does not (docs/methodology.md).

- **Bytes moved at least once**: the workload's input tensors and the operation's outputs,
  shapes resolved with the workload's axes, times their dtypes' sizes. Stated only where that
  is a floor of the traffic: a single-pass (forward) run of an operation that maps over one
  main tensor (every other input's axes are the main one's, no tensor spans an axis twice,
  and every size axis is some tensor's), so that it must read each input and write each
  output once. A gather, a matmul,
  a weight the spec does not list, or a backward pass moves something else.
- **FLOPs**: 2·M·N·K for an operation whose axes are exactly m, n and k, whose inputs and
  outputs are two-dimensional tensors of one dtype the GPU table has a peak for.
- **Achieved** GB/s and TFLOP/s: those over the run's latency (its median); **% of peak**:
  over the GPU's figure in the reviewed table (gpu_peaks.toml). A GPU not in the table gets
  no share.

Computed once a build, a workload's work once however many runs measure it.
"""

from __future__ import annotations

import functools
import math
import tomllib
from collections.abc import Iterable, Mapping
from importlib import resources
from typing import Any, NamedTuple

from sitegen.analysis.kernels import Analysis, RunFacts
from sitegen.content.catalog import Catalog
from sitegen.content.run_summary import LATENCY
from sitegen.model.values import evaluate_expression

# Bytes per element of each dtype the format names; a dtype not here (a packed 4-bit format,
# `float`) has no stated size, so a tensor of it moves an unknown number of bytes.
DTYPE_BYTES = {
    "fp64": 8,
    "fp32": 4,
    "tf32": 4,
    "bf16": 2,
    "fp16": 2,
    "fp8_e4m3": 1,
    "fp8_e5m2": 1,
    "int64": 8,
    "int32": 4,
    "int16": 2,
    "int8": 1,
    "uint8": 1,
    "bool": 1,
}
# The table's throughput column that bounds a matmul of each dtype. An fp32 matmul may run on
# TF32 tensor cores (torch allows it), so its bound is the TF32 figure, the higher.
THROUGHPUT_COLUMN = {
    "fp32": "tf32",
    "tf32": "tf32",
    "bf16": "bf16",
    "fp16": "fp16",
    "fp8_e4m3": "fp8",
    "fp8_e5m2": "fp8",
}
# A pass that runs the operation once: a backward or full pass moves what autograd keeps too.
SINGLE_PASSES = frozenset({"forward", "no-grad-forward", "unspecified"})
MATMUL_AXES = frozenset({"m", "n", "k"})
# An axis that picks the random data, not a size: it is in no tensor's shape, yet hides none.
SEED_AXIS = "seed"
# The `float` dtype of an OperationSpec follows the workload (FORMAT.md §5).
FOLLOWS_WORKLOAD = "float"


class GpuRow(NamedTuple):
    """One row of the reviewed GPU table (gpu_peaks.toml)."""

    product: str
    form: str
    form_factors: tuple[str, ...]
    bandwidth_gbs: float
    throughput_tflops: tuple[tuple[str, float], ...]  # (column, TFLOP/s), in the table's order
    title: str  # the vendor document's title
    url: str
    note: str


class Peak(NamedTuple):
    """What an environment's GPU can do, as the table gives it for that environment."""

    product: str
    form: str  # the form matched, or every form of the product where none was
    matched: bool  # the environment names this form; False: the highest figure of each form
    bandwidth_gbs: float
    throughput_tflops: tuple[tuple[str, float], ...]
    rows: tuple[GpuRow, ...]  # the table's rows it was made of, with their sources

    def throughput(self, column: str) -> float | None:
        return dict(self.throughput_tflops).get(column)


class Work(NamedTuple):
    """What a workload asks of the hardware, where the format states it."""

    bytes_moved: int | None
    flops: int | None
    dtype: str  # the matmul's dtype, where flops are stated; ""
    why_no_bytes: str  # one line, where bytes_moved is None
    why_no_flops: str


class Figures(NamedTuple):
    """A run's speed-of-light figures; a None is a figure that cannot be stated."""

    work: Work
    peak: Peak | None
    seconds: float
    achieved_gbs: float | None
    achieved_tflops: float | None
    peak_tflops: float | None  # the table's figure for the matmul's dtype
    bandwidth_share: float | None  # achieved / peak
    throughput_share: float | None

    @property
    def stated(self) -> bool:
        return self.achieved_gbs is not None or self.achieved_tflops is not None


@functools.cache
def gpu_table() -> tuple[GpuRow, ...]:
    """The reviewed GPU table, in its file's order."""
    text = resources.files("sitegen.analysis").joinpath("gpu_peaks.toml").read_text("utf-8")
    return tuple(_row(item) for item in tomllib.loads(text)["gpu"])


def _row(item: dict[str, Any]) -> GpuRow:
    return GpuRow(
        product=item["product"],
        form=item["form"],
        form_factors=tuple(item["form_factors"]),
        bandwidth_gbs=float(item["bandwidth_gbs"]),
        throughput_tflops=tuple((k, float(v)) for k, v in item["throughput_tflops"].items()),
        title=item["title"],
        url=item["url"],
        note=item["note"],
    )


def peak_of(hardware: Mapping[str, Any], table: tuple[GpuRow, ...] | None = None) -> Peak | None:
    """The peaks of an environment's `hardware`: the row of its product and form factor, else
    the highest figure of each of its product's rows; None for a product not in the table."""
    rows = tuple(r for r in (table or gpu_table()) if r.product == hardware.get("product"))
    if not rows:
        return None
    form_factor = hardware.get("formFactor")
    named = [r for r in rows if form_factor in r.form_factors]
    if named:
        row = named[0]
        return Peak(row.product, row.form, True, row.bandwidth_gbs, row.throughput_tflops, (row,))
    if len(rows) == 1:
        row = rows[0]
        return Peak(row.product, row.form, False, row.bandwidth_gbs, row.throughput_tflops, rows)
    columns: dict[str, float] = {}
    for row in rows:
        for column, value in row.throughput_tflops:
            columns[column] = max(columns.get(column, 0.0), value)
    return Peak(
        rows[0].product,
        " or ".join(r.form for r in rows),
        False,
        max(r.bandwidth_gbs for r in rows),
        tuple(columns.items()),
        rows,
    )


def work_of(operation: Mapping[str, Any], workload: Mapping[str, Any]) -> Work:
    """The bytes a workload moves at least once and the FLOPs it does, where stated (see the
    module's docstring), from the OperationSpec's and the WorkloadCase's specs."""
    axes = _resolved_axes(operation, workload)
    tensors = _tensors(operation, workload, axes)
    flops, dtype, why_no_flops = _matmul(operation, tensors)
    why_no_bytes = _not_tensor_traffic(operation)
    bytes_moved = None
    if not why_no_bytes:
        counted = [_bytes(shape, dtype_of) for shape, dtype_of in tensors.values()]
        if len(tensors) < _tensor_count(operation) or None in counted:
            why_no_bytes = "a tensor's shape or dtype size is not stated"
        else:
            bytes_moved = sum(b for b in counted if b is not None)
    return Work(bytes_moved, flops, dtype, why_no_bytes, why_no_flops)


def _resolved_axes(operation: Mapping[str, Any], workload: Mapping[str, Any]) -> dict[str, int]:
    """The workload's axes, the operation's constants, and each derived axis that evaluates."""
    axes = dict(workload.get("axes", {}))
    declared = operation.get("axes", {})
    for name, axis in declared.items():
        if name not in axes and axis.get("role") == "constant" and "value" in axis:
            axes[name] = axis["value"]
    derived = {n: a["expression"] for n, a in declared.items() if a.get("role") == "derived"}
    # A derived axis may name another: evaluate until nothing more resolves.
    while derived:
        resolved = {}
        for name, expression in derived.items():
            try:
                resolved[name] = evaluate_expression(expression, axes)
            except (KeyError, ValueError, ZeroDivisionError, SyntaxError):
                continue
        if not resolved:
            break
        for name, value in resolved.items():
            axes.setdefault(name, value)
            del derived[name]
    return axes


def _tensors(
    operation: Mapping[str, Any], workload: Mapping[str, Any], axes: Mapping[str, int]
) -> dict[str, tuple[tuple[int, ...] | None, str]]:
    """Each tensor of the operation (inputs, then outputs): its shape (None where an axis does
    not resolve) and dtype. Inputs as the workload states them; outputs from the operation's
    spec, a `float` dtype taking the workload's."""
    stated = workload.get("tensors", {})
    follows = {
        stated[item["name"]]["dtype"]
        for item in operation.get("inputs", ())
        if "tensor" in item
        and item["tensor"]["dtype"] == FOLLOWS_WORKLOAD
        and item["name"] in stated
    }
    found: dict[str, tuple[tuple[int, ...] | None, str]] = {}
    for role in ("inputs", "outputs"):
        for item in operation.get(role, ()):
            if "tensor" not in item:
                continue
            name, tensor = item["name"], item["tensor"]
            if role == "inputs" and name in stated:
                found[f"{role}.{name}"] = (tuple(stated[name]["shape"]), stated[name]["dtype"])
                continue
            dtype = tensor["dtype"]
            if dtype == FOLLOWS_WORKLOAD:
                dtype = next(iter(follows)) if len(follows) == 1 else FOLLOWS_WORKLOAD
            found[f"{role}.{name}"] = (_shape(tensor["shape"], axes), dtype)
    return found


def _shape(dimensions: list[int | str], axes: Mapping[str, int]) -> tuple[int, ...] | None:
    shape = []
    for dimension in dimensions:
        if isinstance(dimension, int):
            shape.append(dimension)
        elif dimension in axes:
            shape.append(axes[dimension])
        else:
            return None
    return tuple(shape)


def _bytes(shape: tuple[int, ...] | None, dtype: str) -> int | None:
    size = DTYPE_BYTES.get(dtype)
    if shape is None or size is None:
        return None
    return math.prod(shape) * size


def _tensor_count(operation: Mapping[str, Any]) -> int:
    return sum(
        1 for role in ("inputs", "outputs") for item in operation.get(role, ()) if "tensor" in item
    )


def _named_axes(item: Mapping[str, Any]) -> set[str]:
    return {d for d in item["tensor"]["shape"] if isinstance(d, str)}


def _repeats_an_axis(item: Mapping[str, Any]) -> bool:
    named = [d for d in item["tensor"]["shape"] if isinstance(d, str)]
    return len(named) != len(set(named))


def _not_tensor_traffic(operation: Mapping[str, Any]) -> str:
    """Why the operation's traffic is not its tensors read and written once; "" when it is."""
    inputs = [item for item in operation.get("inputs", ()) if "tensor" in item]
    outputs = [item for item in operation.get("outputs", ()) if "tensor" in item]
    if not inputs or not outputs:
        return "the operation lists no input or no output tensor"
    main = max(inputs, key=lambda item: len(_named_axes(item)))
    over = _named_axes(main)
    if any(_repeats_an_axis(item) for item in (*inputs, *outputs)):
        return "a tensor spans one axis twice (a weight matrix: a matmul, not a map)"
    if any(not _named_axes(item) <= over for item in inputs):
        return "its inputs do not all map over one tensor (a matmul, a gather or a lookup)"
    shaped = set().union(*(_named_axes(item) for item in (*inputs, *outputs)))
    hidden = {
        name
        for name, axis in operation.get("axes", {}).items()
        if axis.get("role") == "variable" and name != SEED_AXIS and name not in shaped
    }
    if hidden:
        return "a size axis is in no tensor's shape (the operation holds data it does not list)"
    return ""


def _matmul(
    operation: Mapping[str, Any], tensors: Mapping[str, tuple[tuple[int, ...] | None, str]]
) -> tuple[int | None, str, str]:
    """(2·M·N·K, its dtype, "") for a plain matmul; else (None, "", why not)."""
    axes = operation.get("axes", {})
    if set(axes) != MATMUL_AXES:
        return None, "", "not a matrix multiply with axes m, n and k alone"
    dtypes = {dtype for _, dtype in tensors.values()}
    shapes = [shape for shape, _ in tensors.values()]
    if len(dtypes) != 1 or next(iter(dtypes)) not in THROUGHPUT_COLUMN:
        return None, "", "its tensors are not of one dtype with a throughput peak"
    if any(shape is None or len(shape) != 2 for shape in shapes) or len(shapes) != 3:
        return None, "", "not two matrices in and one out"
    inputs = [i["tensor"]["shape"] for i in operation.get("inputs", ()) if "tensor" in i]
    names = {d for shape in inputs for d in shape if isinstance(d, str)}
    if names != MATMUL_AXES:
        return None, "", "its inputs do not span m, n and k"
    sizes = _resolved_axes(operation, {"axes": {}})
    known = {**sizes, **_axes_from(tensors, operation)}
    if not known.keys() >= MATMUL_AXES:
        return None, "", "an axis is not resolved"
    return 2 * known["m"] * known["n"] * known["k"], next(iter(dtypes)), ""


def _axes_from(
    tensors: Mapping[str, tuple[tuple[int, ...] | None, str]], operation: Mapping[str, Any]
) -> dict[str, int]:
    """Each axis's size, read off the tensors' resolved shapes."""
    found: dict[str, int] = {}
    for role in ("inputs", "outputs"):
        for item in operation.get(role, ()):
            if "tensor" not in item:
                continue
            shape = tensors.get(f"{role}.{item['name']}", (None, ""))[0]
            if shape is None:
                continue
            for dimension, size in zip(item["tensor"]["shape"], shape, strict=False):
                if isinstance(dimension, str):
                    found[dimension] = size
    return found


def figures_of(run: RunFacts, work: Work, peak: Peak | None) -> Figures | None:
    """A run's figures: its work over its median latency, against its GPU's peak. None for a
    run that did not pass, has no latency, or is not a single pass."""
    value = run.value(LATENCY, "ns")
    if run.status != "passed" or value is None or value.centre <= 0:
        return None
    if run.pass_name not in SINGLE_PASSES:
        return None
    seconds = value.centre / 1e9
    gbs = work.bytes_moved / seconds / 1e9 if work.bytes_moved is not None else None
    tflops = work.flops / seconds / 1e12 if work.flops is not None else None
    peak_tflops = peak.throughput(THROUGHPUT_COLUMN[work.dtype]) if peak and tflops else None
    return Figures(
        work=work,
        peak=peak,
        seconds=seconds,
        achieved_gbs=gbs,
        achieved_tflops=tflops,
        peak_tflops=peak_tflops,
        bandwidth_share=gbs / peak.bandwidth_gbs if gbs is not None and peak else None,
        throughput_share=tflops / peak_tflops if tflops is not None and peak_tflops else None,
    )


def speed_of_light(
    analysis: Analysis, catalog: Catalog, runs: Iterable[RunFacts] | None = None
) -> dict[str, Figures]:
    """Each run's figures where any can be stated, by run digest (of `runs` alone, if given)."""
    works: dict[str, Work | None] = {}
    peaks: dict[str, Peak | None] = {}
    found: dict[str, Figures] = {}
    for run in analysis.runs.values() if runs is None else runs:
        if run.pass_name not in SINGLE_PASSES:
            continue
        if run.workload not in works:
            works[run.workload] = _work(catalog, run.workload)
        work = works[run.workload]
        if work is None or (work.bytes_moved is None and work.flops is None):
            continue
        if run.environment not in peaks:
            environment = catalog.get(run.environment, "ExecutionEnvironment")
            peaks[run.environment] = peak_of(environment.spec["hardware"]) if environment else None
        figures = figures_of(run, work, peaks[run.environment])
        if figures is not None:
            found[run.digest] = figures
    return found


def _work(catalog: Catalog, workload_digest: str) -> Work | None:
    workload = catalog.get(workload_digest, "WorkloadCase")
    if workload is None:
        return None
    operation = catalog.get(workload.spec["operationSpecDigest"], "OperationSpec")
    if operation is None:
        return None
    return work_of(operation.spec, workload.spec)
