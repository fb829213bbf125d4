#!/usr/bin/env bash
# prepare.sh — run HERE (the CPU machine with Go): builds what the GPU
# machine, which has no Go toolchain, will run, into the ignored folder .gpu/:
#
#   .gpu/bin/<pkg>.test   go test -c of each package (torch, model, …)
#   .gpu/bin/train        the CLI
#   .gpu/tests.txt        one line per test binary: name, package dir, import path
#   .gpu/PREPARED         the commit and time it was built from
#
#   scripts/gpu/prepare.sh               # the packages with CUDA checks: torch, model, policy, ckpt, internal/gpu
#   scripts/gpu/prepare.sh ./model ./torch
#   scripts/gpu/prepare.sh ./...         # every package with tests
#
# Then carry .gpu to the GPU machine and run scripts/gpu/window-tests.sh there
# (docs/gpu.md, "The window plan"). The binaries link libtshim.so by name with a
# RUNPATH to this checkout's build/ directory; on the GPU machine
# LD_LIBRARY_PATH points them at the shim built there instead, which takes
# precedence over RUNPATH.
#
# What it is not: a test run. A package that does not compile (someone may be
# editing it) is reported and skipped; the exit status is non-zero only when
# nothing could be built. Binaries are stripped (-s -w) to stay well under the
# device tool's 64 MiB carry limit; Go's panics still name functions and lines.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
go=${GO:-$root/scripts/go/go}
dest=.gpu
command -v "$go" >/dev/null || { echo "prepare: no go on PATH (set GO)" >&2; exit 1; }
[ -f build/libtshim.so ] || { echo "prepare: build/libtshim.so is missing; Go links against it: run make shim (or make setup) first" >&2; exit 1; }

if (($#)); then
  patterns=("$@")
else
  # the packages whose tests have CUDA paths; with config and cmd/train the
  # binaries pass 60 MiB, too close to the carry limit for one call
  patterns=(./torch ./model ./policy ./ckpt ./internal/gpu)
fi
# import path, directory, then "T" when it has tests and "D" when it (or its
# tests) depend on troupe/torch or troupe/internal/gpu
fmt='{{.ImportPath}} {{.Dir}} {{if or .TestGoFiles .XTestGoFiles}}T{{else}}-{{end}} {{if eq .ImportPath "troupe/torch" "troupe/internal/gpu"}}D{{else}}{{range .Deps}}{{if eq . "troupe/torch" "troupe/internal/gpu"}}D{{end}}{{end}}{{range .TestImports}}{{if eq . "troupe/torch" "troupe/internal/gpu"}}D{{end}}{{end}}{{range .XTestImports}}{{if eq . "troupe/torch" "troupe/internal/gpu"}}D{{end}}{{end}}{{end}}'
mapfile -t listed < <("$go" list -e -f "$fmt" "${patterns[@]}")

rm -rf "${dest:?}/bin" "$dest/tests.txt"
mkdir -p "$dest/bin"
: >"$dest/tests.txt"
built=0
failed=()
for line in "${listed[@]}"; do
  read -r pkg dir tests deps <<<"$line"
  [ "$tests" = T ] || continue
  # with no arguments keep only the packages that touch libtorch or the GPU
  if ((!$#)) && [[ $deps != D* ]]; then continue; fi
  rel=${dir#"$root"/}
  [ "$dir" = "$root" ] && rel=.
  name=${pkg#troupe/}
  name=${name//\//_}
  if "$go" test -c -ldflags='-s -w' -o "$dest/bin/$name.test" "$pkg" 2>"$dest/bin/$name.err"; then
    rm -f "$dest/bin/$name.err"
    printf '%s\t%s\t%s\n' "$name" "$rel" "$pkg" >>"$dest/tests.txt"
    built=$((built + 1))
    echo "prepare: $pkg -> $dest/bin/$name.test"
  else
    failed+=("$pkg")
    echo "prepare: $pkg does not build, skipped:" >&2
    head -n 20 "$dest/bin/$name.err" >&2
    rm -f "$dest/bin/$name.test"
  fi
done

# Gloo's headers (Debian's libgloo-dev, which setup.sh installs): the GPU
# machines' torch wheel has Gloo inside libtorch_cpu but ships no gloo/
# headers, and data parallel needs Gloo (window-tests.sh sets GLOO_INCLUDE).
if [ -d /usr/include/gloo ]; then
  rm -rf "$dest/gloo-include"
  mkdir -p "$dest/gloo-include"
  cp -r /usr/include/gloo "$dest/gloo-include/"
fi

version=$(git describe --always --dirty 2>/dev/null || echo dev)
if [ -d cmd/train ]; then
  # RUNPATH to a shim built by `make gpu` or window-tests.sh beside it:
  # <root>/build-gpu from .gpu/bin/ and, once make-gpu.sh copies it to
  # bin/train on a node without Go, from bin/ (LD_LIBRARY_PATH still wins)
  # shellcheck disable=SC2016 # $ORIGIN is the dynamic loader's
  if CGO_LDFLAGS='-Wl,-rpath,$ORIGIN/../build-gpu -Wl,-rpath,$ORIGIN/../../build-gpu' \
    "$go" build -ldflags "-s -w -X main.version=$version" -o "$dest/bin/train" ./cmd/train; then
    echo "prepare: ./cmd/train -> $dest/bin/train"
  else
    failed+=(./cmd/train)
  fi
fi

{
  echo "commit $version"
  echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) with $("$go" version)"
  echo "test binaries $built"
  ((${#failed[@]})) && echo "skipped (did not build): ${failed[*]}"
  true
} >"$dest/PREPARED"

size=$(du -sm "$dest" | cut -f1)
echo "prepare: $built test binaries in $dest/ (${size} MiB); skipped: ${failed[*]:-none}"
if ((size > 56)); then
  echo "prepare: warning: $dest is ${size} MiB; with the working tree it may pass the 64 MiB carry limit — name fewer packages" >&2
fi
((built > 0)) || { echo "prepare: no test binary was built" >&2; exit 1; }
