#!/usr/bin/env bash
# setup.sh — installs the Python reference environment troupe's tests compare
# against (torch from PyPI, transformers, peft, tensorboard, safetensors, trl,
# verl; every version and hash in requirements.txt) into a virtual
# environment outside the repository:
#
#   ${TROUPE_PYREF_DIR:-~/.cache/troupe/pyref}/<first 12 hex of sha256(requirements.txt)>/
#
# so every clone on a machine shares one install per requirements.txt, and a
# changed requirements.txt gets a new one beside it. Idempotent: a complete
# install (its .complete stamp written last, naming the requirements hash and
# the Python) is reused in a fraction of a second; a half-done one is removed
# and redone. Installs with `pip install --require-hashes --no-deps`, so pip
# resolves nothing: what is installed is exactly the file.
#
#   bash scripts/pyref/setup.sh     # then scripts/pyref/python runs its python
#
# Environment: TROUPE_PYREF_DIR (where the environments live), PYTHON (the
# interpreter to build the venv from, default python3; 3.11 or 3.12, which is
# what the pins were resolved for and what verl supports), PIP_INDEX_URL.
#
# Exit status: 0 when installed; 2, with one line, when the package index
# cannot be reached (`make test` then reports the reference checks as
# skipped, as it does for scripts/gpu/check-builds.sh); 1 on any other error.
# The first install downloads about 4 GB (torch's CUDA libraries are most of
# it; they are not used on a machine without a GPU but are the wheel a GPU
# user installs).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/pyref/env.sh
. "$here/env.sh"
py=${PYTHON:-python3}

say() { echo "pyref: $*"; }
die() { echo "pyref: $*" >&2; exit 1; }

if pyref_ready; then
  say "ok ($pyref_venv)"
  exit 0
fi

command -v "$py" >/dev/null || die "no $py on PATH (install python3 3.11, or set PYTHON)"
pyver=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
case "$pyver" in
3.11 | 3.12) ;;
*) die "$py is Python $pyver; the reference environment needs 3.11 or 3.12 (transformers 5 needs ≥ 3.11, verl < 3.13); set PYTHON" ;;
esac
"$py" -c 'import venv, ensurepip' 2>/dev/null ||
  die "$py cannot create virtual environments (Debian: apt-get install python3-venv)"

index=${PIP_INDEX_URL:-https://pypi.org/simple}
if ! "$py" - "$index" <<'EOF' 2>/dev/null; then
import sys, urllib.request
urllib.request.urlopen(sys.argv[1].rstrip("/") + "/pip/", timeout=20).read(1)
EOF
  say "cannot reach $index; the Python reference checks are skipped"
  exit 2
fi

mkdir -p "$pyref_root"
exec 9>"$pyref_root/.lock"
flock 9 # another clone may be installing the same environment
if pyref_ready; then
  say "ok ($pyref_venv, installed meanwhile by another setup)"
  exit 0
fi

say "installing $(grep -c '^[a-z]' "$pyref_requirements") packages into $pyref_venv (first time: a ~4 GB download)"
start=$SECONDS
rm -rf "$pyref_venv"
"$py" -m venv "$pyref_venv"
# pip_install: no site-wide PIP_FIND_LINKS (a machine's local wheel folder must not
# stand in for PyPI's files), no resolving, every file checked by its hash
pip_install() {
  env -u PIP_FIND_LINKS "$pyref_venv/bin/python" -m pip install -q --disable-pip-version-check \
    --require-hashes --no-deps "$@" ||
    die "pip install failed (the half-done environment is redone on the next run)"
}
# antlr4-python3-runtime (omegaconf's, for verl) is an sdist only: it is built
# with the pinned setuptools, installed first, instead of an unpinned one
# that build isolation would fetch
awk '/^setuptools==/ { p = 1 } p { print } p && !/\\$/ { exit }' "$pyref_requirements" >"$pyref_venv/setuptools.txt"
pip_install -r "$pyref_venv/setuptools.txt"
pip_install --no-build-isolation -r "$pyref_requirements"
"$pyref_venv/bin/python" - <<'EOF' || die "the installed environment does not import (see above)"
import numpy, peft, safetensors, tensorboard, torch, transformers, trl
import verl.trainer.ppo.core_algos
EOF
pyref_stamp >"$pyref_venv/.complete"
say "ok ($pyref_venv, $(du -sh "$pyref_venv" | cut -f1), $((SECONDS - start)) s)"
