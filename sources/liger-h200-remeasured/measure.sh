#!/bin/bash
# Liger-Kernel's benchmark scripts run again on the H200 the `device` tool lends, for the cells
# the catalog's data-quality marks doubt (host-bound sweeps, runs with no spread). Run from the
# repository root with Liger-Kernel's benchmark/ and test/ at ead96b6 under .liger/ and the
# wheels under .whl/ (liger-kernel 0.8.5 and what `sitegen environment` needs); writes
# all_benchmark_data.csv, environment.json, record.json and log.txt into $OUT.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
repository=$PWD
# The machine first: what the rows are bound to, read before any benchmark heats it.
python3 -m sitegen environment --name kernelindex-h200-remeasured \
  --library liger-kernel --library transformers --record "$OUT/record.json" \
  >"$OUT/environment.json" 2>>"$OUT/log.txt" || echo "environment failed" >>"$OUT/log.txt"
cd .liger/benchmark/scripts || exit 1
started=$(date +%s)
# Most doubted first (the headline host-bound sweep, then the 44 ms fused linear cross-entropy),
# each script within its own time, all within the command's 10 minutes.
for pair in layer_norm:70 fused_linear_cross_entropy:150 rms_norm:45 embedding:45 rope:45 \
  dyt:60 relu_squared:40 poly_norm:40 sparsemax:40 llama4_rope:40 jsd:45 fused_linear_jsd:60; do
  kernel=${pair%%:*} limit=${pair##*:}
  left=$((560 - $(date +%s) + started))
  [ "$left" -gt 20 ] || { echo "== $kernel: skipped, no time left" >>"$OUT/log.txt"; continue; }
  [ "$limit" -lt "$left" ] || limit=$left
  echo "== $kernel (limit ${limit}s) $(date -u +%FT%TZ)" >>"$OUT/log.txt"
  timeout "$limit" python3 "benchmark_$kernel.py" --overwrite >>"$OUT/log.txt" 2>&1
  echo "== $kernel rc=$? $(date -u +%FT%TZ)" >>"$OUT/log.txt"
  cp ../data/all_benchmark_data.csv "$OUT/all_benchmark_data.csv" 2>/dev/null
done
cd "$repository" && nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >>"$OUT/log.txt"
