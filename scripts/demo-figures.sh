#!/usr/bin/env bash
# demo-figures.sh — the README's demo figures, regenerated from the current
# build over seeds: runs `make demo SEED=N` (setup, build, then the Dr. MAS
# math demo of configs/drmas-math-demo-tiny.yaml from the shipped warm-up
# demo/warmup) for each seed, one after another, times each, keeps each
# seed's metrics in runs/demo-figures/seed-N/, and writes
#   docs/demo/metrics.png  the first seed's plot
#   docs/demo/figures.md   per seed: held-out accuracy at each evaluation,
#                          before RL (step 0) → after it (the last), the
#                          gain and the duration; over the seeds: mean ± sd
#                          before and after, how many rose, the mean gain;
#                          the machine (CPU model), the CPU level troupe ran
#                          at, the load and the build
# The README quotes docs/demo/figures.md; nothing there is typed by hand.
#
#   scripts/demo-figures.sh                  seeds 1 to 10, then seed 1 at the
#                                            machine's lesser CPU levels, then the figures
#   SEEDS="1 2 3" scripts/demo-figures.sh    those seeds
#   LEVELS="" scripts/demo-figures.sh        no forced levels (LEVELS="baseline": that one)
#   scripts/demo-figures.sh --no-run         write them from runs/demo-figures
#
# What it is not: a benchmark. Each seed takes about a minute on 2 busy
# cores once set up; the durations say how busy the machine was. The CPU
# level is the machine's unless the environment forces one
# (internal/cpulevel: TROUPE_CPU_SIMD, ATEN_CPU_CAPABILITY, …); one seed's
# curve differs from one CPU level to another.
set -euo pipefail
cd "$(dirname "$0")/.."
run=runs/demo/drmas
keep=runs/demo-figures
seeds=${SEEDS:-1 2 3 4 5 6 7 8 9 10}
# the lesser x86-64 levels this CPU can run (internal/cpulevel's, and its environments)
if grep -qw avx512f /proc/cpuinfo 2>/dev/null; then own_lesser="avx2 baseline"
elif grep -qw avx2 /proc/cpuinfo 2>/dev/null; then own_lesser="baseline"
else own_lesser=""; fi
levels=${LEVELS-$own_lesser}
level_env() {
  case $1 in
    avx2) echo "TROUPE_CPU_SIMD=avx2 ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 OPENBLAS_CORETYPE=Haswell" ;;
    baseline) echo "TROUPE_CPU_SIMD=baseline ATEN_CPU_CAPABILITY=default ONEDNN_MAX_CPU_ISA=SSE41 OPENBLAS_CORETYPE=Prescott" ;;
    *) echo "demo-figures: unknown level $1 (avx2 or baseline)" >&2; return 1 ;;
  esac
}
build=$(git describe --always --dirty 2>/dev/null || echo dev) # before this script writes docs/demo
if [ "${1:-}" != "--no-run" ]; then
  rm -rf "$keep"
  mkdir -p "$keep"
  for seed in $seeds; do
    log=$keep/seed-$seed.log
    mkdir -p "$keep/seed-$seed"
    began=$SECONDS
    what="make demo SEED=$seed"
    make demo SEED="$seed" >"$log" 2>&1 || { tail -40 "$log" >&2; echo "demo-figures: $what failed (log $log)" >&2; exit 1; }
    cp "$run/metrics.jsonl" "$run/metrics.png" "$keep/seed-$seed/"
    echo "$what" >"$keep/seed-$seed/what"
    echo $((SECONDS - began)) >"$keep/seed-$seed/seconds"
    echo "demo-figures: $what done ($((SECONDS - began)) s): $(grep -m1 '^held-out accuracy' "$log" || true)"
  done
  first=${seeds%% *}
  for level in $levels; do
    level_env "$level" >/dev/null || exit 2
    read -ra lenv <<<"$(level_env "$level")"
    d=$keep/level-$level
    mkdir -p "$d"
    began=$SECONDS
    what="make demo SEED=$first at the forced $level level"
    env "${lenv[@]}" make demo SEED="$first" >"$d.log" 2>&1 || { tail -40 "$d.log" >&2; echo "demo-figures: $what failed (log $d.log)" >&2; exit 1; }
    cp "$run/metrics.jsonl" "$d/"
    echo "$first" >"$d/seed"
    echo $((SECONDS - began)) >"$d/seconds"
    echo "demo-figures: $what done ($((SECONDS - began)) s): $(grep -m1 '^held-out accuracy' "$d.log" || true)"
  done
fi
ls "$keep"/seed-*/metrics.jsonl >/dev/null 2>&1 || { echo "demo-figures: no $keep/seed-*/metrics.jsonl; run without --no-run" >&2; exit 1; }
cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//' || true)
os=$(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME" || uname -s)
load=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")
version=$(bin/train version 2>/dev/null || true)
libtorch=$(sed -n 's/^libtorch \([^ ]*\).*/\1/p' <<<"$version")
level=$(sed -n 's/.*CPU level \([^,]*\),.*/\1/p' <<<"$version")
forced=$(env | grep -E '^(TROUPE_CPU_SIMD|ATEN_CPU_CAPABILITY|ONEDNN_MAX_CPU_ISA|OPENBLAS_CORETYPE)=' | sort | tr '\n' ' ' || true)
mkdir -p docs/demo
first_png=$(ls "$keep"/seed-*/metrics.png 2>/dev/null | head -1)
[ -n "$first_png" ] && cp "$first_png" docs/demo/metrics.png

KEEP="$keep" CPU="${cpu:-unknown}" CORES="$(nproc)" OS="$os" LOAD="$load" LEVEL="${level:-?}" FORCED="$forced" \
BUILD="$build" LIBTORCH="${libtorch:-?}" THREADS="${TROUPE_THREADS:-unset (half the CPUs)}" python3 - >docs/demo/figures.md <<'PY'
import glob, json, os, re, statistics, datetime
keep = os.environ["KEEP"]
rows = []
def evals_of(path):
    evals = []
    for line in open(path):
        r = json.loads(line)
        v = r.get("values", r)
        if "eval/accuracy" in v:
            evals.append((r["step"], v["eval/accuracy"]))
    if len(evals) < 2:
        raise SystemExit(f"demo-figures: {path} has fewer than two evaluations")
    return evals

for d in sorted(glob.glob(keep + "/seed-*"), key=lambda p: int(re.sub(r"\D", "", p.rsplit("/", 1)[1]) or 0)):
    if not os.path.isdir(d):
        continue
    evals = evals_of(d + "/metrics.jsonl")
    secs = open(d + "/seconds").read().strip() if os.path.exists(d + "/seconds") else ""
    what = open(d + "/what").read().strip() if os.path.exists(d + "/what") else ""
    rows.append((d.rsplit("-", 1)[1], evals, secs, what))
if not rows:
    raise SystemExit("demo-figures: no seeds")

def pct(x):
    return "%.1f %%" % (100 * x)

def band(xs):
    sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
    return "%.1f ± %.1f %%" % (100 * statistics.mean(xs), 100 * sd)

steps = [s for s, _ in rows[0][1]]
print("# The demo's figures\n")
print("Written by `scripts/demo-figures.sh` from `make demo SEED=N` (configs/drmas-math-demo-tiny.yaml):")
print("Dr. MAS's Solver and Verifier, each its own copy of the shipped warm-up demo/warmup, 30 RL steps on")
print("place-value questions. Accuracy is the share of the 200 held-out questions whose final answer is")
print("right, one answer each at the training temperature (one question is 0.5 points; docs/usage.md,")
print("\"What the demo measures\").\n")
print("| seed | " + " | ".join("step %d" % s for s in steps) + " | gain | duration | ran |")
print("|---" * (len(steps) + 4) + "|")
starts, ends = [], []
full, rlonly = [], []
for seed, evals, s, what in rows:
    a0, a1 = evals[0][1], evals[-1][1]
    starts.append(a0)
    ends.append(a1)
    if s:
        (full if what.startswith("make demo") else rlonly).append(int(s))
    print("| %s | %s | %+.1f | %s | %s |" % (seed, " | ".join(pct(a) for _, a in evals), 100 * (a1 - a0), s + " s" if s else "—", what or "—"))
gains = [b - a for a, b in zip(starts, ends)]
rose = sum(g > 0 for g in gains)
print()
print(f"**Over {len(rows)} seeds: {band(starts)} before RL (step {steps[0]}) → {band(ends)} after it (step {steps[-1]});")
print(f"accuracy rose on {rose} of {len(rows)} seeds, mean gain {100 * statistics.mean(gains):+.1f} points.**\n")
print("One seed's curve is not the result: the same seed gives a different curve at another CPU level")
print("(another CPU model, or `internal/cpulevel`'s forced levels), because a sampled token now and then differs.\n")
lv = sorted(glob.glob(keep + "/level-*/metrics.jsonl"))
if lv:
    print("The same demo at the machine's lesser CPU levels (`internal/cpulevel`'s environments, forced):\n")
    print("| level | seed | " + " | ".join("step %d" % s for s in steps) + " | gain | duration |")
    print("|---" * (len(steps) + 4) + "|")
    for m in lv:
        d = os.path.dirname(m)
        ev = evals_of(m)
        secs = open(d + "/seconds").read().strip()
        print("| %s | %s | %s | %+.1f | %s s |" % (d.rsplit("level-", 1)[1], open(d + "/seed").read().strip(), " | ".join(pct(a) for _, a in ev), 100 * (ev[-1][1] - ev[0][1]), secs))
    print()
if full:
    print(f"- duration of `make demo` (setup and build done): min {min(full)} s, median {statistics.median(full):.0f} s, max {max(full)} s")
if rlonly:
    print(f"- duration of the RL run alone: min {min(rlonly)} s, median {statistics.median(rlonly):.0f} s, max {max(rlonly)} s")
print(f"- machine: {os.environ['CPU']}, {os.environ['CORES']} cores, {os.environ['OS']} (load average at the end: {os.environ['LOAD']})")
forced = os.environ["FORCED"].strip()
print(f"- CPU level: {os.environ['LEVEL']}" + (f" (forced: {forced})" if forced else " (the machine's own)") + f"; TROUPE_THREADS {os.environ['THREADS']}")
print(f"- build: troupe {os.environ['BUILD']}, libtorch {os.environ['LIBTORCH']}")
print(f"- written: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC")
print("\nThe first seed's plot: [metrics.png](metrics.png). How the demo's setting was chosen, and the")
print("demos tried before it: docs/findings.md, \"A demo that learns on every seed\".")
PY
echo "demo-figures: wrote docs/demo/figures.md and docs/demo/metrics.png"
cat docs/demo/figures.md
