#!/usr/bin/env bash
# demo-figures.sh — the README's demo figures, regenerated from the current
# build: runs `make demo` (setup, build, then the MAGRPO writing demo of
# configs/magrpo-writing-tiny.yaml from nothing), times it, and writes
#   docs/demo/metrics.png  the run's plot (runs/demo/magrpo/metrics.png)
#   docs/demo/figures.md   held-out accuracy and joint reward before RL
#                          (step 0's evaluation) and after it (the last),
#                          the duration, the machine and the build
# The README quotes docs/demo/figures.md; nothing there is typed by hand.
#
#   scripts/demo-figures.sh           run the demo, then write the figures
#   scripts/demo-figures.sh --no-run  write them from an existing runs/demo
#
# About 4 minutes on 2 idle cores; on a busy machine the duration says so.
set -euo pipefail
cd "$(dirname "$0")/.."
run=runs/demo/magrpo
seconds=""
if [ "${1:-}" != "--no-run" ]; then
  log=$(mktemp)
  began=$SECONDS
  if ! make demo >"$log" 2>&1; then
    tail -40 "$log" >&2
    echo "demo-figures: make demo failed (log $log)" >&2
    exit 1
  fi
  seconds=$((SECONDS - began))
  rm -f "$log"
fi
[ -f "$run/metrics.jsonl" ] || { echo "demo-figures: no $run/metrics.jsonl; run without --no-run" >&2; exit 1; }
cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//' || true)
os=$(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME" || uname -s)
load=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")
build=$(git describe --always --dirty 2>/dev/null || echo dev) # before this script writes docs/demo
mkdir -p docs/demo
cp "$run/metrics.png" docs/demo/metrics.png
libtorch=$( (bin/train version 2>/dev/null || true) | sed -n 's/^libtorch \([^ ]*\).*/\1/p')

METRICS="$run/metrics.jsonl" SECONDS_TAKEN="$seconds" CPU="${cpu:-unknown}" CORES="$(nproc)" OS="$os" LOAD="$load" \
BUILD="$build" LIBTORCH="${libtorch:-?}" python3 - >docs/demo/figures.md <<'PY'
import json, os, datetime
evals = []
for line in open(os.environ["METRICS"]):
    r = json.loads(line)
    v = r.get("values", r)
    if "eval/accuracy" in v:
        evals.append((r["step"], v["eval/accuracy"], v.get("eval/mean_reward")))
if len(evals) < 2:
    raise SystemExit("demo-figures: the run has fewer than two evaluations")
(s0, a0, r0), (s1, a1, r1) = evals[0], evals[-1]
secs = os.environ["SECONDS_TAKEN"]
took = f"{int(secs)//60} min {int(secs)%60:02d} s for `make demo` (setup and build included)" if secs else "not measured (--no-run)"
print("# The demo's figures\n")
print("Written by `scripts/demo-figures.sh` from a run of `make demo` (configs/magrpo-writing-tiny.yaml):")
print("MAGRPO on cooperative writing, a tiny random model warmed up by `train sft`, then RL.\n")
print("| | before RL (step %d) | after RL (step %d) |" % (s0, s1))
print("|---|---|---|")
print("| held-out accuracy | %.1f %% | %.1f %% |" % (100 * a0, 100 * a1))
if r0 is not None and r1 is not None:
    print("| held-out joint reward | %.2f | %.2f |" % (r0, r1))
print()
print(f"- duration: {took}")
print(f"- machine: {os.environ['CPU']}, {os.environ['CORES']} cores, {os.environ['OS']} (load average at the end: {os.environ['LOAD']})")
print(f"- build: troupe {os.environ['BUILD']}, libtorch {os.environ['LIBTORCH']}")
print(f"- written: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC")
print("\nThe plot: [metrics.png](metrics.png).")
PY
echo "demo-figures: wrote docs/demo/figures.md and docs/demo/metrics.png"
cat docs/demo/figures.md
