#!/usr/bin/env bash
# bench-engine.sh — run THERE (the GPU machine), after prepare.sh HERE with
#   scripts/gpu/prepare.sh ./model ./cmd/train
# One run, one machine, the same shapes: troupe's generation engine and plain
# Generate (BenchmarkEngineCUDA, BenchmarkDecodeCUDA) beside transformers'
# generate (hf_reference.py time), Qwen2.5-0.5B and 1.5B shapes, bf16,
# 128-token prompts, 128 new tokens, batch 1/32/64/256; then one bin/train
# Dr. MAS step of 32 prompts × 8 trajectories on a random 0.5B-shaped model
# (train init's tokenizer, so a small vocabulary) with its per-phase times,
# tokens/s, GPU utilisation and peak memory per phase (metrics.jsonl).
# Output in $OUT (or .gpu/logs): bench-engine.txt, hf-*.json, train-step/.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh" bench-engine.txt

say "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null)"
if [ ! -f build-gpu/libtshim.so ]; then
  bash scripts/gpu/build-shim.sh build-gpu >"$logs/build-shim.log" 2>&1 || { say "shim build failed"; tail -20 "$logs/build-shim.log"; exit 1; }
fi
export LD_LIBRARY_PATH="$root/build-gpu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export TROUPE_CUDA=1

for shape in 0.5b 1.5b; do
  say "== $shape: troupe (engine, plain)"
  (cd model && TROUPE_BENCH_SHAPE=$shape ../.gpu/bin/model.test -test.run '^$' -test.bench 'EngineCUDA' -test.benchtime 3x 2>&1) | grep -E 'Benchmark|FAIL|panic' | tee -a "$report"
  if [ "$shape" = 0.5b ]; then
    (cd model && ../.gpu/bin/model.test -test.run '^$' -test.bench 'DecodeCUDA' -test.benchtime 3x 2>&1) | grep -E 'Benchmark|FAIL|panic' | tee -a "$report"
  fi
  say "== $shape: transformers generate"
  "$py" scripts/gpu/hf_reference.py time --shape "$shape" --batches 1,32,64,256 --prompt 128 --new-tokens 128 \
    --json "$logs/hf-$shape.json" 2>&1 | tail -8 | tee -a "$report"
done

say "== bin/train: one Dr. MAS step, 32 prompts x 8, 0.5B shape, bf16"
work=$(mktemp -d)
./.gpu/bin/train init "$work/model" --family qwen2 --hidden 896 --layers 24 --heads 14 --kv-heads 2 --head-dim 64 \
  --intermediate 4864 --dtype bfloat16 >/dev/null
nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader -lms 500 >"$logs/nvidia-smi.csv" 2>/dev/null &
smi=$!
./.gpu/bin/train -c configs/drmas-math-tiny.yaml --set models.tiny.path="$work/model" --set run.device=cuda \
  --set run.dtype=bfloat16 --set run.output_dir="$work/run" --set run.steps=1 --set batch.prompts_per_step=32 \
  --set batch.n=8 --set max_new_tokens=256 2>&1 | tail -20 | tee -a "$report"
kill $smi 2>/dev/null
mkdir -p "$logs/train-step" && cp "$work/run/metrics.jsonl" "$logs/train-step/" 2>/dev/null
say "metrics: $(tail -1 "$logs/train-step/metrics.jsonl" 2>/dev/null | tr ',' '\n' | grep -E 'time/|tokens_per_s|peak_gib|engine/|gpu' | tr '\n' ' ')"

say "gpu busy (mean % over the run): $(awk -F, '{gsub(/ %/,"",$1); s+=$1; n++} END {if (n) printf "%.0f", s/n}' "$logs/nvidia-smi.csv")"

say "== bin/train: the same step with engine.cuda_graphs"
rm -rf "$work/run"
nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader -lms 500 >"$logs/nvidia-smi-graphs.csv" 2>/dev/null &
smi=$!
./.gpu/bin/train -c configs/drmas-math-tiny.yaml --set models.tiny.path="$work/model" --set run.device=cuda \
  --set run.dtype=bfloat16 --set run.output_dir="$work/run" --set run.steps=1 --set batch.prompts_per_step=32 \
  --set batch.n=8 --set max_new_tokens=256 --set engine.cuda_graphs=true 2>&1 | tail -20 | tee -a "$report"
kill $smi 2>/dev/null
mkdir -p "$logs/train-step-graphs" && cp "$work/run/metrics.jsonl" "$logs/train-step-graphs/" 2>/dev/null
say "metrics: $(tail -1 "$logs/train-step-graphs/metrics.jsonl" 2>/dev/null | tr ',' '\n' | grep -E 'time/|tokens_per_s|peak_gib|engine/|gpu' | tr '\n' ' ')"
say "gpu busy with graphs (mean %): $(awk -F, '{gsub(/ %/,"",$1); s+=$1; n++} END {if (n) printf "%.0f", s/n}' "$logs/nvidia-smi-graphs.csv")"
