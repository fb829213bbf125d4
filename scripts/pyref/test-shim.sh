#!/usr/bin/env bash
# test-shim.sh — the shim's CUDA build, compiled and linked against the
# reference environment's torch wheel (PyPI's libtorch with its CUDA
# libraries: what a GPU user installs), and the CPU tests of every package
# that links it, run against that build (CUDA absent at run time):
#
#   bash scripts/pyref/test-shim.sh
#
# 1. `make gpu` (scripts/gpu/make-gpu.sh, what the README tells a GPU node
#    to run) with PYTHON=scripts/pyref/python and TSHIM_STRICT=1 (every
#    feature — -DTSHIM_CUDA, NCCL and Gloo collectives, fused AdamW, fused
#    RMSNorm, CUDA graphs — must compile and link; a fallback is an error),
#    GLOO_INCLUDE=/usr/include (the wheel ships no gloo/ headers; Debian's
#    libgloo-dev, which scripts/setup.sh installs, provides them): the shim
#    into build-pyref/, rebuilt only when its inputs change, and
#    build-pyref/train linked to it, whose `version` must say "build: CUDA";
# 2. go test -count=1 (Go's test cache does not see LD_LIBRARY_PATH) of
#    troupe/torch and every package that imports it, with
#    LD_LIBRARY_PATH=build-pyref and TROUPE_EXPECT_SHIM/TROUPE_EXPECT_TORCH,
#    which torch's TestLoadedShim checks, so the run cannot silently load
#    the default shim. Extra arguments go to go test (e.g. -short, -run).
#
# Exit status: 0 when both pass; 2, with one line, when the reference
# environment is not installed (scripts/pyref/setup.sh); 1 otherwise.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
py=scripts/pyref/python
out="$root/build-pyref"

if ! version=$("$py" -c 'import torch; print(torch.__version__.split("+")[0])' 2>/dev/null); then
  "$py" -c pass 2>/dev/null || { echo "test-shim: no Python reference environment; the shim was NOT built against PyPI's torch"; exit 2; }
  echo "test-shim: the reference environment's python cannot import torch" >&2
  exit 1
fi

# `make gpu` (scripts/gpu/make-gpu.sh), as a GPU node runs it, against
# this torch: the shim into build-pyref/ (rebuilt when its inputs change)
# and a bin/train linked to it, whose version must say it is the CUDA build
echo "test-shim: make gpu against torch $version from PyPI into build-pyref/ (log: build-pyref/build.log)"
if ! PYTHON="$py" GPU_BUILD=build-pyref TRAIN_OUT=build-pyref/train TSHIM_STRICT=1 GLOO_INCLUDE=/usr/include \
  make --no-print-directory gpu >"$root/build-pyref.make.log" 2>&1; then
  tail -n 60 "$root/build-pyref.make.log" >&2
  echo "test-shim: make gpu against torch $version failed (log: build-pyref.make.log)" >&2
  exit 1
fi
mv "$root/build-pyref.make.log" "$out/make.log"
if ! grep -q '^build: CUDA' "$out/make.log"; then
  cat "$out/make.log" >&2
  echo "test-shim: build-pyref/train version does not say it is the CUDA build" >&2
  exit 1
fi
grep -E '^(build|libtorch) ' "$out/make.log" | sed 's/^/test-shim: build-pyref\/train: /'
grep -E '^build-shim: (collectives|AdamW|RMSNorm|CUDA graphs):' "$out/build.log" | sed 's/ -isystem [^ ]*//g; s/^build-shim: /test-shim: /'

pkgs=$("${GO:-scripts/go/go}" list -f '{{.ImportPath}}{{range .Deps}} {{.}}{{end}}' ./... |
  awk '$1 == "troupe/torch" { print $1; next } { for (i = 2; i <= NF; i++) if ($i == "troupe/torch") { print $1; break } }')
echo "test-shim: go test -count=1 against build-pyref/libtshim.so (libtorch $version): $(echo $pkgs | tr '\n' ' ')"
# shellcheck disable=SC2086
LD_LIBRARY_PATH="$out${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" TROUPE_EXPECT_SHIM="$out/libtshim.so" TROUPE_EXPECT_TORCH="$version" \
  "${GO:-scripts/go/go}" test -count=1 -timeout 45m "$@" $pkgs
