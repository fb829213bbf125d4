#!/usr/bin/env bash
# bench-update.sh — run THERE (the GPU machine), after prepare.sh HERE with
#   scripts/gpu/prepare.sh ./policy
# One run, one machine, the same shapes: troupe's update (old log-probs +
# one AdamW step; BenchmarkUpdateCUDA: packed and padded micro-batches of 8
# and 2 rows, and activation checkpointing) beside transformers' train step
# (hf_reference.py time-train: bf16 autocast, fused AdamW), Qwen2.5-0.5B and
# 1.5B shapes, 8 × 1024 tokens. Prints tokens/s, MFU and peak memory for
# both. troupe's MFU counts its old-log-prob pass (8·N·tokens);
# transformers' is 6·N·tokens. Output in $OUT (or .gpu/logs): bench-update.txt.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh" bench-update.txt

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
say "gpu: $gpu"
peak=989 # dense bf16 TFLOP/s of an H100 / H200 SXM
if [ ! -f build-gpu/libtshim.so ]; then
  bash scripts/gpu/build-shim.sh build-gpu >"$logs/build-shim.log" 2>&1 || { say "shim build failed"; tail -20 "$logs/build-shim.log"; exit 1; }
fi
export LD_LIBRARY_PATH="$root/build-gpu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export TROUPE_CUDA=1

for shape in 0.5b 1.5b; do
  say "== $shape: troupe update (8 x 1024 tokens, bf16, f32 master weights)"
  (cd policy && TROUPE_BENCH_SHAPE=$shape ../.gpu/bin/policy.test -test.run '^$' -test.bench 'UpdateCUDA' -test.benchtime 3x 2>&1) |
    grep -E 'Benchmark|FAIL|panic' |
    awk -v peak=$peak '{ for (i = 1; i <= NF; i++) if ($(i+1) == "TFLOP/s") mfu = $i / peak * 100; printf "%s  MFU %.1f%%\n", $0, mfu }' |
    tee -a "$report"
  say "== $shape: transformers train step"
  "$py" scripts/gpu/hf_reference.py time-train --shape "$shape" --batch 8 --seq 1024 --json "$logs/hf-train-$shape.json" 2>&1 |
    grep -v '^{' | tail -3 | tee -a "$report"
  say "   peak memory: $(grep -o '"peak_mem_gib": [0-9.]*' "$logs/hf-train-$shape.json" 2>/dev/null)"
done
