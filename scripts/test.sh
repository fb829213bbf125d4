#!/usr/bin/env bash
# test.sh — `make test` after its setup and vet (the Makefile runs those
# first): the shim's CUDA build checked without a GPU, the Python reference
# environment, every test, the shim's CUDA build linked against PyPI's
# torch with the packages that use it tested again on it, and the GPU window
# scripts rehearsed on the CPU. Each phase's time is printed as it ends,
# and all of them at the end, with the time since make started
# (MAKE_TEST_T0, seconds since the epoch) — a failure prints them up to the
# phase that failed.
#
#   GO=go MAKE_TEST_T0=$(date +%s) bash scripts/test.sh
#
# Phases:
#   check-builds  scripts/gpu/check-builds.sh (exit 2: the headers could not
#                 be fetched — reported, not a failure)
#   Python env    scripts/pyref/setup.sh (exit 2: PyPI unreachable — the
#                 reference checks and the PyPI link are skipped, saying so;
#                 0: TROUPE_PYREF_REQUIRED=1 for the tests)
#   go test       TROUPE_SANDBOX_REQUIRED=1 go test -timeout 45m ./...
#   test-shim     scripts/pyref/test-shim.sh, where the environment installed
#   check-window  scripts/gpu/check-window.sh, likewise
#
# What it is not: a place for test logic; each phase is its own script or
# command, run as before.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

GO=${GO:-scripts/go/go}
began=$(date +%s)
t0=${MAKE_TEST_T0:-$began}
times=("setup, shim and vet $((began - t0)) s")

# phase NAME SECONDS: one more time for the summary, printed now too
phase() {
  times+=("$1 $2 s")
  echo "make test: $1 took $2 s"
}

summary() {
  local all="" x
  for x in "${times[@]}"; do all+="${all:+, }$x"; done
  echo "make test: times: $all; total $(($(date +%s) - t0)) s"
}
trap summary EXIT

t=$(date +%s)
bash scripts/gpu/check-builds.sh
rc=$?
phase check-builds $(($(date +%s) - t))
if [ $rc -eq 2 ]; then
  echo "make test: the shim's CUDA build was NOT checked (could not fetch the headers from Debian)"
elif [ $rc -ne 0 ]; then
  exit $rc
fi

t=$(date +%s)
bash scripts/pyref/setup.sh
pyref=$?
phase "Python env" $(($(date +%s) - t))
if [ $pyref -eq 2 ]; then
  echo "make test: the Python reference checks and the shim's link against PyPI's torch are SKIPPED (PyPI unreachable)"
elif [ $pyref -ne 0 ]; then
  exit $pyref
else
  export TROUPE_PYREF_REQUIRED=1
fi

t=$(date +%s)
export TROUPE_SETUP_REQUIRED=1 # what setup fetched (fixtures, the cached Go) must be there
echo "TROUPE_SANDBOX_REQUIRED=1 $GO test -timeout 45m ./..."
TROUPE_SANDBOX_REQUIRED=1 "$GO" test -timeout 45m ./...
rc=$?
phase "go test" $(($(date +%s) - t))
[ $rc -eq 0 ] || exit $rc

if [ $pyref -eq 0 ]; then
  t=$(date +%s)
  GO=$GO bash scripts/pyref/test-shim.sh
  rc=$?
  phase test-shim $(($(date +%s) - t))
  [ $rc -eq 0 ] || exit $rc

  t=$(date +%s)
  bash scripts/gpu/check-window.sh
  rc=$?
  phase check-window $(($(date +%s) - t))
  [ $rc -eq 0 ] || exit $rc
fi
