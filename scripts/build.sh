#!/usr/bin/env bash
# build.sh — `make build`: bin/train from ./cmd/train. A first build
# compiles Go's standard library for cgo, troupe's dependencies and the cgo
# binding (torch/), several minutes on 2 cores; a rebuild takes seconds.
# It says which, and while it runs, every few seconds which package it
# finished last (scripts/lib/progress.sh), so it never looks hung.
#
# Usage: GO=scripts/go/go LDFLAGS='-X main.version=…' [TRAIN_OUT=bin/train] scripts/build.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/progress.sh

GO=${GO:-scripts/go/go}
out=${TRAIN_OUT:-bin/train}
mkdir -p "$(dirname "$out")" build
began=$SECONDS
echo "build: $out ($("$GO" --which 2>/dev/null || echo "$GO") build; a first build compiles the Go packages and the cgo binding, several minutes on 2 cores; a rebuild, seconds)"
progress "building $out" build/go-build.log "$GO" build -v -ldflags "${LDFLAGS:-}" -o "$out" ./cmd/train
echo "build: $out ready ($((SECONDS - began)) s)"
