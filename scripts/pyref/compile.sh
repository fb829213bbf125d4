#!/usr/bin/env bash
# compile.sh — regenerates requirements.txt (every package of the Python
# reference environment, exact versions, sha256 hashes) from requirements.in
# with pip-tools in a throwaway virtual environment:
#
#   scripts/pyref/compile.sh            # keeps the pins already in requirements.txt
#   scripts/pyref/compile.sh --upgrade  # re-resolves every transitive pin
#
# The resolution is for the Python that runs it (python3; Debian 12's 3.11 on
# the CI machines) on linux x86_64: markers such as torch's nvidia-* wheels are
# evaluated for that platform. Needs PyPI; installs nothing outside a temp dir.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
tools=$(mktemp -d)
trap 'rm -rf "$tools"' EXIT
"${PYTHON:-python3}" -m venv "$tools"
"$tools/bin/pip" install -q pip-tools==7.6.2
# a site-wide PIP_FIND_LINKS would otherwise be written into the file
env -u PIP_FIND_LINKS CUSTOM_COMPILE_COMMAND=scripts/pyref/compile.sh "$tools/bin/pip-compile" -q --generate-hashes --allow-unsafe --no-strip-extras \
  --no-emit-find-links --no-emit-index-url \
  -o requirements.txt "$@" requirements.in
