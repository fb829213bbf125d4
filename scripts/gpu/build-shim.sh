#!/usr/bin/env bash
# build-shim.sh — builds libtshim.so (torch/csrc/*.cc, the C ABI of
# torch/tshim.h) with plain g++ against the PyTorch that python3 imports: the
# CUDA wheel on the GPU machines, which have no CMake package for libtorch
# but do have the wheel's headers and libraries.
#
#   scripts/gpu/build-shim.sh [OUTDIR]      # default OUTDIR: build-gpu/ at the repo root
#
# Environment:
#   PYTHON      the interpreter whose torch to build against (default python3)
#   TSHIM_CUDA  auto (default): CUDA build when that torch has libtorch_cuda.so;
#               1: require it; 0: CPU-only build
#   CUDA_HOME   where cuda_runtime_api.h lives (include/), if not found otherwise
#   NCCL_HOME   where nccl.h lives (include/), if not in the wheel's nvidia/ packages
#   GLOO_INCLUDE
#               a directory holding gloo/ (Debian's libgloo-dev: /usr/include),
#               for a torch whose include/ lacks Gloo's headers (the PyPI
#               wheels: their libtorch_cpu has Gloo built in but ships no gloo/)
#   TSHIM_STRICT
#               1: a feature this torch lacks, or whose file does not compile
#               with it, is an error, not a fallback; and the link must
#               resolve every symbol (--no-undefined, with the CUDA runtime
#               linked by name: the shim calls it directly). For
#               scripts/pyref/test-shim.sh, which must build everything.
#   CXX, JOBS   compiler (default g++) and parallel compiles (default nproc)
#   TSHIM_CHECK_INCLUDE
#               a torch include directory (ATen/, c10/, torch/csrc/api/include/)
#               to check against instead of building: no python3, no libraries,
#               every file is compiled with -fsyntax-only under the same
#               feature detection, and nothing is linked or written but logs.
#               scripts/gpu/check-builds.sh uses it to compile the CUDA paths
#               on a machine without a GPU or a CUDA wheel.
#
# What it does: asks python3's torch for its directory (include/, lib/), its
# C++ ABI (torch._C._GLIBCXX_USE_CXX11_ABI) and whether it was built with CUDA;
# compiles every torch/csrc/*.cc with -std=c++20 -O2 -fPIC (and -DTSHIM_CUDA
# plus the CUDA include directory for a CUDA build) in parallel; links with
# --no-as-needed so libtorch_cuda stays NEEDED (its kernels register in static
# initialisers; as-needed linking would drop it and every CUDA op would fail),
# with an rpath to torch/lib. Go binaries then find the shim through
# LD_LIBRARY_PATH=OUTDIR (see scripts/gpu/window-tests.sh).
#
# What it is not: the CPU build used by `make` (that is CMake against Debian's
# libtorch, scripts/setup.sh), nor incremental — it rebuilds every file.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:-build-gpu}
[[ $out = /* ]] || out="$root/$out"
py=${PYTHON:-python3}
cxx=${CXX:-g++}
jobs=${JOBS:-$(nproc)}
want_cuda=${TSHIM_CUDA:-auto}

die() { echo "build-shim: $*" >&2; exit 1; }

command -v "$cxx" >/dev/null || die "no $cxx on PATH (set CXX to a C++20 compiler)"
check=${TSHIM_CHECK_INCLUDE:-}

if [ -n "$check" ]; then
  # headers only: the version from them, the C++11 ABI (every current build)
  inc=$check
  [ -f "$inc/torch/csrc/api/include/torch/version.h" ] || die "TSHIM_CHECK_INCLUDE=$inc: no torch/csrc/api/include/torch/version.h there"
  torch_version=$(cat "$inc/torch/csrc/api/include/torch/version.h" "$inc/torch/headeronly/version.h" 2>/dev/null |
    awk '$1 == "#define" && $2 ~ /^TORCH_VERSION_(MAJOR|MINOR|PATCH)$/ { v = v (v == "" ? "" : ".") $3 } END { print v }' || true)
  torch_dir="$inc (headers only)" abi=1 torch_cuda=headers lib=/nonexistent
  [ "$want_cuda" = auto ] && want_cuda=1
else
  command -v "$py" >/dev/null || die "no $py on PATH (set PYTHON to an interpreter with torch installed)"
  # One line from torch: directory, C++ ABI flag, version, CUDA version or None.
  info=$("$py" -c '
import os, torch
print(os.path.dirname(torch.__file__), int(torch._C._GLIBCXX_USE_CXX11_ABI), torch.__version__, torch.version.cuda)
') || die "$py cannot import torch (pip install torch, or set PYTHON)"
  read -r torch_dir abi torch_version torch_cuda <<<"$info"
  inc="$torch_dir/include"
  lib="$torch_dir/lib"
  [ -e "$lib/libtorch.so" ] || die "torch $torch_version: missing $lib/libtorch.so"
fi
[ -f "$inc/ATen/core/Tensor.h" ] || die "torch $torch_version at $torch_dir has no C++ headers in $inc/ATen (a wheel without include/?)"
[ -f "$inc/torch/csrc/api/include/torch/version.h" ] || die "torch $torch_version: missing $inc/torch/csrc/api/include/torch/version.h"

case "$want_cuda" in
auto) if [ -e "$lib/libtorch_cuda.so" ]; then cuda=1; else cuda=0; fi ;;
1) [ -n "$check" ] || [ -e "$lib/libtorch_cuda.so" ] || die "TSHIM_CUDA=1 but torch $torch_version (CUDA ${torch_cuda}) has no $lib/libtorch_cuda.so; install a CUDA build of torch"
   cuda=1 ;;
0) cuda=0 ;;
*) die "TSHIM_CUDA must be auto, 1 or 0, got '$want_cuda'" ;;
esac

flags=(-std=c++20 -O2 -fPIC -Wall -Wno-unused-parameter -Wno-deprecated-declarations
  "-D_GLIBCXX_USE_CXX11_ABI=$abi" -isystem "$inc" -isystem "$inc/torch/csrc/api/include")
libs=(-ltorch -ltorch_cpu -lc10)

if ((cuda)); then
  # cuda_runtime_api.h: CUDA_HOME, the toolkit beside nvcc, /usr/local/cuda,
  # or the nvidia-* pip packages the wheel depends on.
  candidates=()
  [ -n "${CUDA_HOME:-}" ] && candidates+=("$CUDA_HOME/include" "$CUDA_HOME/targets/x86_64-linux/include")
  if command -v nvcc >/dev/null; then
    nvcc_root=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
    candidates+=("$nvcc_root/include" "$nvcc_root/targets/x86_64-linux/include")
  fi
  candidates+=(/usr/local/cuda/include /usr/local/cuda/targets/x86_64-linux/include)
  site=$(dirname "$torch_dir")
  for d in "$site"/nvidia/*/include "$site"/nvidia/include; do candidates+=("$d"); done
  cuda_inc=""
  for d in "${candidates[@]}"; do
    if [ -f "$d/cuda_runtime_api.h" ]; then cuda_inc=$d; break; fi
  done
  [ -n "$cuda_inc" ] || die "CUDA build (torch CUDA $torch_cuda) but no cuda_runtime_api.h in: ${candidates[*]}; set CUDA_HOME"
  flags+=(-DTSHIM_CUDA -isystem "$cuda_inc")
  libs+=(-ltorch_cuda -lc10_cuda)
fi

# Collectives (dist.cc): Gloo when the wheel ships its headers, NCCL in a CUDA
# build when nccl.h is found (the nvidia-nccl pip package). If dist.cc does
# not compile with them it is compiled without: the shim always builds, and
# `train --nproc` then says which backend is missing.
dist_flags=()
if [ -f "$inc/gloo/algorithm.h" ]; then
  dist_flags+=(-DTSHIM_GLOO -DUSE_C10D_GLOO)
elif [ -n "${GLOO_INCLUDE:-}" ] && [ -f "$GLOO_INCLUDE/gloo/algorithm.h" ]; then
  # a directory with gloo/ alone: -isystem /usr/include itself would break
  # libstdc++'s #include_next
  mkdir -p "$out/gloo-include"
  ln -sfn "$(cd "$GLOO_INCLUDE" && pwd)/gloo" "$out/gloo-include/gloo"
  dist_flags+=(-DTSHIM_GLOO -DUSE_C10D_GLOO -isystem "$out/gloo-include")
fi
if ((cuda)) && [ -f "$inc/torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp" ]; then
  site=$(dirname "$torch_dir")
  nccl_dirs=()
  [ -n "${NCCL_HOME:-}" ] && nccl_dirs+=("$NCCL_HOME/include")
  [ -n "$check" ] || nccl_dirs+=("$site"/nvidia/*/include "$site"/nvidia/include /usr/include /usr/local/cuda/include)
  for d in "${nccl_dirs[@]}"; do
    if [ -f "$d/nccl.h" ]; then dist_flags+=(-DTSHIM_NCCL -DUSE_C10D_NCCL -isystem "$d"); break; fi
  done
fi

# AdamW (optim.cc): ATen's fused kernel for CUDA parameters in a CUDA build;
# like the collectives, the file is compiled without it if it does not
# compile with it.
fused_flags=()
if ((cuda)) && [ -f "$inc/ATen/ops/_fused_adamw.h" ]; then fused_flags+=(-DTSHIM_FUSED_ADAMW); fi

# RMSNorm (norm.cc): ATen's fused kernel for CUDA tensors; the same fallback.
norm_flags=()
if ((cuda)) && [ -f "$inc/ATen/ops/_fused_rms_norm.h" ]; then norm_flags+=(-DTSHIM_FUSED_RMS_NORM); fi

# CUDA graphs (graph.cc), for the engine's decode step: the same fallback.
graph_flags=()
if ((cuda)) && [ -f "$inc/ATen/cuda/CUDAGraph.h" ]; then graph_flags+=(-DTSHIM_CUDA_GRAPHS); fi

if [ "${TSHIM_STRICT:-0}" = 1 ]; then
  missing=()
  ((cuda)) || missing+=("CUDA (torch $torch_version has no libtorch_cuda.so)")
  [[ " ${dist_flags[*]} " = *" -DTSHIM_GLOO "* ]] || missing+=("Gloo (no gloo/ headers in the wheel; set GLOO_INCLUDE)")
  [[ " ${dist_flags[*]} " = *" -DTSHIM_NCCL "* ]] || missing+=("NCCL (no nccl.h; set NCCL_HOME)")
  ((${#fused_flags[@]})) || missing+=("fused AdamW (no ATen/ops/_fused_adamw.h)")
  ((${#norm_flags[@]})) || missing+=("fused RMSNorm (no ATen/ops/_fused_rms_norm.h)")
  ((${#graph_flags[@]})) || missing+=("CUDA graphs (no ATen/cuda/CUDAGraph.h)")
  ((${#missing[@]} == 0)) || die "TSHIM_STRICT=1 and this torch lacks: ${missing[*]}"
fi

obj="$out/obj"
rm -rf "$obj"
mkdir -p "$obj"
srcs=("$root"/torch/csrc/*.cc)
echo "build-shim: torch $torch_version (CUDA ${torch_cuda}, C++11 ABI $abi) at $torch_dir"
if ((cuda)); then kind="CUDA (-DTSHIM_CUDA, $cuda_inc)"; else kind="CPU only"; fi
if [ -n "$check" ]; then
  echo "build-shim: $kind syntax check of ${#srcs[@]} files, $jobs at a time, logs in $obj"
else
  echo "build-shim: $kind build of ${#srcs[@]} files, $jobs at a time, into $out"
fi
echo "build-shim: collectives: ${dist_flags[*]:-none (no gloo/ headers in the wheel, no nccl.h)}"
echo "build-shim: AdamW: ${fused_flags[*]:-unfused (a CPU build, or no ATen/ops/_fused_adamw.h)}"
echo "build-shim: RMSNorm: ${norm_flags[*]:-explicit ops only (a CPU build, or no ATen/ops/_fused_rms_norm.h)}"
echo "build-shim: CUDA graphs: ${graph_flags[*]:-none (a CPU build, or no ATen/cuda/CUDAGraph.h)}"

start=$SECONDS
running=0
for src in "${srcs[@]}"; do
  name=$(basename "$src" .cc)
  (
    extra=()
    [ "$name" = dist ] && extra=("${dist_flags[@]}")
    [ "$name" = optim ] && extra=("${fused_flags[@]}")
    [ "$name" = graph ] && extra=("${graph_flags[@]}")
    [ "$name" = norm ] && extra=("${norm_flags[@]}")
    if [ -n "$check" ]; then  # a feature that does not compile is a failure here, not a fallback
      "$cxx" "${flags[@]}" "${extra[@]}" -fsyntax-only "$src" >"$obj/$name.log" 2>&1 || touch "$obj/$name.failed"
    elif ! "$cxx" "${flags[@]}" "${extra[@]}" -c "$src" -o "$obj/$name.o" >"$obj/$name.log" 2>&1; then
      if [ "${TSHIM_STRICT:-0}" = 1 ]; then
        touch "$obj/$name.failed"
      elif ((${#extra[@]})) && "$cxx" "${flags[@]}" -c "$src" -o "$obj/$name.o" >>"$obj/$name.log" 2>&1; then
        echo "build-shim: $name.cc did not compile with ${extra[*]}; built without (log: $obj/$name.log)" >&2
      else
        touch "$obj/$name.failed"
      fi
    fi
  ) &
  running=$((running + 1))
  if ((running >= jobs)); then
    wait -n || true
    running=$((running - 1))
  fi
done
wait
failed=("$obj"/*.failed)
if [ -e "${failed[0]}" ]; then
  for f in "${failed[@]}"; do
    name=$(basename "$f" .failed)
    echo "build-shim: compiling torch/csrc/$name.cc failed:" >&2
    head -c 6000 "$obj/$name.log" >&2
  done
  exit 1
fi
if [ -n "$check" ]; then
  echo "build-shim: every file compiles against torch $torch_version in $((SECONDS - start)) s (checked, nothing linked)"
  exit 0
fi

link_flags=()
if [ "${TSHIM_STRICT:-0}" = 1 ]; then
  # shellcheck disable=SC2054 # the commas are the linker's
  link_flags+=(-Wl,--no-undefined)
  if ((cuda)); then
    cudart=""
    for d in "$(dirname "$cuda_inc")"/lib "$(dirname "$cuda_inc")"/lib64; do
      for f in "$d"/libcudart.so.*; do
        if [ -e "$f" ]; then cudart=$f; break 2; fi
      done
    done
    [ -n "$cudart" ] || die "TSHIM_STRICT=1: no libcudart.so.* beside $cuda_inc"
    # shellcheck disable=SC2054
    link_flags+=(-L"$(dirname "$cudart")" -Wl,-rpath,"$(dirname "$cudart")" -l:"$(basename "$cudart")")
  fi
fi

tmp="$out/.libtshim.so.tmp"
"$cxx" -shared -o "$tmp" "$obj"/*.o -L"$lib" -Wl,-rpath,"$lib" \
  -Wl,--no-as-needed "${libs[@]}" "${link_flags[@]}" -Wl,--as-needed
mv "$tmp" "$out/libtshim.so"

if ((cuda)); then
  readelf -d "$out/libtshim.so" | grep -q 'NEEDED.*libtorch_cuda' ||
    die "$out/libtshim.so does not list libtorch_cuda.so as NEEDED; CUDA kernels would not register"
fi
echo "build-shim: $out/libtshim.so in $((SECONDS - start)) s; run Go binaries with LD_LIBRARY_PATH=$out"
