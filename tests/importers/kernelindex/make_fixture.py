"""Write fixture-export.jsonl.zst, a small slice of the real export (sources/kernelindex/), with
the rows its runs name by id: run `python tests/importers/kernelindex/make_fixture.py`.

The slice: every submission to `gpumode-amd-fp8-mm` at its first two workloads (AMD MI300X, a
leaderboard of 98 submissions with record history), every run of a FlashInfer operation with
failed runs and of one with several workloads, a few NVIDIA SOL-ExecBench runs (a source
without a policy) and one row of each other table (serving tables included, which the import
skips).
"""

from __future__ import annotations

import io
import json
from collections import defaultdict
from pathlib import Path

import zstandard

ROOT = Path(__file__).resolve().parents[3]
EXPORT = ROOT / "sources/kernelindex/catalog-2026-08-16-0022af0b.jsonl.zst"
FIXTURE = Path(__file__).with_name("fixture-export.jsonl.zst")
LEADERBOARD, LEADERBOARD_WORKLOADS = "gpumode-amd-fp8-mm", 2
# Operation slug → how many of its runs (in export order) the slice takes; None: all.
OPERATIONS = {
    "gpumode-amd-fp8-mm": None,
    "gemm-fp4-fp6-n2048-k2048": None,
    "gemm-n4096-k4096": 12,
    "013-gqa-paged-decode-h32-kv8-d128-ps1": 3,
}


def main() -> None:
    lines: list[tuple[str, dict]] = []
    with open(EXPORT, "rb") as raw:
        reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
        for line in io.TextIOWrapper(reader, encoding="utf-8"):
            value = json.loads(line)
            lines.append((value["table"], value["row"]))
    by_table: dict[str, dict[str, dict]] = defaultdict(dict)
    for table, row in lines:
        if "id" in row:
            by_table[table][row["id"]] = row
    operations = {row["slug"]: row["id"] for row in by_table["operations"].values()}
    wanted_operations = {operations[slug]: limit for slug, limit in OPERATIONS.items()}
    taken: dict[str, set[str]] = defaultdict(set)
    counts: dict[str, int] = defaultdict(int)
    workloads_of: dict[str, list[str]] = defaultdict(list)  # operation → its workloads taken
    for table, row in lines:
        if table != "benchmark_runs":
            continue
        operation = by_table["workloads"][row["workloadId"]]["operationId"]
        if operation not in wanted_operations:
            continue
        limit = wanted_operations[operation]
        if limit is not None and counts[operation] >= limit:
            continue
        # Of a leaderboard, every submission at its first two workloads.
        seen = workloads_of[operation]
        if row["workloadId"] not in seen:
            if operation == operations[LEADERBOARD] and len(seen) == LEADERBOARD_WORKLOADS:
                continue
            seen.append(row["workloadId"])
        counts[operation] += 1
        taken["benchmark_runs"].add(row["id"])
        taken["sources"].add(row["sourceId"])
        implementation = by_table["implementations"][row["implementationId"]]
        workload = by_table["workloads"][row["workloadId"]]
        taken["implementations"].add(implementation["id"])
        taken["projects"].add(implementation["projectId"])
        taken["workloads"].add(workload["id"])
        taken["operations"].update({implementation["operationId"], workload["operationId"]})
    taken["sources"].update(by_table["sources"])  # every source: one states no policy
    first_of: dict[str, bool] = {}
    kept = []
    for table, row in lines:
        if table == "record_events":
            keep = row["runId"] in taken["benchmark_runs"]
        elif table == "measurements":
            keep = row["runId"] in taken["benchmark_runs"]
        elif table in taken:
            keep = row.get("id") in taken[table]
        else:  # one row of every other table
            keep = not first_of.get(table)
            first_of[table] = True
        if keep:
            kept.append(json.dumps({"table": table, "row": row}, ensure_ascii=False) + "\n")
    data = "".join(kept).encode("utf-8")
    FIXTURE.write_bytes(zstandard.ZstdCompressor(level=19).compress(data))
    print(f"{FIXTURE}: {len(kept)} rows, {FIXTURE.stat().st_size} bytes")


if __name__ == "__main__":
    main()
