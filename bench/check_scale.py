"""How long `sitegen check` takes on a tree of N valid resources (default 20,000).

    python bench/check_scale.py [--resources 20000] [--repeat 3]

Builds the tree from the seed row in tests/reference/ (six supporting resources plus N−6 runs
that vary in median, observation time and name, one file each), then times `sitegen check` in a
fresh process, median of the repeats. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REFERENCE = Path(__file__).resolve().parents[1] / "tests" / "reference"


def write_tree(root: Path, resources: int) -> None:
    seed = json.loads((REFERENCE / "liger-seed-row.json").read_text())
    for key, entry in seed.items():
        if key != "run":
            folder = root / key
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{key}.json").write_text(json.dumps(entry["resource"], indent=2))
    runs = root / "runs"
    for index in range(resources - 6):
        run = copy.deepcopy(seed["run"]["resource"])
        run["metadata"]["name"] = f"run-{index:07d}"
        run["spec"]["timing"]["latencyNs"]["median"] = 500_000 + index
        run["spec"]["observedAt"] = f"2025-{1 + index % 12:02d}-{1 + index % 28:02d}T00:00:00.000Z"
        shard = runs / f"{index // 1000:03d}"
        shard.mkdir(parents=True, exist_ok=True)
        (shard / f"run-{index:07d}.json").write_text(json.dumps(run, indent=2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resources", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        content = Path(directory) / "content"
        write_tree(content, args.resources)
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
                "resources": args.resources,
                "median_s": round(statistics.median(times), 3),
                "runs_s": [round(t, 3) for t in times],
                "report": summary,
            }
        )
    )


if __name__ == "__main__":
    main()
