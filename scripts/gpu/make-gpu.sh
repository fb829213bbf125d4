#!/usr/bin/env bash
# make-gpu.sh — `make gpu`: bin/train for NVIDIA GPUs, on the GPU node itself:
#
#   make gpu                              # bin/train over build-gpu/libtshim.so
#   make gpu PYTHON=/opt/venv/bin/python  # build against that interpreter's torch
#
# 1. A CUDA PyTorch to build against: $PYTHON's when set; else python3's
#    when it imports a torch built with CUDA (the usual GPU node); else the
#    pinned reference environment (scripts/pyref/setup.sh: PyPI's torch
#    2.15 with its CUDA libraries, every file hash-pinned, ~4 GB once into
#    ~/.cache/troupe/pyref), which needs PyPI.
# 2. Go (scripts/go/install.py: go.mod's version into ~/.cache/troupe/go
#    when PATH has none or an older one). On a node with neither Go nor
#    network, a binary prepared on another machine (scripts/gpu/prepare.sh
#    writes .gpu/bin/train; carry .gpu) is used instead of linking here.
# 3. The shim, scripts/gpu/build-shim.sh against that torch, into
#    build-gpu/ (GPU_BUILD), rebuilt only when its sources, the script or
#    the torch change. Gloo's headers, which the torch wheels lack, from
#    GLOO_INCLUDE, /usr/include (Debian/Ubuntu libgloo-dev) or .gpu/.
# 4. bin/train (TRAIN_OUT) linked against it with a RUNPATH to it — relative to
#    the binary ($ORIGIN/../build-gpu) and absolute — so it runs on CUDA
#    with no environment variable to set; then `bin/train version`, which
#    says which build it is.
#
# On a CPU-only machine it builds and links the same way (the binary cannot
# use CUDA there); `make test` does so against the reference environment
# (scripts/pyref/test-shim.sh). What it is not: `make` (the CPU build
# against Debian's libtorch 1.13 in build/), nor a set-up of NVIDIA's
# driver or CUDA toolkit (the torch wheel carries the CUDA libraries it
# needs; the driver must be there).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
source scripts/lib/progress.sh

gpu_build=${GPU_BUILD:-build-gpu}
[[ $gpu_build = /* ]] || gpu_build="$root/$gpu_build"
out=${TRAIN_OUT:-bin/train}
[[ $out = /* ]] || out="$root/$out"
go=${GO:-$root/scripts/go/go}
version=${VERSION:-$(git describe --always --dirty 2>/dev/null || echo dev)}

die() { echo "make gpu: $*" >&2; exit 1; }
say() { echo "make gpu: $*"; }

command -v "${CXX:-g++}" >/dev/null || die "no ${CXX:-g++}: install a C++20 compiler (Debian/Ubuntu: apt-get install g++)"

# 1. the torch to build against
cuda_of() { "$1" -c 'import torch; print(torch.__version__, torch.version.cuda)' 2>/dev/null; }
if [ -n "${PYTHON:-}" ]; then
  py=$PYTHON
  info=$(cuda_of "$py") || die "PYTHON=$py cannot import torch"
elif info=$(cuda_of python3) && [ "${info#* }" != None ]; then
  py=python3
else
  say "python3 has ${info:+a CPU-only torch ($info)}${info:-no torch}: using the pinned reference environment (PyPI's torch with CUDA; scripts/pyref/setup.sh)"
  rc=0
  bash scripts/pyref/setup.sh || rc=$?
  case $rc in
  0) ;;
  2) die "PyPI is unreachable and python3 has no CUDA torch: install one (pip install torch) or set PYTHON to an interpreter that has it" ;;
  *) die "installing the reference environment failed (above)" ;;
  esac
  py=$root/scripts/pyref/python
  info=$(cuda_of "$py") || die "$py cannot import torch"
fi
read -r torch_version torch_cuda <<<"$info"
[ "$torch_cuda" != None ] || die "the torch of $py ($torch_version) is a CPU-only build: install a CUDA build of torch, or set PYTHON to one"
say "torch $torch_version (CUDA $torch_cuda) from $py"

# 2. Go, or a prepared binary where there is no Go: one carried in .gpu
#    is used as it is (a node without network cannot install Go)
prepared=""
if ! "$go" --which >/dev/null 2>&1; then
  if [ -x .gpu/bin/train ]; then
    prepared=.gpu/bin/train
    say "no Go here: using the binary scripts/gpu/prepare.sh built ($prepared; $(head -n 1 .gpu/PREPARED 2>/dev/null))"
  elif ! python3 scripts/go/install.py; then
    die "no Go and none could be installed (no network?): put Go $(awk '$1 == "go" { print $2 }' go.mod) on PATH, or run scripts/gpu/prepare.sh on a machine with Go and carry .gpu here"
  fi
fi

# 3. the shim against that torch
if [ -z "${GLOO_INCLUDE:-}" ]; then
  for d in /usr/include "$root/.gpu/gloo-include"; do
    if [ -f "$d/gloo/algorithm.h" ]; then export GLOO_INCLUDE=$d; break; fi
  done
fi
torch_dir=$("$py" -c 'import os, torch; print(os.path.dirname(torch.__file__))')
stamp=$( (cat torch/csrc/*.cc torch/csrc/*.h torch/tshim.h scripts/gpu/build-shim.sh; echo "$torch_dir $torch_version ${GLOO_INCLUDE:-}") | sha256sum | cut -c1-16)
mkdir -p "$gpu_build"
if [ -f "$gpu_build/libtshim.so" ] && [ "$(cat "$gpu_build/.stamp" 2>/dev/null)" = "$stamp" ]; then
  say "shim $gpu_build/libtshim.so is up to date"
else
  rm -f "$gpu_build/.stamp"
  say "building the shim against torch $torch_version into ${gpu_build#"$root"/}/ (a minute or two on a GPU node's cores; log: ${gpu_build#"$root"/}/build.log)"
  progress "building the shim" "$gpu_build/build.log" env PYTHON="$py" TSHIM_CUDA=1 bash scripts/gpu/build-shim.sh "$gpu_build" ||
    die "building the shim failed (log: $gpu_build/build.log)"
  echo "$stamp" >"$gpu_build/.stamp"
fi
grep -E '^build-shim: (collectives|AdamW|RMSNorm|CUDA graphs):|did not compile' "$gpu_build/build.log" | sed 's/ -isystem [^ ]*//g; s/^build-shim: /make gpu: /' || true

# 4. bin/train over it
mkdir -p "$(dirname "$out")"
if [ -n "$prepared" ]; then
  cp "$prepared" "$out.tmp" && mv "$out.tmp" "$out"
else
  rel=$(realpath -m --relative-to="$(dirname "$out")" "$gpu_build")
  shim_stamp=$(sha256sum "$gpu_build/libtshim.so" | cut -c1-12)
  say "linking ${out#"$root"/} against ${gpu_build#"$root"/}/libtshim.so"
  # the RUNPATH entries come before the package's own (build/, the CPU
  # shim), so this shim is the one loaded; \$ORIGIN keeps it relocatable
  # shellcheck disable=SC2016 # $ORIGIN is the dynamic loader's, not the shell's
  CGO_LDFLAGS="-L$gpu_build -Wl,-rpath,\$ORIGIN/$rel -Wl,-rpath,$gpu_build" \
    CGO_CFLAGS="-O2 -g -Wno-deprecated-declarations -DTSHIM_STAMP=$shim_stamp" \
    progress "building ${out#"$root"/}" "$gpu_build/go-build.log" \
    "$go" build -v -ldflags "-X main.version=$version" -o "$out" ./cmd/train ||
    die "go build failed (log: $gpu_build/go-build.log)"
fi
"$out" version
