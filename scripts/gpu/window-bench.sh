#!/usr/bin/env bash
# shellcheck disable=SC2317 # functions run through window.sh's stage
# window-bench.sh — call 2 of a GPU window (docs/gpu.md, "The window plan"):
# run THERE right after window-tests.sh, on the same warm machine (its
# build-gpu/ is reused; a bare machine builds it first, 1–2 minutes more).
# Within WINDOW_BUDGET seconds (default 480), troupe beside transformers in
# the same run, Qwen2.5 shapes, random bf16 weights:
#
#   1. decode tokens/s of the engine at batch 1, 32 and 256 (0.5B, 128-token
#      prompts, 128 new tokens, graphs off and on); transformers' generate is
#      not timed again (host-bound on these machines: docs/gpu.md has its
#      figures);
#   2. the log-prob head alone (torch's BenchmarkLinearTokenLogProbs: 6,144
#      positions, vocabulary 151,936, width 896 and 1,536, entropy none,
#      for the metric, or in the loss, T 1 and 0.7): ms, TFLOP/s, peak
#      against the planned formula;
#   3. the update (one AdamW step, 8 × 1024 tokens, packed micro-batches of
#      8) at 0.5B and 1.5B: tokens/s, TFLOP/s, peak; and transformers' train
#      step on the same shapes;
#   4. the kernel table of `train bench --profile` over the 0.5B update (4
#      updates: a warm-up and 3 timed), its first rows in the report;
#   5. two Dr. MAS steps (bin/train) of a Solver and a Verifier, each its own
#      1.5B-shaped model, 32 prompts × 8, CUDA graphs on: per-phase seconds
#      and peaks from metrics.jsonl, GPU busy % from nvidia-smi.
#
# Then a summary table (WINDOW_DRY=1: a rehearsal on CPU, window.sh). The
# report goes to $OUT (or .gpu/logs), the logs packed beside it.
# Estimated on a warm H100: engine 90 s, head 30 s, update 60 s, train step
# 60 s, profile 40 s, Dr. MAS 120–180 s: about 6–7 minutes.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh" window-bench.txt
. "$(dirname "${BASH_SOURCE[0]}")/window.sh"

[ -f .gpu/tests.txt ] || { say "window-bench: no .gpu/tests.txt: run scripts/gpu/prepare.sh here first and carry .gpu"; exit 1; }
say "prepared: $(tr '\n' ';' <.gpu/PREPARED 2>/dev/null)"
say "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null)"
say "torch: $("$py" -c 'import torch, transformers; print(torch.__version__, "transformers", transformers.__version__)' 2>&1 | tail -1)"
peak=989 # dense bf16 TFLOP/s of an H100 / H200 SXM

shim=build-gpu
if [ "$dry" = 1 ]; then
  shim=build
elif [ ! -f build-gpu/libtshim.so ]; then
  [ -d .gpu/gloo-include/gloo ] && export GLOO_INCLUDE=$root/.gpu/gloo-include
  stage make-gpu 300 env PYTHON="$py" bash scripts/gpu/make-gpu.sh || finish
fi
export LD_LIBRARY_PATH="$root/$shim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[ "$dry" = 1 ] || export TROUPE_CUDA=1
# hf STAGE ARGS...: a transformers timing (not in a dry run: minutes on a CPU)
hf() {
  local name=$1
  shift
  if [ "$dry" = 1 ]; then
    note "$name" "dry run: skipped"
    return 0
  fi
  stage "$name" 120 "$py" scripts/gpu/hf_reference.py "$@"
}

bench() { # bench SHAPE BINARY PATTERN COUNT: COUNT timed iterations of each matching benchmark
  local shape=$1 bin=$2 pattern=$3 count=$4 dir=${2%%.*} rc=0
  (cd "$dir" && TROUPE_BENCH_SHAPE=$shape "$root/.gpu/bin/$bin" -test.run '^$' -test.bench "$pattern" \
    -test.benchtime "${count}x" -test.timeout 8m) >"$logs/$bin-$shape.out" 2>&1 || rc=$?
  grep -E '^Benchmark|FAIL|panic|^\s+\S+_test\.go' "$logs/$bin-$shape.out"
  return "$rc"
}

stage engine-0.5b 150 bench 0.5b model.test 'EngineCUDA/^batch=(1|32|256)$/' 1
grep -E '^Benchmark' "$logs/engine-0.5b.log" | tee -a "$report"
reps=10
[ "$dry" = 1 ] && reps=1
for shape in 0.5b 1.5b; do
  stage "head-$shape" 60 bench "$shape" torch.test 'LinearTokenLogProbs' "$reps"
  grep -E '^Benchmark' "$logs/head-$shape.log" | tee -a "$report"
done

for shape in 0.5b 1.5b; do
  stage "update-$shape" 90 bench "$shape" policy.test 'UpdateCUDA/^micro=8$/^packed$' 3
  grep -E '^Benchmark' "$logs/update-$shape.log" |
    awk -v peak=$peak '{ for (i = 1; i <= NF; i++) if ($(i+1) == "TFLOP/s") mfu = $i / peak * 100; printf "%s  MFU %.1f%% (6·N·tokens)\n", $0, mfu }' |
    tee -a "$report"
  hf "hf-train-$shape" time-train --shape "$shape" --batch 8 --seq 1024 --reps 3 --json "$logs/hf-train-$shape.json"
  grep -v '^{' "$logs/hf-train-$shape.log" 2>/dev/null | tail -n 3 | tee -a "$report"
done

# the update's kernels: train bench's update (padded rows, one AdamW step)
# under torch's profiler; a dry run: the tiny shape in float32 on the CPU,
# where no kernel table is written and the command says so
profile_update() {
  set -e
  local args=(--shape qwen2.5-0.5b --dtype bfloat16 --update-len 1024)
  [ "$dry" = 1 ] && args=(--shape tiny --dtype float32 --update-len 64)
  rm -f "$logs/update-0.5b".*
  ./.gpu/bin/train bench "${args[@]}" --device "$device" --update-only --update-rows 8 --reps 3 \
    --profile "$logs/update-0.5b"
}
stage profile-update-0.5b 120 profile_update
if [ -f "$logs/update-0.5b.kernels.txt" ]; then
  head -n 30 "$logs/update-0.5b.kernels.txt" | tee -a "$report"
else
  grep -E '^profile' "$logs/profile-update-0.5b.log" | tee -a "$report"
fi

drmas() {
  set -e
  local work=$root/.gpu/drmas
  rm -rf "$work"
  # the 1.5B shape; a dry run: a tiny one, 4 prompts x 2 of 16 tokens
  local shape=(--hidden 1536 --layers 28 --heads 12 --kv-heads 2 --head-dim 128 --intermediate 8960)
  local size=(--set batch.prompts_per_step=32 --set batch.n=8 --set max_new_tokens=256)
  if [ "$dry" = 1 ]; then
    shape=(--hidden 64 --layers 2 --heads 4 --kv-heads 2 --head-dim 16 --intermediate 128)
    size=(--set batch.prompts_per_step=4 --set batch.n=2 --set max_new_tokens=16)
  fi
  ./.gpu/bin/train init "$work/model" --family qwen2 "${shape[@]}" --dtype bfloat16
  nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader -lms 500 >"$logs/nvidia-smi.csv" 2>/dev/null &
  local smi=$!
  ./.gpu/bin/train -c configs/drmas-math-tiny.yaml --set models.tiny.path="$work/model" --set run.device="$device" \
    --set run.dtype=bfloat16 --set run.output_dir="$work/run" --set run.steps=2 "${size[@]}" \
    --set batch.max_batch_rows=256 --set engine.cuda_graphs=true \
    --set eval.every=0 --set checkpoint.at_end=false --set export.at_end=false 2>&1 | tee "$work/train.log"
  kill "$smi" 2>/dev/null || true
  cp "$work/run/metrics.jsonl" "$logs/drmas-metrics.jsonl"
  ! grep -q 'capturing the decode step' "$work/train.log" || { echo "CUDA graphs were switched off"; return 1; }
}
stage drmas-1.5b-x2 300 drmas
"$py" - "$logs/drmas-metrics.jsonl" <<'PY' 2>&1 | tee -a "$report"
import json, sys
for line in open(sys.argv[1]):
    m = json.loads(line)
    keys = sorted(k for k in m if k.startswith(("time/", "throughput/", "memory/")) or k.endswith(("/graphs", "/graph_replays")))
    print("step", m.get("step"), " ".join(f"{k}={m[k]:.4g}" for k in keys if isinstance(m[k], (int, float))))
PY
note gpu-busy "$(awk -F, '{gsub(/ %/,"",$1); s+=$1; n++} END {if (n) printf "mean %.0f %% over %d samples", s/n, n}' "$logs/nvidia-smi.csv" 2>/dev/null)"

finish
