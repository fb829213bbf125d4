# shellcheck shell=bash disable=SC2034 # sourced: py, logs, report are for the sourcing script
# common.sh — sourced first by the scripts that run on the GPU machine
# (window-tests.sh, window-bench.sh) with the name of their
# report file:
#
#   . "$(dirname "${BASH_SOURCE[0]}")/common.sh" window-bench.txt
#
# It moves to the repository root and sets root, py (PYTHON, default
# python3), logs ($OUT when the device tool runs the script, else
# .gpu/logs; created), report ($logs/NAME, emptied) and say (prints a line
# and appends it to the report).
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 1
py=${PYTHON:-python3}
logs=${OUT:-$root/.gpu/logs}
mkdir -p "$logs"
report="$logs/$1"
: >"$report"
say() { echo "$*" | tee -a "$report"; }
