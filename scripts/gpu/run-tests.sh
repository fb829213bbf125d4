#!/usr/bin/env bash
# run-tests.sh — run THERE (the GPU machine: no Go, no network; python3 with
# a CUDA torch, transformers, g++): runs the test binaries that
# scripts/gpu/prepare.sh built into .gpu/ on the CPU machine.
#
#   scripts/gpu/run-tests.sh                          # every carried test binary
#   PKGS="model torch" scripts/gpu/run-tests.sh       # only these (names as in .gpu/tests.txt)
#   scripts/gpu/run-tests.sh -test.run '^$' -test.bench Generate -test.benchtime 3x
#                                                     # flags after the script go to every binary
#
# Steps:
#   1. builds libtshim.so against python3's torch (scripts/gpu/build-shim.sh)
#      into build-gpu/;
#   2. writes transformers reference fixtures (scripts/gpu/hf_reference.py
#      fixtures) into .gpu/hf-fixtures/ and sets TROUPE_HF_FIXTURES, so
#      model's TestForwardMatchesTransformers runs (skip: HF_FIXTURES=0);
#   3. runs each binary in its package directory (tests find their testdata
#      relative to it) with LD_LIBRARY_PATH=build-gpu and TROUPE_CUDA=1, the
#      variable that turns on the CUDA tests (they skip themselves without
#      it); prints one summary line per package and the failures.
#
# Logs go to $OUT (the device tool's output folder) when set, else .gpu/logs/:
# build-shim.log, hf-reference.log, gpu-tests.log (every binary's -test.v
# output), summary.txt and hf-fixtures.tar.gz (the fixtures, so a CPU machine
# can rerun TestForwardMatchesTransformers against them). Exit status 1 if any
# binary failed or a step could not run.
#
# Environment: PKGS (names to run), TEST_TIMEOUT (per binary, default 15m),
# HF_FIXTURES=0 (skip step 2), PYTHON (default python3), TROUPE_CUDA (default 1;
# 0 dry-runs the script on a CPU machine).
set -uo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/common.sh" summary.txt
summary=$report

if [ ! -f .gpu/tests.txt ]; then
  echo "run-tests: no .gpu/tests.txt: run scripts/gpu/prepare.sh on the CPU machine and carry .gpu" >&2
  exit 1
fi
[ -f .gpu/PREPARED ] && say "prepared: $(tr '\n' ';' <.gpu/PREPARED)"
say "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo 'nvidia-smi not found')"
say "torch: $("$py" -c 'import torch; print(torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())' 2>&1 | tail -1)"

# 1. the shim
if ! bash scripts/gpu/build-shim.sh build-gpu >"$logs/build-shim.log" 2>&1; then
  tail -n 40 "$logs/build-shim.log"
  say "run-tests: building the shim failed (log: $logs/build-shim.log)"
  exit 1
fi
say "$(tail -n 1 "$logs/build-shim.log")"
export LD_LIBRARY_PATH="$root/build-gpu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export TROUPE_CUDA=${TROUPE_CUDA:-1} # 0 for a dry run on a CPU machine

# 2. transformers fixtures
if [ "${HF_FIXTURES:-1}" != 0 ]; then
  rm -rf .gpu/hf-fixtures
  if "$py" scripts/gpu/hf_reference.py fixtures .gpu/hf-fixtures >"$logs/hf-reference.log" 2>&1; then
    export TROUPE_HF_FIXTURES="$root/.gpu/hf-fixtures"
    tar -czf "$logs/hf-fixtures.tar.gz" -C .gpu hf-fixtures
    say "hf fixtures: $(grep -c '^fixture' "$logs/hf-reference.log") models in .gpu/hf-fixtures"
  else
    tail -n 30 "$logs/hf-reference.log"
    say "run-tests: scripts/gpu/hf_reference.py fixtures failed (log: $logs/hf-reference.log); TestForwardMatchesTransformers will skip"
    hf_failed=1
  fi
fi

# 3. the test binaries
log="$logs/gpu-tests.log"
: >"$log"
failed=0
printf '%-16s %-6s %6s %6s %6s %8s\n' package result pass fail skip seconds | tee -a "$summary"
while IFS=$'\t' read -r name dir pkg; do
  if [ -n "${PKGS:-}" ] && [[ " $PKGS " != *" $name "* ]]; then continue; fi
  bin="$root/.gpu/bin/$name.test"
  echo "=== $pkg ($bin, in $dir)" >>"$log"
  start=$SECONDS
  (cd "$root/$dir" && "$bin" -test.v -test.timeout "${TEST_TIMEOUT:-15m}" "$@") >"$log.part" 2>&1
  rc=$?
  cat "$log.part" >>"$log"
  pass=$(grep -c -- '--- PASS' "$log.part")
  fail=$(grep -c -- '--- FAIL' "$log.part")
  skip=$(grep -c -- '--- SKIP' "$log.part")
  result=ok
  if ((rc != 0)); then
    result=FAIL
    failed=$((failed + 1))
  fi
  printf '%-16s %-6s %6d %6d %6d %8d\n' "$name" "$result" "$pass" "$fail" "$skip" $((SECONDS - start)) | tee -a "$summary"
  if ((rc != 0)); then
    # the failing tests and the lines just before them; a crash shows its tail
    grep -B 8 -- '--- FAIL' "$log.part" | head -n 80 | tee -a "$summary"
    ((fail == 0)) && tail -n 30 "$log.part" | tee -a "$summary"
  fi
done <.gpu/tests.txt
rm -f "$log.part"

say "tests that skipped themselves (the last message each logged):"
awk '/^=== RUN/ { msg = "" }
     /^ +[A-Za-z0-9_]+\.go:[0-9]+: / { msg = $0; sub(/^ +/, "", msg) }
     /--- SKIP:/ { print "  " $3 ": " msg }' "$log" | head -n 40 | tee -a "$summary"
if ((failed)) || [ -n "${hf_failed:-}" ]; then
  say "run-tests: $failed package(s) failed${hf_failed:+, hf_reference.py failed}; full output in $log"
  exit 1
fi
say "run-tests: all packages passed; full output in $log"
