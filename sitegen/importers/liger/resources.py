"""The resources a bound row imports to, named as FORMAT.md §5 says."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources as package_files
from typing import Any

from sitegen.importers.liger.bindings import BINDINGS, Binding, Unbound, case_key
from sitegen.importers.liger.gpus import gpu_of
from sitegen.importers.liger.providers import PROJECTS, PROVIDERS, REPOSITORY
from sitegen.importers.liger.rows import Row
from sitegen.importers.liger.sources import Origin
from sitegen.model.digest import API_VERSION, digest
from sitegen.model.names import kebab
from sitegen.model.values import evaluate_expression

Json = dict[str, Any]

METRICS = {("speed", "ms"): "latency", ("memory", "MB"): "peak_memory"}


# What each pass times, in the words of the protocol notes.
PASSES = {
    "forward": "the module forward pass",
    "backward": "the backward pass of the module output given a random upstream gradient",
    "full": "the forward pass plus the backward pass",
    "no-grad-forward": "the module forward pass under torch.no_grad()",
}


def nanoseconds(milliseconds: float) -> int:
    """ECMAScript `Math.round(ms * 1e6)`: halves round up (46.8328125 ms → 46832813 ns)."""
    return math.floor(milliseconds * 1e6 + 0.5)


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
    """The OperationSpecs shipped beside this module (operations/*.json)."""
    folder = package_files.files("sitegen.importers.liger") / "operations"
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


@dataclass(frozen=True)
class CodeRevision:
    """The Liger-Kernel code a history row measured: its commit, else its release alone (a row
    carried over from an earlier publication)."""

    commit: str | None  # the full commit
    version: str  # the package version the row records (`liger_version`)


@cache
def implementation(key: str, provider_name: str, revision: CodeRevision | None = None) -> Built:
    """Liger's implementation of `key` by `provider_name`; at `revision` when the row says which
    code it measured (the history), else with an empty projectRevision (FORMAT.md §5). Other
    projects' code is not versioned by Liger's commit: their implementations never carry it."""
    provider = PROVIDERS[provider_name]
    op = operation(BINDINGS[key].operation)
    project_revision: Json = {}
    at = ""
    if revision is not None and provider.is_liger:
        project_revision = {"repository": REPOSITORY}
        if revision.commit:
            project_revision["commit"] = revision.commit
            at = revision.commit[:7]
        else:
            at = f"v{revision.version}"
        project_revision["version"] = revision.version
    spec: Json = {
        "projectRevision": project_revision,
        "operation": {"specDigest": op.digest},
        "callable": {"language": provider.language},
        "support": {"hardwareArchitectures": [], "dtypes": []},
    }
    if provider.interface:
        spec["callable"]["interface"] = provider.interface
    if provider.is_liger:
        spec["buildVariants"] = [
            {"name": "pip", "install": {"kind": "pip", "package": "liger-kernel"}}
        ]
        spec["licensing"] = {"declared": provider.licence, "concluded": provider.licence}
    else:
        spec["licensing"] = {"declared": provider.licence}
    name = kebab(f"liger-bench-{key}-{provider_name}" + (f"-{at}" if at else ""))
    metadata: Json = {
        "name": name,
        "title": f"{op.document['metadata']['title']} · {provider.title}"
        + (f" @ {at}" if at else ""),
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
    """The host of upstream's rows on `gpu_name`: hardware by the GPU table, else by the name."""
    gpu, _ = gpu_of(gpu_name)
    hardware = {"vendor": gpu.vendor, "product": gpu.product, "architecture": gpu.architecture}
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
            value = evaluate_expression(op_spec["axes"][dimension]["expression"], axes)
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


def benchmark_run(
    row: Row,
    binding: Binding,
    metric: str,
    refs: Mapping[str, Built],
    origin: Origin,
    revision_labels: Mapping[str, str] | None = None,
) -> Built:
    """The BenchmarkRun of one row; `refs` holds the resources it points at."""
    mode, provider, gpu_name = row["kernel_operation_mode"], row["kernel_provider"], row["gpu_name"]
    case = case_key(binding.axes, binding.dtype)
    timestamp = row["timestamp"]
    memory = metric == "peak_memory"
    # Backend files, measured machines and memory rows get a segment of their own: no row shares
    # another's identity.
    prefix = [origin.tag] if origin.tag else []
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
        "source": origin.source,
        "benchmark": f"{row['kernel_name']}/{mode}",
        "externalId": external_id,
        "metrics": metrics,
    }
    spec["observedAt"] = timestamp.replace(" ", "T") + ".000Z"  # the CSV's zone-less time is UTC
    kernel_title = operation(binding.kernel.operation).document["metadata"]["title"]
    labels = {"liger_version": row["liger_version"]}
    if binding.model:
        labels["model_config"] = binding.model
    labels.update(revision_labels or {})
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


def with_labels(run: Built, labels: Mapping[str, str]) -> Built:
    """`run` with more labels: metadata, so its digest stays (a row published twice)."""
    metadata = run.document["metadata"]
    more = {**metadata, "labels": {**metadata["labels"], **labels}}
    document = {**run.document, "metadata": more}
    return Built(run.path, document, run.digest)
