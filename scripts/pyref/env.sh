# env.sh — where the Python reference environment lives; sourced by setup.sh
# and python (not run on its own). Defines:
#   pyref_requirements  this directory's requirements.txt
#   pyref_root          ${TROUPE_PYREF_DIR:-~/.cache/troupe/pyref}, absolute
#   pyref_venv          pyref_root/<first 12 hex of sha256(requirements.txt)>
#   pyref_stamp         prints what .complete holds for this requirements.txt
#   pyref_ready         true when pyref_venv is complete
pyref_requirements="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/requirements.txt"
pyref_root=${TROUPE_PYREF_DIR:-$HOME/.cache/troupe/pyref}
[[ $pyref_root = /* ]] || pyref_root="$PWD/$pyref_root"
pyref_hash=$(sha256sum "$pyref_requirements" | cut -c1-64)
pyref_venv="$pyref_root/${pyref_hash:0:12}"

pyref_stamp() { echo "requirements.txt sha256 $pyref_hash"; }

pyref_ready() {
  [ -x "$pyref_venv/bin/python" ] && [ -f "$pyref_venv/.complete" ] &&
    [ "$(cat "$pyref_venv/.complete")" = "$(pyref_stamp)" ]
}
