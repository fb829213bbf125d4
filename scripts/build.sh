#!/usr/bin/env bash
# build.sh — `make build`: bin/train from ./cmd/train. A first build
# compiles Go's standard library for cgo, troupe's dependencies and the cgo
# binding (torch/), several minutes on 2 cores; a rebuild takes seconds.
# It says which, and while it runs, every few seconds which package it
# finished last (scripts/lib/progress.sh), so it never looks hung.
#
# Usage: GO=go LDFLAGS='-X main.version=…' scripts/build.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/progress.sh

GO=${GO:-go}
mkdir -p bin build
began=$SECONDS
echo "build: bin/train ($GO build; a first build compiles the Go packages and the cgo binding, several minutes on 2 cores; a rebuild, seconds)"
progress "building bin/train" build/go-build.log "$GO" build -v -ldflags "${LDFLAGS:-}" -o bin/train ./cmd/train
echo "build: bin/train ready ($((SECONDS - began)) s)"
