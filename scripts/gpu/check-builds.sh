#!/usr/bin/env bash
# check-builds.sh — compiles the shim's CUDA build on a machine without a GPU
# or a CUDA wheel: every torch/csrc/*.cc with -DTSHIM_CUDA and each feature
# build-shim.sh would turn on (NCCL and Gloo collectives, fused AdamW, fused
# RMSNorm where the version has it, CUDA graphs), with -fsyntax-only, against
# the headers of the oldest 2.x torch the shim supports on GPUs, as Debian
# packages it:
#
#   torch 2.6.0, CUDA 12.4   trixie: libtorch-cuda-dev, nvidia-cuda-dev,
#                            libcu++-dev, libnccl-dev, libgloo-dev (pinned)
#   torch 2.11.0             the GPU machines' version: the PyPI wheel's
#                            include/ (read with range requests by
#                            wheel_headers.py), with the CUDA 12.4, NCCL and
#                            Gloo headers above
#
# The newest torch is not checked here but built and linked for real:
# scripts/pyref/test-shim.sh compiles every feature against the pinned PyPI
# wheel (torch 2.15, CUDA 13.2, ATen's fused RMSNorm) and runs the CPU tests
# on it. sid's libtorch-dev is not checked: it is unpinned (an upload could
# break CI) and a neighbour of the wheel's version. torch 2.6 is what the
# wheel build cannot see: the lower end of the range, without fused RMSNorm
# (< 2.8), on CUDA 12.
#
#   scripts/gpu/check-builds.sh
#
# The packages are fetched with `apt-get download` (nothing is installed) and
# only their include/ trees are kept, in ${TROUPE_CACHE:-~/.cache/troupe}/
# gpu-headers, so a second run fetches nothing new (the first fetches about
# 1 GB, nvidia-cuda-dev being most of it). Exit status: 0 when every file
# compiles, 1 when one does not (its errors are printed), 2 when no headers
# could be fetched (no network to Debian's mirrors), which `make test` reports
# as a skip.
#
# What it is not: a build. Nothing is linked and nothing runs (that is
# scripts/pyref/test-shim.sh, for the wheel's torch); the GPU tests
# (scripts/gpu/window-tests.sh) need a GPU machine.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cache=${TROUPE_CACHE:-$HOME/.cache/troupe}/gpu-headers
[[ $cache = /* ]] || cache="$PWD/$cache"
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
mkdir -p "$cache"

say() { echo "check-builds: $*"; }

# one run at a time per cache: two `make test`s at once would otherwise
# rebuild the same header trees under each other
exec 9>"$cache/.lock"
if ! flock -n 9; then
  say "another check-builds is using $cache; waiting for it"
  flock 9
fi

# apt state of its own, so the machine's sources and lists are untouched
apt_dir=$(mktemp -d)
trap 'rm -rf "$apt_dir"' EXIT
aptopts() {
  local suite=$1
  echo -o "Dir::Etc::SourceList=$apt_dir/$suite.list" -o Dir::Etc::SourceParts=/dev/null \
    -o "Dir::State::Lists=$apt_dir/$suite-lists" -o "Dir::Cache=$apt_dir/$suite-cache" \
    -o APT::Sandbox::User=root -o Debug::NoLocking=1
}
update() {
  local suite=$1
  mkdir -p "$apt_dir/$suite-lists/partial" "$apt_dir/$suite-cache/archives/partial"
  echo "deb $mirror $suite main contrib non-free" >"$apt_dir/$suite.list"
  # shellcheck disable=SC2046
  apt-get $(aptopts "$suite") -qq update >"$apt_dir/$suite.update.log" 2>&1
}

# headers SUITE PKG [VERSION]: the include/ tree of a package, fetched once;
# prints its directory (…/usr/include)
headers() {
  local suite=$1 pkg=$2 want=${3:-} ver dir
  # shellcheck disable=SC2046
  ver=$(apt-cache $(aptopts "$suite") show "$pkg${want:+=$want}" 2>/dev/null | sed -n 's/^Version: //p' | head -1)
  if [ -z "$ver" ] && [ -n "$want" ]; then  # a point release replaced the pinned version
    # shellcheck disable=SC2046
    ver=$(apt-cache $(aptopts "$suite") show "$pkg" 2>/dev/null | sed -n 's/^Version: //p' | head -1)
    [ -n "$ver" ] && say "$pkg $want is gone from $suite; using $ver" >&2
  fi
  [ -n "$ver" ] || { say "$suite has no $pkg" >&2; return 1; }
  dir="$cache/${pkg}_${ver//[:~+]/_}"
  if [ ! -f "$dir/.done" ]; then
    rm -rf "$dir" && mkdir -p "$dir"
    say "fetching $pkg $ver from $suite" >&2
    # shellcheck disable=SC2046
    (cd "$apt_dir" && apt-get $(aptopts "$suite") -qq download "$pkg=$ver" >/dev/null 2>&1) ||
      { say "could not download $pkg $ver" >&2; return 1; }
    dpkg-deb --fsys-tarfile "$apt_dir/${pkg}_"*.deb | tar -x -C "$dir" ./usr/include ||
      { say "$pkg $ver: no usr/include in the package" >&2; return 1; }
    rm -f "$apt_dir/${pkg}_"*.deb
    touch "$dir/.done"
  fi
  echo "$dir/usr/include"
}

# tree NAME INC...: one include directory of symbolic links to several
# (torch's headers with Gloo's beside them, where build-shim.sh looks for
# gloo/ as in the wheels; CUDA's with libcu++'s nv/ and cuda/, as in a
# toolkit)
tree() {
  local t="$cache/tree-$1/include" d
  shift
  rm -rf "$(dirname "$t")" && mkdir -p "$t"
  for d in "$@"; do cp -as "$d/." "$t/"; done
  echo "$t"
}

# check NAME TORCH_INC CUDA_INC NCCL_INC
check() {
  local out="$apt_dir/out-$1"
  CUDA_HOME=$(dirname "$3") NCCL_HOME=$(dirname "$4") TSHIM_CHECK_INCLUDE=$2 TSHIM_CUDA=1 \
    bash "$root/scripts/gpu/build-shim.sh" "$out"
}

fetched=0 failed=0

if update trixie &&
  torch=$(headers trixie libtorch-cuda-dev 2.6.0+dfsg-7+b1) &&
  cuda=$(headers trixie nvidia-cuda-dev 12.4.127~12.4.1-2) &&
  cucxx=$(headers trixie libcu++-dev 2.3.2-2) &&
  nccl=$(headers trixie libnccl-dev 2.22.3-1-1) &&
  gloo=$(headers trixie libgloo-dev); then
  fetched=1
  cuda=$(tree cuda "$cuda" "$cucxx")
  check torch-2.6 "$(tree torch-trixie "$torch" "$gloo")" "$cuda" "$nccl" || failed=1
else
  say "trixie's headers could not be fetched; torch 2.6 not checked (log: apt-get update said: $(tail -1 "$apt_dir/trixie.update.log" 2>/dev/null))"
fi

# torch 2.11, what the GPU machines run: its wheel's include/ read from PyPI
# with range requests (wheel_headers.py; ~14 MB of the 506 MB wheel), the
# CUDA, NCCL and Gloo headers fetched above.
wheel_211=https://files.pythonhosted.org/packages/8c/8b/d7be22fbec9ffee6cff31a39f8750d4b3a65d349a286cf4aec74c2375662/torch-2.11.0-cp311-cp311-manylinux_2_28_x86_64.whl
if ((fetched)); then
  w="$cache/torch-2.11.0-wheel"
  if [ ! -f "$w/.done" ]; then
    rm -rf "$w" && say "fetching torch 2.11.0's headers from PyPI" &&
      python3 "$root/scripts/gpu/wheel_headers.py" "$wheel_211" "$w" && touch "$w/.done"
  fi
  if [ -f "$w/.done" ]; then
    check torch-2.11 "$(tree torch-2.11 "$w/include" "$gloo")" "$cuda" "$nccl" || failed=1
  else
    say "torch 2.11.0's headers could not be fetched from PyPI; torch 2.11 not checked"
  fi
fi

if ((!fetched)); then
  exit 2
fi
exit "$failed"
