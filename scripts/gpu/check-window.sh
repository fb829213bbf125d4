#!/usr/bin/env bash
# check-window.sh — what a CPU machine can check of the GPU window scripts
# (docs/gpu.md, "The window plan"), so that a GPU window is not spent on a
# typo; `make test` runs it once the Python reference environment is there:
#
#   1. shellcheck of every script in scripts/gpu/;
#   2. scripts/gpu/prepare.sh (the test binaries and bin/train a window
#      carries);
#   3. each window script rehearsed end to end with WINDOW_DRY=1 (window.sh):
#      the CPU shim, models on the CPU, tiny shapes for the 1.5B ones, no
#      transformers timings; every bin/train command line, flag and config
#      key runs, the CUDA tests and benchmarks start and skip themselves, and
#      the Python checks (TensorBoard reading the events, PEFT loading the
#      exported adapters) run for real with PYTHON.
#
#   PYTHON=scripts/pyref/python scripts/gpu/check-window.sh
#
# The CUDA build itself is compiled against torch 2.6's and 2.11's headers by
# check-builds.sh and built and linked against PyPI's torch by
# scripts/pyref/test-shim.sh. Exit status 1 when anything fails.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
py=${PYTHON:-scripts/pyref/python}

command -v shellcheck >/dev/null || { echo "check-window: shellcheck is not installed (scripts/setup.sh installs it)" >&2; exit 1; }
shellcheck -x -P scripts/gpu scripts/gpu/*.sh
echo "check-window: shellcheck: scripts/gpu/*.sh clean"

bash scripts/gpu/prepare.sh >/dev/null

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
failed=0
for script in window-tests window-bench; do
  if WINDOW_DRY=1 OUT="$out/$script" PYTHON="$py" bash "scripts/gpu/$script.sh" >"$out/$script.log" 2>&1; then
    echo "check-window: $script.sh rehearsed on CPU: ok"
  else
    echo "check-window: $script.sh rehearsed on CPU: FAILED" >&2
    sed -n '/^== summary/,$p' "$out/$script.log" >&2
    mkdir -p "$out/x" && tar -xzf "$out/$script/$script-logs.tar.gz" -C "$out/x" 2>/dev/null &&
      for f in "$out"/x/*.log; do echo "--- $(basename "$f")"; tail -n 15 "$f"; done >&2
    failed=1
  fi
done
exit "$failed"
