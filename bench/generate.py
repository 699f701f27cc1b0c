"""Synthetic kernelindex catalogs of N runs, scaled from the real Liger rows in `content/`.

    .venv/bin/python bench/generate.py 100000 [--out bench/out]

Every real resource is kept. Run variant 0 of a real run is the run itself; variant v > 0 moves
it to another GPU (six more environments: H200, MI300X, L40S, A10G, GH200, MI250X), another
shape (the workload's last axis ×2 or ×4), another implementation revision (a "nightly" build)
and a later date, and perturbs its median, p20 and p80 plausibly (a per-GPU speed factor, a shape
factor, a revision factor and a few percent of noise; p20 ≤ median ≤ p80 kept). About one run in
200 is not `passed`. Digests come from sitegen's own digest code, names and external ids are
rewritten, and the same N and seed always give the same bytes. The tree is cached under
`bench/out/catalog-<N>/` with a stamp of the generator's version; the Hugo twin of the same runs
(one Markdown page per run) is written beside it (`bench/hugo_site.py`).
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import math
import multiprocessing
import os
import random
import shutil
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

REPOSITORY = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPOSITORY))

from bench import hugo_site  # noqa: E402
from sitegen.content.load import load_content  # noqa: E402
from sitegen.content.loaded import LoadedResource  # noqa: E402
from sitegen.model.digest import canonical_json, digest, identity_document  # noqa: E402
from sitegen.model.resources import KINDS  # noqa: E402

GENERATOR_VERSION = "5"
SEED = 20260101
# The Liger part of the real catalog: its runs are the rows each variant copies, and it holds
# every resource they reference (the kernelindex.dev part has record histories that name its
# own runs, which a scaled catalog would not carry).
CONTENT = REPOSITORY / "content" / "liger"
OUT = REPOSITORY / "bench" / "out"
STAMP = ".generated"

# New GPUs: (file slug, vendor, product, architecture, form factor, speed relative to H100).
NEW_GPUS = (
    ("nvidia-h200", "nvidia", "NVIDIA H200", "sm_90", "141GB HBM3e", 0.86),
    ("amd-mi300x", "amd", "AMD Instinct MI300X", "gfx942", "192GB HBM3", 0.95),
    ("nvidia-l40s", "nvidia", "NVIDIA L40S", "sm_89", "48GB GDDR6", 2.1),
    ("nvidia-a10g", "nvidia", "NVIDIA A10G", "sm_86", "24GB GDDR6", 3.6),
    ("nvidia-gh200", "nvidia", "NVIDIA GH200", "sm_90", "96GB HBM3", 0.9),
    ("amd-mi250x", "amd", "AMD Instinct MI250X", "gfx90a", "128GB HBM2e", 1.9),
)
REAL_SPEED = {  # by environment name fragment, relative to H100
    "a100": 1.7,
    "b200": 0.6,
    "rtx-3090": 2.8,
    "rtx-4090": 1.9,
    "h100-80gb": 1.0,
    "h100-pcie": 1.25,
}
SHAPE_FACTORS = (1, 2, 4)
REVISIONS = ("", "nightly")
ENVIRONMENTS = 12  # 6 real + 6 new
BAD_STATUSES = ("runtime_error", "timeout", "incorrect_numerical", "compile_error")


def dump(document: dict[str, Any]) -> bytes:
    return orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n"


def resource_digest(document: dict[str, Any]) -> str:
    """Validated by the site's own models, hashed by the site's own digest code."""
    model = KINDS[document["kind"]].model_validate(document)
    return digest(document["kind"], model.spec_json())


class Base:
    """The real catalog and the supporting resources the variants need, built once."""

    def __init__(self) -> None:
        loaded = load_content(CONTENT)
        if loaded.problems:
            raise SystemExit(f"content/ has problems: {loaded.problems[:3]}")
        self.entries: list[LoadedResource] = sorted(loaded.resources, key=lambda e: e.path)
        self.runs = sorted(
            (e for e in self.entries if e.kind == "BenchmarkRun"), key=lambda e: e.digest
        )
        self.by_digest = {e.digest: e for e in self.entries}
        self.files: dict[str, bytes] = {}  # relative path → bytes of every non-run resource
        self.documents: dict[str, dict[str, Any]] = {}  # digest → document, non-run resources
        self.paths: dict[str, str] = {}  # digest → site path, for the Hugo pages' links
        for entry in self.entries:
            if entry.kind != "BenchmarkRun":
                document = entry.resource.document_json()
                self.files[loose_path(entry)] = dump(document)
                self.add(entry.digest, document)
        self.environments = sorted(
            (e for e in self.entries if e.kind == "ExecutionEnvironment"), key=lambda e: e.name
        )
        self.speed = {e.digest: _real_speed(e.name) for e in self.environments}
        self.env_order = [e.digest for e in self.environments]
        for slug, vendor, product, architecture, form, speed in NEW_GPUS:
            document = {
                "apiVersion": "kernelindex.dev/v1alpha1",
                "kind": "ExecutionEnvironment",
                "metadata": {"name": f"bench-{slug}", "title": f"Synthetic host · {product}"},
                "spec": {
                    "hardware": {
                        "vendor": vendor,
                        "product": product,
                        "architecture": architecture,
                        "formFactor": form,
                    },
                    "software": {},
                },
            }
            value = resource_digest(document)
            self.files[f"environments/bench-{slug}.json"] = dump(document)
            self.add(value, document)
            self.speed[value] = speed
            self.env_order.append(value)
        self.env_slugs = {d: _env_slug(self, d) for d in self.env_order}
        self.workloads: dict[
            tuple[str, int], tuple[str, str]
        ] = {}  # (digest, factor) → (digest, label)
        self.implementations: dict[tuple[str, str], str] = {}

    def add(self, value: str, document: dict[str, Any]) -> None:
        self.documents[value] = document
        section = {
            "OperationSpec": "kernels",
            "WorkloadCase": "workloads",
            "ImplementationRevision": "implementations",
            "SoftwareProject": "projects",
            "BenchmarkProtocol": "protocols",
            "ExecutionEnvironment": "gpus",
        }[document["kind"]]
        self.paths[value] = f"/{section}/{document['metadata']['name']}/"

    def workload(self, value: str, factor: int) -> tuple[str, str]:
        """The workload `value` with its last axis scaled by `factor`: (digest, name suffix)."""
        if factor == 1 or value not in self.by_digest:
            return value, ""
        key = (value, factor)
        if key in self.workloads:
            return self.workloads[key]
        entry = self.by_digest[value]
        document = copy.deepcopy(entry.resource.document_json())
        axes = document["spec"]["axes"]
        axis = list(axes)[-1]
        old = axes[axis]
        axes[axis] = old * factor
        for tensor in document["spec"]["tensors"].values():
            tensor["shape"] = [d * factor if d == old else d for d in tensor["shape"]]
        suffix = f"-{axis.replace('_', '-')}x{factor}"
        document["metadata"]["name"] = entry.name[: 200 - len(suffix)] + suffix
        title = document["metadata"].get("title", entry.name)
        document["metadata"]["title"] = f"{title[:170]} · {axis} ×{factor}"
        new = resource_digest(document)
        if new not in self.by_digest:
            self.add(new, document)
            folder = loose_path(entry).rsplit("/", 1)[0]
            self.files[f"{folder}/{document['metadata']['name']}.json"] = dump(document)
        self.workloads[key] = (new, suffix)
        return self.workloads[key]

    def implementation(self, value: str, revision: str) -> str:
        if not revision or value not in self.by_digest:
            return value
        key = (value, revision)
        if key not in self.implementations:
            entry = self.by_digest[value]
            document = copy.deepcopy(entry.resource.document_json())
            document["spec"]["projectRevision"]["version"] = revision
            document["metadata"]["name"] = f"{entry.name[:180]}-{revision}"
            title = document["metadata"].get("title", entry.name)
            document["metadata"]["title"] = f"{title[:180]} ({revision})"
            self.implementations[key] = resource_digest(document)
            self.add(self.implementations[key], document)
            self.files[f"implementations/{document['metadata']['name']}.json"] = dump(document)
        return self.implementations[key]

    def plan(self, n: int) -> list[tuple[int, int]]:
        """(variant, base run index) for the first n runs, variant-major."""
        found = []
        for variant in range(math.ceil(n / len(self.runs))):
            for index in range(len(self.runs)):
                if len(found) == n:
                    return found
                found.append((variant, index))
        return found

    def prepare(self, plan: list[tuple[int, int]]) -> None:
        """Create every supporting resource the plan's variants use (before forking)."""
        for variant, index in plan:
            if variant:
                spec = self.runs[index].resource.spec_json()
                _, shape, revision, _ = split(variant)
                self.workload(spec["workloadDigest"], SHAPE_FACTORS[shape])
                self.implementation(spec["implementationDigest"], REVISIONS[revision])


def loose_path(entry: LoadedResource) -> str:
    """Where a resource is written in the scaled catalog: its own file's path under CONTENT,
    or for a line of a bulk file (`runs/x/history.jsonl.zst:12`), a file of its own
    (`runs/x/history/12.json`)."""
    relative = entry.path.split("/", 1)[1]
    if ":" not in relative:
        return relative
    file, line = relative.rsplit(":", 1)
    return f"{file.split('.jsonl', 1)[0]}/{line}.json"


def _real_speed(name: str) -> float:
    for fragment, speed in REAL_SPEED.items():
        if fragment in name:
            return speed
    return 1.0


def _env_slug(base: Base, value: str) -> str:
    entry = base.by_digest.get(value)
    if entry is not None:
        return entry.name.removeprefix("liger-bench-")
    index = base.env_order.index(value) - len(base.environments)
    return NEW_GPUS[index][0]


def split(variant: int) -> tuple[int, int, int, int]:
    """variant → (environment rank, shape, revision, date step)."""
    return (
        variant % ENVIRONMENTS,
        (variant // ENVIRONMENTS) % len(SHAPE_FACTORS),
        (variant // (ENVIRONMENTS * len(SHAPE_FACTORS))) % len(REVISIONS),
        variant // (ENVIRONMENTS * len(SHAPE_FACTORS) * len(REVISIONS)),
    )


_BASE: Base | None = None


def variant_run(variant: int, index: int) -> tuple[str, bytes, dict[str, Any]]:
    """(relative path, bytes, document) of one run."""
    assert _BASE is not None
    base = _BASE
    entry = base.runs[index]
    relative = loose_path(entry)
    if variant == 0:
        document = entry.resource.document_json()
        return relative, dump(document), document
    rng = random.Random(f"{SEED}:{variant}:{entry.digest}")
    document = copy.deepcopy(entry.resource.document_json())
    spec, metadata = document["spec"], document["metadata"]
    rank, shape, revision, step = split(variant)
    own = spec["environmentDigest"]
    order = [own] + [d for d in base.env_order if d != own]
    environment = order[rank]
    workload, shape_suffix = base.workload(spec["workloadDigest"], SHAPE_FACTORS[shape])
    implementation = base.implementation(spec["implementationDigest"], REVISIONS[revision])
    spec["environmentDigest"] = environment
    spec["workloadDigest"] = workload
    spec["implementationDigest"] = implementation
    memory = "timing" not in spec
    speed = base.speed.get(environment, 1.0) / base.speed.get(own, 1.0)
    factor = (SHAPE_FACTORS[shape] ** 0.9) * rng.lognormvariate(0, 0.03)
    if not memory:
        factor *= speed * (0.93 if revision else 1.0)
    else:
        factor *= 1.0 if not revision else 0.97
    observed = datetime.fromisoformat(spec["observedAt"].replace("Z", "+00:00"))
    observed += timedelta(days=37 * step + 3 * shape + revision, hours=rank, seconds=index % 60)
    spec["observedAt"] = observed.strftime("%Y-%m-%dT%H:%M:%S.000Z")
    stamp = observed.strftime("%Y-%m-%d-%H-%M-%S")
    if rng.random() < 0.005:
        spec["status"] = rng.choice(BAD_STATUSES)
    _perturb(spec, factor, rng, memory)
    provider_suffix = f" {REVISIONS[revision]}" if revision else ""
    title = metadata.get("title")
    if title and provider_suffix:
        parts = title.split(" · ")
        parts[1] += provider_suffix
        metadata["title"] = " · ".join(parts)
    env_slug = base.env_slugs[environment]
    native = spec.get("sourceNative")
    if native is not None and "externalId" in native:
        own_slug = base.env_slugs[own]
        parts = native["externalId"].split("/")
        parts = [env_slug if part == own_slug else part for part in parts[:-1]] + [stamp]
        if revision:
            parts.insert(-1, REVISIONS[revision])
        if shape_suffix:
            parts.insert(-1, shape_suffix.lstrip("-"))
        native["externalId"] = "/".join(parts)[:500]
    tag = f"-v{variant}"
    metadata["name"] = entry.name[: 200 - len(tag)].rstrip("-.") + tag
    folder, name = relative.rsplit("/", 1)
    path = f"{folder}/{env_slug}/{name.removesuffix('.json')}.v{variant}.json"
    return path, dump(document), document


def _perturb(spec: dict[str, Any], factor: float, rng: random.Random, memory: bool) -> None:
    low_noise, high_noise = 1 - abs(rng.gauss(0, 0.004)), 1 + abs(rng.gauss(0, 0.006))
    if memory:
        by = {m["statistic"]: m for m in spec["measurements"]}
        median = round(by["median"]["value"] * factor, 3)
        values = {"median": median, "p20": median * low_noise, "p80": median * high_noise}
        for statistic, measurement in by.items():
            measurement["value"] = round(values.get(statistic, median), 6)
        keys = {"mib_50": "median", "mib_20": "p20", "mib_80": "p80"}
    else:
        latency = spec["timing"]["latencyNs"]
        median = max(1, round(latency["median"] * factor))
        latency["median"] = median
        values = {"median": median}
        for measurement in spec.get("measurements", []):
            if measurement["metric"] == "latency":
                noise = low_noise if measurement["statistic"] == "p20" else high_noise
                measurement["value"] = max(1, round(median * noise))
                values[measurement["statistic"]] = measurement["value"]
        keys = {"ms_50": "median", "ms_20": "p20", "ms_80": "p80"}
    metrics = spec.get("sourceNative", {}).get("metrics")
    if metrics:
        for key in metrics:
            statistic = keys.get(key)
            if statistic in values:
                raw = values[statistic]
                metrics[key] = raw / 1e6 if not memory else raw


def _write_chunk(job: tuple[Path, Path, list[tuple[int, int]]]) -> int:
    root, hugo_root, items = job
    assert _BASE is not None
    made: set[str] = set()
    for variant, index in items:
        relative, data, document = variant_run(variant, index)
        folder = relative.rsplit("/", 1)[0]
        if folder not in made:
            (root / folder).mkdir(parents=True, exist_ok=True)
            made.add(folder)
        (root / relative).write_bytes(data)
        value = digest("BenchmarkRun", document["spec"])
        canonical = canonical_json(identity_document("BenchmarkRun", document["spec"]))
        markdown = hugo_site.page(value, document, canonical, _BASE.documents, _BASE.paths)
        short = value.removeprefix("sha256:")[:16]
        (hugo_root / "content" / "runs" / f"{short}.md").write_text(markdown)
    return len(items)


def stamp_text(n: int) -> str:
    here = Path(__file__).parent
    source = (here / "generate.py").read_bytes() + (here / "hugo_site.py").read_bytes()
    version = hashlib.sha256(source).hexdigest()[:16]
    return f"runs {n}\nseed {SEED}\ngenerator {GENERATOR_VERSION} {version}\n"


def catalog(n: int, out: Path = OUT, processes: int | None = None) -> tuple[Path, Path]:
    """The cached content tree of n runs and its Hugo twin (generated when missing or stale)."""
    global _BASE
    root, hugo_root = out / f"catalog-{n}", out / f"hugo-{n}"
    if (root / STAMP).is_file() and (root / STAMP).read_text() == stamp_text(n):
        return root, hugo_root
    shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(hugo_root, ignore_errors=True)
    root.mkdir(parents=True)
    hugo_site.write_skeleton(hugo_root)
    _BASE = base = Base()
    plan = base.plan(n)
    base.prepare(plan)
    for relative, data in base.files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_bytes(data)
    shutil.copytree(CONTENT / "_sources", root / "_sources")
    chunks = [(root, hugo_root, plan[i : i + 2000]) for i in range(0, len(plan), 2000)]
    workers = processes or os.cpu_count() or 1
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        written = sum(pool.imap_unordered(_write_chunk, chunks))
    assert written == n
    (root / STAMP).write_text(stamp_text(n))
    return root, hugo_root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=int)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    for path in catalog(args.runs, args.out):
        print(path)


if __name__ == "__main__":
    main()
