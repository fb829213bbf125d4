#!/usr/bin/env bash
# test-shim.sh — the shim's CUDA build, compiled and linked against the
# reference environment's torch wheel (PyPI's libtorch with its CUDA
# libraries: what a GPU user installs), and the CPU tests of every package
# that links it, run against that build (CUDA absent at run time):
#
#   bash scripts/pyref/test-shim.sh
#
# 1. scripts/gpu/build-shim.sh with PYTHON=scripts/pyref/python, TSHIM_CUDA=1
#    and TSHIM_STRICT=1 (every feature — -DTSHIM_CUDA, NCCL and Gloo
#    collectives, fused AdamW, fused RMSNorm, CUDA graphs — must compile and
#    link; a fallback is an error), GLOO_INCLUDE=/usr/include (the wheel
#    ships no gloo/ headers; Debian's libgloo-dev, which scripts/setup.sh
#    installs, provides them) into build-pyref/, rebuilt only when its
#    inputs change (the sources, build-shim.sh, requirements.txt);
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

stamp=$(cat torch/csrc/*.cc torch/csrc/*.h torch/tshim.h scripts/gpu/build-shim.sh scripts/pyref/requirements.txt 2>/dev/null | sha256sum | cut -c1-16)
if [ ! -f "$out/libtshim.so" ] || [ "$(cat "$out/.stamp" 2>/dev/null)" != "$stamp" ]; then
  echo "test-shim: building the shim's CUDA build against torch $version from PyPI into build-pyref/ (log: build-pyref/build.log)"
  mkdir -p "$out" && rm -f "$out/.stamp"
  if ! PYTHON="$py" TSHIM_CUDA=1 TSHIM_STRICT=1 GLOO_INCLUDE=/usr/include \
    bash scripts/gpu/build-shim.sh "$out" >"$out/build.log" 2>&1; then
    tail -n 60 "$out/build.log" >&2
    echo "test-shim: building the shim against torch $version failed (log: build-pyref/build.log)" >&2
    exit 1
  fi
  echo "$stamp" >"$out/.stamp"
fi
grep -E '^build-shim: (collectives|AdamW|RMSNorm|CUDA graphs):' "$out/build.log" | sed 's/ -isystem [^ ]*//g; s/^build-shim: /test-shim: /'

pkgs=$("${GO:-scripts/go/go}" list -f '{{.ImportPath}}{{range .Deps}} {{.}}{{end}}' ./... |
  awk '$1 == "troupe/torch" { print $1; next } { for (i = 2; i <= NF; i++) if ($i == "troupe/torch") { print $1; break } }')
echo "test-shim: go test -count=1 against build-pyref/libtshim.so (libtorch $version): $(echo $pkgs | tr '\n' ' ')"
# shellcheck disable=SC2086
LD_LIBRARY_PATH="$out${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" TROUPE_EXPECT_SHIM="$out/libtshim.so" TROUPE_EXPECT_TORCH="$version" \
  "${GO:-scripts/go/go}" test -count=1 -timeout 45m "$@" $pkgs
