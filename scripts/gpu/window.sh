# shellcheck shell=bash
# window.sh — sourced by the two GPU window scripts (window-tests.sh,
# window-bench.sh) after common.sh: a stage runner that keeps a command under
# its own time limit, logs it to $logs/<name>.log and records one row of the
# summary table the script prints at its end, so a window always ends with a
# table even when a stage hangs or fails.
#
#   stage NAME SECONDS command args...   # runs it (a program or a function of
#                                        # the script); returns its status
#   note NAME TEXT                       # a row that is a figure, not a command
#   finish                               # prints the table; exit 1 if a stage failed
#
# Each script takes a total budget (WINDOW_BUDGET seconds, default 480, the
# issue's 8 minutes); a stage whose limit would pass it is shortened, and one
# that could not start in the time left is recorded as "skipped (budget)".
# The device tool brings back at most 8 files: the report stays in $OUT and
# every other log goes to a folder of its own, packed into one
# <script>-logs.tar.gz beside the report at the end.
window_out=$logs
logs=$(mktemp -d)
# WINDOW_DRY=1 rehearses a script on a CPU machine (scripts/gpu/check-window.sh,
# in `make test`): the CPU shim in build/, models on the CPU, tiny shapes for
# the large ones, no transformers timings, CUDA tests skipping themselves;
# every command line, flag and config key runs, and the Python checks run
# for real where PYTHON has their packages.
dry=${WINDOW_DRY:-0}
device=cuda
if [ "$dry" = 1 ]; then
  device=cpu
fi
window_start=$SECONDS
window_budget=${WINDOW_BUDGET:-480}
[ "$dry" = 1 ] && window_budget=${WINDOW_BUDGET:-1800}
window_rows=()
window_failed=0

stage() {
  local name=$1 limit=$2
  shift 2
  local left=$((window_budget - (SECONDS - window_start)))
  if ((left < 10)); then
    window_rows+=("$(printf '%-28s %-18s %6s' "$name" "skipped (budget)" -)")
    return 3
  fi
  [ "$dry" = 1 ] && limit=$((limit * 4)) # a loaded CPU machine, not a GPU
  ((limit > left)) && limit=$left
  local began=$SECONDS rc
  echo "== $name (limit ${limit} s)" | tee -a "$report"
  if declare -F "$1" >/dev/null; then # a function of the script: timeout needs a program
    export root logs py report device dry
    timeout --kill-after=10 "$limit" bash -c "$(declare -f); \"\$@\"" stage "$@" >"$logs/$name.log" 2>&1
  else
    timeout --kill-after=10 "$limit" "$@" >"$logs/$name.log" 2>&1
  fi
  rc=$?
  local took=$((SECONDS - began)) result=ok
  if ((rc == 124 || rc == 137)); then
    result="TIMEOUT"
    window_failed=1
  elif ((rc != 0)); then
    result="FAIL (rc $rc)"
    window_failed=1
  fi
  window_rows+=("$(printf '%-28s %-18s %6d' "$name" "$result" "$took")")
  if ((rc != 0)); then
    echo "-- $name: $result; the log's last lines:" | tee -a "$report"
    tail -n 25 "$logs/$name.log" | tee -a "$report"
  fi
  return "$rc"
}

note() {
  window_rows+=("$(printf '%-28s %s' "$1" "$2")")
}

finish() {
  {
    echo
    echo "== summary ($(basename "$0"), $((SECONDS - window_start)) s of a ${window_budget} s budget)"
    printf '%-28s %-18s %6s\n' stage result seconds
    printf '%s\n' "${window_rows[@]}"
  } | tee -a "$report"
  tar -czf "$window_out/$(basename "$0" .sh)-logs.tar.gz" -C "$logs" . &&
    echo "logs: $window_out/$(basename "$0" .sh)-logs.tar.gz"
  exit "$window_failed"
}

# go_tests NAME PATTERN: runs every carried test binary (scripts/gpu/prepare.sh)
# with -test.run PATTERN in its package directory; prints a line per package.
go_tests() {
  local pattern=$1 failed=0 name dir pkg
  while IFS=$'\t' read -r name dir pkg; do
    echo "=== $pkg"
    (cd "$root/$dir" && "$root/.gpu/bin/$name.test" -test.v -test.run "$pattern" -test.timeout 5m) >"$logs/go-$name.log" 2>&1
    local rc=$?
    printf '%-14s rc %d  pass %d  fail %d  skip %d\n' "$name" "$rc" \
      "$(grep -c -- '--- PASS' "$logs/go-$name.log")" "$(grep -c -- '--- FAIL' "$logs/go-$name.log")" \
      "$(grep -c -- '--- SKIP' "$logs/go-$name.log")"
    grep -E -- '--- (FAIL|SKIP)|^\s+\S+_test\.go:[0-9]+:|^(panic|fatal error)' "$logs/go-$name.log" | head -n 60
    ((rc == 0)) || failed=1
  done <"$root/.gpu/tests.txt"
  return $failed
}
