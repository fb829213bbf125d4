# progress.sh — sourced by scripts that run long, quiet steps (apt-get, the
# shim's CMake build, the first `go build`): `progress WHAT LOG CMD…` runs
# CMD with its output in LOG and says every few seconds that WHAT is still
# going, with the log's newest line when it has one (the file CMake is
# compiling, the package `go build -v` finished last), so that the console
# never stays silent for long (make demo on a fresh clone:
# scripts/setup.sh, scripts/build.sh). On failure it prints the log's tail
# and returns CMD's status.

# PROGRESS_EVERY is the longest silence in seconds (a tick may land up to
# a second later). The clock runs across calls: a quiet step that follows
# another ticks on the first one's schedule, so two quiet steps in a row
# are never silent for longer either.
PROGRESS_EVERY=${PROGRESS_EVERY:-7}
progress_last=$SECONDS

progress() {
  local what=$1 log=$2
  shift 2
  "$@" >"$log" 2>&1 &
  local pid=$! began=$SECONDS rc=0 newest
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    if kill -0 "$pid" 2>/dev/null && (( SECONDS - progress_last >= PROGRESS_EVERY )); then
      progress_last=$SECONDS
      newest=$(tail -n 1 "$log" 2>/dev/null | tr -d '\r' | cut -c1-90)
      echo "  … still $what ($((SECONDS - began)) s${newest:+; last: $newest})"
    fi
  done
  wait "$pid" || rc=$?
  if (( rc != 0 )); then
    tail -40 "$log" >&2
    echo "failed: $what (the full log is $log)" >&2
  fi
  return $rc
}
