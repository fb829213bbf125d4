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

# `make gpu` as a window machine runs it, with no Go on PATH: the carried
# .gpu/bin/train becomes the binary, and its RUNPATH ($ORIGIN/../build-gpu)
# finds the CUDA shim beside it with no environment variable — rehearsed in
# a scratch tree whose build-gpu is the shim test-shim.sh built against
# PyPI's torch (build-pyref/), so nothing is compiled here
if [ -f build-pyref/libtshim.so ]; then
  nogo=$out/nogo-path
  mkdir -p "$nogo"
  for d in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do
    [ -d "$d" ] || continue
    for f in "$d"/*; do
      name=$(basename "$f")
      case $name in go | gofmt) continue ;; esac
      [ -e "$nogo/$name" ] || ln -s "$f" "$nogo/$name"
    done
  done
  mkdir -p "$out/node/bin"
  ln -s "$root/build-pyref" "$out/node/build-gpu"
  if PATH=$nogo TROUPE_GO_DIR=$out/no-go-cache PYTHON="$py" GPU_BUILD=build-pyref TRAIN_OUT="$out/node/bin/train" TSHIM_STRICT=1 GLOO_INCLUDE=/usr/include \
    bash scripts/gpu/make-gpu.sh >"$out/make-gpu.log" 2>&1 &&
    grep -q 'no Go here: using the binary scripts/gpu/prepare.sh built' "$out/make-gpu.log" &&
    env -u LD_LIBRARY_PATH "$out/node/bin/train" version >"$out/version.log" 2>&1 &&
    grep -q '^build: CUDA' "$out/version.log" && grep -q "shim $out/node/bin/../build-gpu/libtshim.so" "$out/version.log"; then
    echo "check-window: make gpu with no Go on PATH: the prepared binary, loading the CUDA shim beside it: ok"
  else
    echo "check-window: make gpu with no Go on PATH: FAILED" >&2
    cat "$out/make-gpu.log" "$out/version.log" >&2 2>/dev/null
    exit 1
  fi
else
  echo "check-window: make gpu with no Go on PATH: not rehearsed (no build-pyref/: scripts/pyref/test-shim.sh builds it)"
fi
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
