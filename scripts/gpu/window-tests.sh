#!/usr/bin/env bash
# shellcheck disable=SC2317 # functions run through window.sh's stage
# window-tests.sh — call 1 of a GPU window (docs/gpu.md, "The window plan"):
# run THERE, on a bare GPU machine with its own python3 torch, after
# `scripts/gpu/prepare.sh` HERE (carry .gpu). Within WINDOW_BUDGET seconds
# (default 480) it
#
#   1. `make gpu` as the README says to run it on a GPU node
#      (scripts/gpu/make-gpu.sh): libtshim.so against the machine's torch
#      into build-gpu/ (the Gloo headers carried in .gpu/gloo-include, so
#      data parallel builds) and, with no Go there, the carried
#      .gpu/bin/train as bin/train, whose version must say CUDA;
#   2. writes transformers reference fixtures at the machine's versions;
#   3. runs only the CUDA tests of the carried test binaries: graphs equal
#      eager, capture again after Release and after a weight update, fused
#      RMSNorm, the bf16 update's bytes per parameter and the fused AdamW
#      step's peak, ops against the CPU, transformers and PEFT checks, NCCL's
#      reduce-scatter, all-gather and bucketed all-reduce in a group of one
#      (stream-ordered: no host wait until checked) and CUDA storage
#      resizing; and the two-rank Gloo collective tests on the GPU build;
#   4. trains two steps of the LoRA writing team on CUDA in bf16 with CUDA
#      graphs on (bin/train), fails if graphs were switched off, and checks
#      that PEFT loads its exported adapters and that TensorBoard reads its
#      events as metrics.jsonl says;
#
# and prints a summary table (WINDOW_DRY=1: a rehearsal on CPU, window.sh).
# The report goes to $OUT (or .gpu/logs), the
# logs packed beside it (window-tests-logs.tar.gz). TESTS=REGEXP runs other
# tests than the CUDA ones in step 3 (a rerun of the ones that failed).
# Estimated on 16 cores: build 60–120 s, fixtures 20 s, tests 60–120 s,
# LoRA run 30–60 s: 3–5 minutes, under the 8-minute budget.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh" window-tests.txt
. "$(dirname "${BASH_SOURCE[0]}")/window.sh"

[ -f .gpu/tests.txt ] || { say "window-tests: no .gpu/tests.txt: run scripts/gpu/prepare.sh here first and carry .gpu"; exit 1; }
say "prepared: $(tr '\n' ';' <.gpu/PREPARED 2>/dev/null)"
say "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo 'nvidia-smi not found')"
say "torch: $("$py" -c 'import torch, transformers, peft; print(torch.__version__, "cuda", torch.version.cuda, "transformers", transformers.__version__, "peft", peft.__version__)' 2>&1 | tail -1)"
say "cpus: $(nproc); $(g++ --version 2>/dev/null | head -1)"

[ -d .gpu/gloo-include/gloo ] && export GLOO_INCLUDE=$root/.gpu/gloo-include
if [ "$dry" = 1 ]; then
  note build-shim "dry run: the CPU shim in build/"
  export LD_LIBRARY_PATH="$root/build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
elif stage make-gpu 300 env PYTHON="$py" bash scripts/gpu/make-gpu.sh; then
  # the README's GPU build, as a node without Go and network runs it: the
  # shim against this machine's torch into build-gpu/, bin/train the
  # carried .gpu/bin/train; its version must say CUDA and see the GPU
  grep -E '^make gpu: (torch|collectives|AdamW|RMSNorm|CUDA graphs|no Go)|did not compile|^build:|^libtorch' "$logs/make-gpu.log" | tee -a "$report"
  if grep -q 'did not compile' "$logs/make-gpu.log" || ! grep -q '^build: CUDA' "$logs/make-gpu.log" ||
    grep -q 'cuda devices 0' "$logs/make-gpu.log"; then
    note build-features "FAIL: a feature fell back, or bin/train is not a CUDA build that sees the GPU (above)"
    window_failed=1
  fi
  export LD_LIBRARY_PATH="$root/build-gpu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
else
  finish
fi
export TROUPE_PYREF_PYTHON=$py
[ "$dry" = 1 ] || export TROUPE_CUDA=1

rm -rf .gpu/hf-fixtures
if [ "$dry" = 1 ]; then
  note hf-fixtures "dry run: not written (make test writes its own)"
elif stage hf-fixtures 120 "$py" scripts/gpu/hf_reference.py fixtures .gpu/hf-fixtures; then
  export TROUPE_HF_FIXTURES=$root/.gpu/hf-fixtures
fi

# a dry run runs the CUDA tests, which skip themselves on a CPU machine.
# With them: the NCCL collectives of sharding in a group of one and CUDA
# storage resizing (TestCUDAShardCollectivesNCCL, TestCUDAResizeStorage: the
# CUDA pattern), and the Gloo collectives on the GPU build, two ranks over
# loopback, which no CPU machine's build can stand in for
tests='CUDA|Graph|Transformers|PEFT|^TestDistCollectivesTwoRanks$|^TestDistAllReduceBuckets$|^TestShardCollectives$'
[ "$dry" = 1 ] && tests='CUDA'
stage go-cuda-tests 300 go_tests "${TESTS:-$tests}"
cat "$logs/go-cuda-tests.log" >>"$report"
grep -hE 'B/param|graphs, |replays so far|fused AdamW kernel' "$logs"/go-*.log | sed 's/^ *//' | head -n 20 | tee -a "$report"

# A real run on CUDA: LoRA adapters for two agents on one frozen bf16 base,
# decode steps from CUDA graphs, two steps (so graphs are dropped by Release
# and by the update and captured again), an export, events.
lora() {
  set -e
  local work=$root/.gpu/lora
  rm -rf "$work"
  ./.gpu/bin/train init "$work/init" --text writing
  # a warm-up, so that episodes differ in reward and the adapters get a signal
  ./.gpu/bin/train sft -c configs/lora-magrpo-writing-tiny.yaml --set models.tiny.path="$work/init" \
    --set run.device="$device" --out "$work/sft" --steps "$([ "$dry" = 1 ] && echo 20 || echo 150)" --log-every 50
  ./.gpu/bin/train -c configs/lora-magrpo-writing-tiny.yaml -q --set models.tiny.path="$work/sft/tiny" \
    --set run.device="$device" --set run.dtype=bfloat16 --set run.output_dir="$work/run" --set run.steps=2 \
    --set eval.every=0 --set eval.at_start=false --set checkpoint.every=0 --set engine.cuda_graphs=true \
    2>&1 | tee "$work/train.log"
  if grep -q 'capturing the decode step' "$work/train.log"; then
    echo "CUDA graphs were switched off during the run (above)"
    return 1
  fi
  # every step captured graphs and replayed them (a run whose graphs were
  # switched off after step 1 shows graphs 0 at step 2)
  "$py" - "$work/run/metrics.jsonl" "$device" <<'PY'
import json, sys
steps = [json.loads(l) for l in open(sys.argv[1]) if '/graphs"' in l]
assert steps, "no engine graph metrics in metrics.jsonl"
for m in steps:
    g = {k: v for k, v in m.items() if k.startswith("engine/") and k.endswith(("/graphs", "/graph_replays"))}
    print("step", m.get("step"), g)
    assert all(v > 0 for v in g.values()) or sys.argv[2] == "cpu", f"step {m.get('step')}: a figure is 0: {g}"
PY
  "$py" scripts/gpu/check_tensorboard.py "$work/run"
  "$py" scripts/gpu/check_lora_export.py --metrics "$work/run/metrics.jsonl" "$work/sft/tiny" "$work/run/export" first second
}
stage lora-cuda-run 180 lora
tail -n 12 "$logs/lora-cuda-run.log" >>"$report"

finish
