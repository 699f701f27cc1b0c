"""How long `sitegen check` takes on a tree of N resources (default 20,000).

    python bench/check_scale.py [--resources 20000] [--repeat 3]
    python bench/check_scale.py --shape export --resources 50000
    python bench/check_scale.py --shape export --resources 2000 --unused-workloads 400

`--shape authored` (the default) builds the tree from the reference seed row: six supporting
resources plus N−6 runs that vary in median, observation time and name, one file each.
`--shape export` builds what a kernelindex.dev export holds: N run bundles (`{run, protocol,
environment}`, one file each) whose workload and implementation digests name resources the tree
does not hold, so every run carries two dangling optional references (two warnings).
`--unused-workloads K` adds K WorkloadCases that no run uses. Times `sitegen check` in a fresh
process, median of the repeats, and prints one JSON line.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SEED_ROW = Path(__file__).resolve().parents[1] / "tests" / "reference" / "liger-seed-row.json"
# Distinct dangling digests an export's runs name: a real export has a few hundred shapes.
EXPORT_WORKLOADS = 500


def write_tree(root: Path, resources: int) -> None:
    """Six supporting resources and resources − 6 runs that resolve, one file each."""
    seed = json.loads(SEED_ROW.read_text())
    for key, entry in seed.items():
        if key != "run":
            folder = root / key
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{key}.json").write_text(json.dumps(entry["resource"], indent=2))
    for index in range(resources - 6):
        _write_run(root, index, _varied_run(seed["run"]["resource"], index))


def write_export_tree(root: Path, runs: int) -> None:
    """`runs` run bundles whose workload and implementation digests dangle."""
    seed = json.loads(SEED_ROW.read_text())
    protocol = seed["protocol"]["resource"]
    environment = seed["environment"]["resource"]
    for index in range(runs):
        run = _varied_run(seed["run"]["resource"], index)
        shape = index % EXPORT_WORKLOADS
        run["spec"]["workloadDigest"] = _made_up_digest(f"workload {shape}")
        run["spec"]["implementationDigest"] = _made_up_digest(f"implementation {shape % 7}")
        bundle = {"run": run, "protocol": protocol, "environment": environment}
        _write_run(root, index, bundle)


def write_unused_workloads(root: Path, count: int) -> None:
    """`count` WorkloadCases that differ in name and row count, used by no run."""
    seed = json.loads(SEED_ROW.read_text())
    folder = root / "unused-workloads"
    folder.mkdir(parents=True, exist_ok=True)
    for index in range(count):
        workload = copy.deepcopy(seed["workload"]["resource"])
        workload["metadata"]["name"] = f"unused-workload-{index:05d}"
        rows = 1 + index
        workload["spec"]["axes"]["rows"] = rows
        workload["spec"]["tensors"]["x"]["shape"][0] = rows
        (folder / f"unused-workload-{index:05d}.json").write_text(json.dumps(workload, indent=2))


def _varied_run(seed_run: dict[str, Any], index: int) -> dict[str, Any]:
    run = copy.deepcopy(seed_run)
    run["metadata"]["name"] = f"run-{index:07d}"
    run["spec"]["timing"]["latencyNs"]["median"] = 500_000 + index
    run["spec"]["observedAt"] = f"2025-{1 + index % 12:02d}-{1 + index % 28:02d}T00:00:00.000Z"
    return run


def _write_run(root: Path, index: int, document: dict[str, Any]) -> None:
    shard = root / "runs" / f"{index // 1000:03d}"
    shard.mkdir(parents=True, exist_ok=True)
    (shard / f"run-{index:07d}.json").write_text(json.dumps(document, indent=2))


def _made_up_digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resources", type=int, default=20_000)
    parser.add_argument("--shape", choices=("authored", "export"), default="authored")
    parser.add_argument("--unused-workloads", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        content = Path(directory) / "content"
        if args.shape == "export":
            write_export_tree(content, args.resources)
        else:
            write_tree(content, args.resources)
        write_unused_workloads(content, args.unused_workloads)
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            result = subprocess.run(
                [sys.executable, "-m", "sitegen", "check", str(content)],
                capture_output=True,
                text=True,
                check=False,
            )
            times.append(time.perf_counter() - start)
            if result.returncode != 0:
                sys.exit(f"check failed:\n{result.stdout[-2000:]}")
        summary = result.stdout.strip().splitlines()[-1]
    print(
        json.dumps(
            {
                "shape": args.shape,
                "resources": args.resources,
                "unused_workloads": args.unused_workloads,
                "median_s": round(statistics.median(times), 3),
                "runs_s": [round(t, 3) for t in times],
                "report": summary,
            }
        )
    )


if __name__ == "__main__":
    main()
