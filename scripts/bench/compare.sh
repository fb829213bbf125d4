#!/usr/bin/env bash
# compare.sh — troupe against a plain eager PyTorch Qwen2 on this machine's
# CPU (scripts/bench/compare.py): builds bin/train, then runs both sides in
# interleaved rounds on the same weights and prints troupe's speed ÷ PyTorch's.
#
#   scripts/bench/compare.sh                          # PyTorch side: scripts/pyref (torch 2.15)
#   scripts/bench/compare.sh --python /usr/bin/python3  # Debian's python3-torch: troupe's own libtorch
#   scripts/bench/compare.sh --models 40m --rounds 5 --threads 1
#
# Without --python it uses the reference environment (scripts/pyref/setup.sh
# installs it), else Debian's /usr/bin/python3 when that imports torch
# (apt-get install python3-torch: the same libtorch 1.13 troupe links).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
make -s build >/dev/null
py=()
case " $* " in
*" --python "*) ;;
*)
  if scripts/pyref/python -c 'import torch' 2>/dev/null; then
    py=(--python "$root/scripts/pyref/python")
  elif (cd / && /usr/bin/python3 -c 'import torch') 2>/dev/null; then
    py=(--python /usr/bin/python3)
  else
    echo "compare.sh: no Python with torch: install the reference environment (bash scripts/pyref/setup.sh) or Debian's python3-torch" >&2
    exit 2
  fi
  ;;
esac
exec python3 "$root/scripts/bench/compare.py" "${py[@]}" "$@"
