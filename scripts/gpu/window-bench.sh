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
#   5. three Dr. MAS steps (bin/train, the build `make gpu` made) of a
#      Solver and a Verifier, each its own real-size-shaped model (Qwen3-1.7B:
#      its published config.json's shape, vocabulary 151,936, random bf16
#      weights), 32 prompts × 8, CUDA graphs on: per-phase seconds, peaks
#      beside `train plan`'s for the same command line, the sampler-vs-update
#      log-prob gap (policy/<agent>/rollout_*), GPU busy % from nvidia-smi;
#   6. shard 0 against shard 3 in a group of one (WORLD_SIZE=1: every
#      collective issued, nothing to exchange) on the 0.5B shape, two steps
#      each: the update's seconds, what the collectives cost it;
#   7. the same team with run.concurrent_updates off and on (the update on
#      a torch thread of its own, run/overlap.go): equal metrics, the seconds;
#   8. the Dr. MAS step of two 1.5B-shaped models (Qwen2.5-1.5B's shape,
#      random bf16 weights) with run.policy_lag 0 and 1 (the next step's
#      rollout beside the update, run/overlaprollout.go), 3 steps each: the
#      median step seconds of steps 2–3 and their ratio (target ≥ 1.4×).
#
# Then a summary table (WINDOW_DRY=1: a rehearsal on CPU, window.sh). The
# report goes to $OUT (or .gpu/logs), the logs packed beside it.
# Estimated on a warm H100: engine 90 s, head 30 s, update 60 s, train step
# 60 s, profile 40 s, Dr. MAS 150–200 s, shard 60 s: about 8 minutes, and
# the policy-lag pair (not yet timed on a GPU; two runs of three 1.5B steps,
# a model written once) 2–4 minutes more (the budget skips what does not
# fit, the last stages first).
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
  # Qwen3-1.7B's shape (testdata/published/Qwen3-1.7B/config.json); a dry run:
  # a tiny one, 4 prompts x 2 of 16 tokens
  local shape=(--family qwen3 --hidden 2048 --layers 28 --heads 16 --kv-heads 8 --head-dim 128 --intermediate 6144 --vocab 151936)
  local size=(--set batch.prompts_per_step=32 --set batch.n=8 --set max_new_tokens=512)
  if [ "$dry" = 1 ]; then
    shape=(--family qwen3 --hidden 64 --layers 2 --heads 4 --kv-heads 2 --head-dim 16 --intermediate 128)
    size=(--set batch.prompts_per_step=4 --set batch.n=2 --set max_new_tokens=16)
  fi
  ./.gpu/bin/train init "$work/model" "${shape[@]}" --dtype bfloat16
  local args=(-c configs/drmas-math-tiny.yaml --set models.tiny.path="$work/model" --set run.device="$device"
    --set run.dtype=bfloat16 --set run.output_dir="$work/run" --set run.steps=3 "${size[@]}"
    --set batch.max_batch_rows=256 --set engine.cuda_graphs=true
    --set eval.every=0 --set checkpoint.at_end=false --set export.at_end=false)
  ./.gpu/bin/train plan "${args[@]}" --gpu-gib 139 | tee "$work/plan.txt" || true
  nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader -lms 500 >"$logs/nvidia-smi.csv" 2>/dev/null &
  local smi=$!
  ./.gpu/bin/train "${args[@]}" 2>&1 | tee "$work/train.log"
  kill "$smi" 2>/dev/null || true
  cp "$work/run/metrics.jsonl" "$logs/drmas-metrics.jsonl"
  cp "$work/plan.txt" "$logs/drmas-plan.txt"
  ! grep -q 'capturing the decode step' "$work/train.log" || { echo "CUDA graphs were switched off"; return 1; }
}
stage drmas-qwen3-1.7b-x2 360 drmas
grep -E 'peak ≈|^  (rollout|update)' "$logs/drmas-plan.txt" 2>/dev/null | sed 's/^/plan: /' | tee -a "$report"
"$py" - "$logs/drmas-metrics.jsonl" <<'PY' 2>&1 | tee -a "$report"
import json, sys
for line in open(sys.argv[1]):
    m = json.loads(line)
    keys = sorted(k for k in m if k.startswith(("time/", "throughput/", "memory/")) or "/rollout_" in k
                  or k.endswith(("/graphs", "/graph_replays")))
    print("step", m.get("step"), " ".join(f"{k}={m[k]:.4g}" for k in keys if isinstance(m[k], (int, float))))
PY
note gpu-busy "$(awk -F, '{gsub(/ %/,"",$1); s+=$1; n++} END {if (n) printf "mean %.0f %% over %d samples", s/n, n}' "$logs/nvidia-smi.csv" 2>/dev/null)"

# model_05b: the 0.5B-shaped model (Qwen2.5-0.5B's shape, random bf16
# weights; a dry run: a tiny one) that the shard and lanes stages share,
# written once into .gpu/model-0.5b
model_05b() {
  local shape=(--family qwen2 --hidden 896 --layers 24 --heads 14 --kv-heads 2 --head-dim 64 --intermediate 4864 --vocab 151936)
  [ "$dry" = 1 ] && shape=(--family qwen2 --hidden 64 --layers 2 --heads 4 --kv-heads 2 --head-dim 16 --intermediate 128)
  [ -d "$root/.gpu/model-0.5b" ] || ./.gpu/bin/train init "$root/.gpu/model-0.5b" "${shape[@]}" --dtype bfloat16
}

# shard LEVEL: two steps of the 0.5B-shaped Dr. MAS team in a group of one
# (the collectives issued as on a node, over one rank), activation
# checkpointing on at both levels so that only the sharding differs
shard() {
  set -e
  local level=$1 work=$root/.gpu/shard
  mkdir -p "$work"
  model_05b
  rm -rf "$work/run-$level"
  WORLD_SIZE=1 RANK=0 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=29511 \
    ./.gpu/bin/train -c configs/drmas-math-tiny.yaml --set models.tiny.path="$root/.gpu/model-0.5b" --set models.tiny.shard="$level" \
    --set run.device="$device" --set run.dtype=bfloat16 --set run.output_dir="$work/run-$level" --set run.steps=2 \
    --set batch.prompts_per_step=8 --set batch.n=4 --set max_new_tokens=128 --set optim.activation_checkpointing=true \
    --set eval.every=0 --set checkpoint.at_end=false --set export.at_end=false -q
  cp "$work/run-$level/metrics.jsonl" "$logs/shard-$level-metrics.jsonl"
}
for level in 0 3; do
  stage "shard-$level-w1" 120 shard "$level"
done
"$py" - "$logs"/shard-{0,3}-metrics.jsonl <<'PY' 2>&1 | tee -a "$report"
import json, sys
for path in sys.argv[1:]:
    try:
        rows = [json.loads(l) for l in open(path)]
    except OSError:
        continue
    keys = sorted(k for k in rows[-1] if k.startswith("time/update") or k.startswith("memory/") and "peak" in k)
    print(path.rsplit("/", 1)[-1].removesuffix("-metrics.jsonl"), "last step:", " ".join(f"{k}={rows[-1][k]:.4g}" for k in keys))
PY

# lanes ON: two steps of the 0.5B-shaped Dr. MAS team (two models, both on
# the one GPU) with run.concurrent_updates ON. On, the update runs on a torch
# thread of its own (run/overlap.go), one lane since both models share the
# device: its metrics must equal the synchronous run's bit for bit, and
# its seconds show what the extra thread costs. (No speed-up is expected
# on one GPU: lanes gain with models on different devices; the rollout
# beside the update is docs/overlap.md's next step.)
lanes() {
  set -e
  local on=$1 work=$root/.gpu/lanes
  mkdir -p "$work"
  model_05b
  rm -rf "$work/run-$on"
  ./.gpu/bin/train -c configs/drmas-math-tiny.yaml --set models.tiny.path="$root/.gpu/model-0.5b" --set run.concurrent_updates="$on" \
    --set run.device="$device" --set run.dtype=bfloat16 --set run.output_dir="$work/run-$on" --set run.steps=2 \
    --set batch.prompts_per_step=8 --set batch.n=4 --set max_new_tokens=128 \
    --set eval.every=0 --set checkpoint.at_end=false --set export.at_end=false -q
  cp "$work/run-$on/metrics.jsonl" "$logs/lanes-$on-metrics.jsonl"
}
for on in false true; do
  stage "lanes-$on" 120 lanes "$on"
done
"$py" - "$logs"/lanes-{false,true}-metrics.jsonl <<'PY' 2>&1 | tee -a "$report"
import json, sys
try:
    runs = [[json.loads(l) for l in open(p)] for p in sys.argv[1:]]
except OSError as e:
    sys.exit(f"lanes: {e}")
timing = ("time/", "memory/", "throughput/", "system/", "engine/", "gpu/")
def values(rec):
    return {k: v for k, v in rec.items() if "/" in k and not k.startswith(timing)}
same = len(runs[0]) == len(runs[1]) and all(values(a) == values(b) for a, b in zip(*runs))
upd = [sum(r.get("time/update_s", 0) for r in run) for run in runs]
print(f"lanes: concurrent_updates equals the synchronous step bit for bit: {same}; update seconds {upd[0]:.3g} (off) vs {upd[1]:.3g} (on)")
PY

# policylag LAG: three Dr. MAS steps of two 1.5B-shaped models (Qwen2.5-1.5B's
# shape, random bf16 weights, written once into .gpu/model-1.5b; a dry run: a
# tiny one) with run.policy_lag LAG; 1 runs the next step's rollout on a
# torch thread beside the update, from the engine weight copies, with the
# lag corrected by token weights (rollout_is token in both runs, so only the
# overlap differs)
policylag() {
  set -e
  local lag=$1 work=$root/.gpu/policylag
  mkdir -p "$work"
  local shape=(--family qwen2 --hidden 1536 --layers 28 --heads 12 --kv-heads 2 --head-dim 128 --intermediate 8960 --vocab 151936)
  local size=(--set batch.prompts_per_step=16 --set batch.n=8 --set max_new_tokens=256)
  if [ "$dry" = 1 ]; then
    shape=(--family qwen2 --hidden 64 --layers 2 --heads 4 --kv-heads 2 --head-dim 16 --intermediate 128)
    size=(--set batch.prompts_per_step=4 --set batch.n=2 --set max_new_tokens=16)
  fi
  [ -d "$root/.gpu/model-1.5b" ] || ./.gpu/bin/train init "$root/.gpu/model-1.5b" "${shape[@]}" --dtype bfloat16
  rm -rf "$work/run-$lag"
  ./.gpu/bin/train -c configs/drmas-math-tiny.yaml --set models.tiny.path="$root/.gpu/model-1.5b" --set run.policy_lag="$lag" \
    --set optim.rollout_is=token --set run.device="$device" --set run.dtype=bfloat16 --set run.output_dir="$work/run-$lag" \
    --set run.steps=3 "${size[@]}" --set batch.max_batch_rows=256 --set engine.cuda_graphs=true \
    --set eval.every=0 --set checkpoint.at_end=false --set export.at_end=false -q
  cp "$work/run-$lag/metrics.jsonl" "$logs/policylag-$lag-metrics.jsonl"
}
for lag in 0 1; do
  stage "policylag-$lag" 180 policylag "$lag"
done
"$py" - "$logs"/policylag-{0,1}-metrics.jsonl <<'PY' 2>&1 | tee -a "$report"
import json, statistics, sys
try:
    runs = [[json.loads(l) for l in open(p)] for p in sys.argv[1:]]
except OSError as e:
    sys.exit(f"policylag: {e}")
def med(run, key):
    vals = [r[key] for r in run[1:] if key in r]
    return statistics.median(vals) if vals else float("nan")
step = [med(run, "time/step_s") for run in runs]
lag1 = runs[1]
print(f"policylag: median step seconds of steps 2-3: {step[0]:.3g} (policy_lag 0) vs {step[1]:.3g} (policy_lag 1): {step[0] / step[1]:.2f}x;"
      f" policy_lag 1: rollout {med(lag1, 'time/rollout_s'):.3g} s, update {med(lag1, 'time/update_s'):.3g} s,"
      f" rollout waited {med(lag1, 'time/rollout_wait_s'):.3g} s, update waited {med(lag1, 'time/update_wait_s'):.3g} s,"
      f" lag {[r.get('time/policy_lag') for r in lag1]}")
PY

finish
