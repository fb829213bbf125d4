#!/usr/bin/env bash
# A math demo on CPU: Dr. MAS (Solver + Verifier, each its own model,
# per-agent normalisation) on place-value questions, from a warm start that
# answers about a fifth of the held-out questions, over seeds. Does RL
# raise held-out accuracy, by how much, and how much do the seeds spread?
#
#   scripts/experiments/math-placevalue.sh             # make experiment-math-placevalue
#   SEEDS="1 2" STEPS=50 scripts/experiments/math-placevalue.sh
#   REPORT_ONLY=1 scripts/experiments/math-placevalue.sh   # rewrite the report from runs/exp-math
#   MODEL=/models/Qwen2.5-0.5B-Instruct SETS="run.device=cuda run.dtype=bfloat16 optim.lr=1e-6 \
#     env.math.procedural.difficulty=3" scripts/experiments/math-placevalue.sh   # a pretrained model: no init, no warm-up
#
# The warm start: one 0.56M-parameter model (train init --hidden 128
# --layers 3 --head-dim 32 --intermediate 256 --text math), then `train sft`
# in two stages on the workflow's demonstrations: SFT_STEPS on right ones
# (it learns to read the asked place), then SLIP_STEPS on ones drawn anew
# every pass and right with probability P_CORRECT, else reading one place
# to the right (it learns to slip that often). Every seed starts from it and
# runs configs/drmas-math-placevalue-tiny.yaml for STEPS steps, evaluated on
# the 200 held-out questions × 4 samples at the training temperature before
# RL and every 50 steps, and greedily before and after. Runs under
# runs/exp-math/; the report and charts under docs/math-placevalue/.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-runs/exp-math}
doc=${DOC:-docs/math-placevalue}
seeds=${SEEDS:-1 2 3}
steps=${STEPS:-100}
sft_steps=${SFT_STEPS:-1200}
slip_steps=${SLIP_STEPS:-400}
p_correct=${P_CORRECT:-0.45}
cfg=configs/drmas-math-placevalue-tiny.yaml
train=${TRAIN:-bin/train}
model=${MODEL:-}
extra=()
for kv in ${SETS:-}; do extra+=(--set "$kv"); done
mkdir -p "$doc"

name=math-placevalue
. scripts/experiments/lib.sh

if [ -z "${REPORT_ONLY:-}" ]; then
	begin "seeds: $seeds; RL steps: $steps; SFT steps: $sft_steps right, then $slip_steps with p-correct $p_correct"
	start_model=$model
	if [ -z "$model" ]; then
		"$train" init "$out/base" --hidden 128 --layers 3 --head-dim 32 --intermediate 256 --text math | tee "$out/logs/init.log"
		echo "math-placevalue: SFT warm-up, $sft_steps steps on right demonstrations"
		"$train" sft -c "$cfg" --set models.tiny.path="$out/base" --out "$out/read" --steps "$sft_steps" \
			--p-correct 1 --log-every 100 >"$out/logs/sft-read.log" 2>&1
		echo "math-placevalue: SFT warm-up, $slip_steps steps on demonstrations right with p $p_correct, drawn anew every pass"
		"$train" sft -c "$cfg" --set models.tiny.path="$out/read/tiny" --out "$out/sft" --steps "$slip_steps" \
			--p-correct "$p_correct" --redraw --log-every 100 >"$out/logs/sft-slip.log" 2>&1
		start_model=$out/sft/tiny
		"$train" eval -c "$cfg" --set models.tiny.path="$out/read/tiny" --set eval.n=1 --set "eval.ks=[1]" \
			--set eval.sampling.temperature=0 --json >"$out/greedy-read.json"
	fi
	stamp sft-done
	greedy=(--set eval.n=1 --set "eval.ks=[1]" --set eval.sampling.temperature=0 --json)
	"$train" eval -c "$cfg" --set models.tiny.path="$start_model" "${greedy[@]}" ${extra[@]+"${extra[@]}"} >"$out/greedy-start.json"
	for seed in $seeds; do
		dir="$out/drmas-s$seed"
		echo "math-placevalue: seed $seed, $steps RL steps → $dir"
		rl "drmas-s$seed" -c "$cfg" -q --seed "$seed" --set models.tiny.path="$start_model" --set run.steps="$steps" \
			--set run.output_dir="$dir"
		"$train" eval -c "$cfg" --checkpoint "$dir/checkpoints/step-$(printf %06d "$steps")" "${greedy[@]}" \
			${extra[@]+"${extra[@]}"} >"$dir/greedy-end.json"
		stamp "drmas-s$seed"
	done
	finish
fi

done_seeds=()
runs=()
for seed in $seeds; do
	if [ -s "$out/drmas-s$seed/metrics.jsonl" ]; then
		done_seeds+=("$seed")
		runs+=("$out/drmas-s$seed")
	fi
done
if [ ${#done_seeds[@]} -eq 0 ]; then
	echo "math-placevalue: no finished seed under $out" >&2
	exit 1
fi
charts "$doc" "${runs[@]}"

OUT_DIR="$out" DOC_DIR="$doc" STEPS="$steps" SFT_STEPS="$sft_steps" SLIP_STEPS="$slip_steps" P_CORRECT="$p_correct" SEEDS_DONE="${done_seeds[*]}" \
	MODEL="$model" SETS="${SETS:-}" python3 - <<'PY'
import json, os, statistics, sys

sys.path.insert(0, "scripts/experiments")
from report_lib import evals, machine, ms, records, timings

out, doc = os.environ["OUT_DIR"], os.environ["DOC_DIR"]
steps, sft, slip, pc = int(os.environ["STEPS"]), os.environ["SFT_STEPS"], os.environ["SLIP_STEPS"], os.environ["P_CORRECT"]
seeds = os.environ["SEEDS_DONE"].split()
model, sets = os.environ.get("MODEL", ""), os.environ.get("SETS", "")

def greedy(path):
    """held-out accuracy of a `train eval --json` file, or None."""
    try:
        return json.load(open(path))["metrics"]["eval/accuracy"]
    except (OSError, ValueError, KeyError):
        return None

per = {s: evals(f"{out}/drmas-s{s}") for s in seeds}
pass4 = {s: evals(f"{out}/drmas-s{s}", "eval/pass_at_4") for s in seeds}
turns = {s: evals(f"{out}/drmas-s{s}", "eval/turns") for s in seeds}
for s, e in per.items():
    if 0 not in e or steps not in e:
        raise SystemExit(f"{out}/drmas-s{s}: no held-out evaluation at step 0 and {steps}")
marks = sorted(set.intersection(*(set(e) for e in per.values())))
before = [per[s][0] for s in seeds]
after = [per[s][steps] for s in seeds]
gain = [a - b for a, b in zip(after, before)]
(b0, _), (a0, asd), (g0, gsd) = ms(before), ms(after), ms(gain)
g_start = greedy(f"{out}/greedy-start.json")
g_end = {s: greedy(f"{out}/drmas-s{s}/greedy-end.json") for s in seeds}
have_greedy = g_start is not None and all(v is not None for v in g_end.values())
_, wall = timings(out)

L = ["# Dr. MAS on place value — " + (os.path.basename(model.rstrip("/")) if model else "tiny, on CPU") + "\n"]
task = ("Place-value questions (\"What is the tens digit of $472$?\", procedural difficulty 0: the answer is copied from "
        "the question, which a tiny model can learn)") if not model else ("Procedural math questions (overrides `" + sets + "`)" if sets else "Place-value questions")
L.append("Does Dr. MAS RL make a weak math team better on questions it has not seen? " + task + ", a Solver answering in `\\boxed{}` and a Verifier approving or rejecting it "
         "(`configs/drmas-math-placevalue-tiny.yaml`: math-refine, up to 2 loops, each agent its own model, "
         "the drmas estimator, lr 5e-4), 8 questions × 4 trajectories per step.\n")
L.append("## Result\n")
ok = g0 >= 0.15
ntasks = int(evals(f"{out}/drmas-s{seeds[0]}", "eval/tasks").get(0, 200))
verb = "raised" if g0 > 0 else "moved"
line = (f"**Over {len(seeds)} seed{'s' if len(seeds) > 1 else ''}, {steps} Dr. MAS steps {verb} held-out accuracy from {b0:.3f} to {a0:.3f} ± {asd:.3f} "
        f"(gain {g0:+.3f} ± {gsd:.3f}; {ntasks} questions × 4 samples at T = 1)")
if have_greedy:
    (ge, gesd), (gg, ggsd) = ms(list(g_end.values())), ms([v - g_start for v in g_end.values()])
    line += f", and answered greedily from {g_start:.3f} to {ge:.3f} ± {gesd:.3f} (gain {gg:+.3f} ± {ggsd:.3f})"
line += (": the +15-point bar is met" if ok else ": short of the +15-point bar") + ".**\n"
L.append(line)
L.append("| seed | " + " | ".join(f"step {m}" for m in marks) + " | gain | pass@4 before → after | greedy before → after |")
L.append("| --- | " + " | ".join("---" for _ in marks) + " | --- | --- | --- |")
for s in seeds:
    gr = f"{g_start:.3f} → {g_end[s]:.3f}" if have_greedy else "–"
    p4 = f"{pass4[s].get(0, float('nan')):.3f} → {pass4[s].get(steps, float('nan')):.3f}"
    L.append(f"| {s} | " + " | ".join(f"{per[s][m]:.3f}" for m in marks) + f" | {per[s][steps] - per[s][0]:+.3f} | {p4} | {gr} |")
gm = "{:.3f} → {:.3f} ± {:.3f}".format(g_start, *ms(list(g_end.values()))) if have_greedy else "–"
L.append("| **mean ± sd** | " + " | ".join("{:.3f} ± {:.3f}".format(*ms([per[s][m] for s in seeds])) for m in marks)
         + f" | {g0:+.3f} ± {gsd:.3f} | | {gm} |")
L.append("")
L.append("Accuracy is the share of answers whose final value (the Solver's last, after the Verifier's verdicts) is right: "
         f"each of the {ntasks} held-out questions is answered 4 times at the training temperature (avg@4; Dr. MAS reports avg@16), "
         f"so one answer is {1 / (4 * ntasks):.5f}. Step 0 is the warm start, shared by every seed, evaluated with each seed's sampling; "
         "greedy is one answer per question at T = 0 (`train eval`), before RL and on each seed's last checkpoint.\n")
def diag(d):
    """mean share of zero-variance advantage groups and mean solver entropy over a run."""
    z, e = [], []
    for r in records(d):
        if r.get("adv/groups"):
            z.append(r["adv/zero_variance_groups"] / r["adv/groups"])
        if "policy/solver/entropy" in r:
            e.append(r["policy/solver/entropy"])
    return statistics.mean(z) if z else float("nan"), statistics.mean(e) if e else float("nan")
zs, es = zip(*(diag(f"{out}/drmas-s{s}") for s in seeds))
t0, t1 = ms([turns[s].get(0, float("nan")) for s in seeds])[0], ms([turns[s].get(steps, float("nan")) for s in seeds])[0]
p40, p41 = ms([pass4[s].get(0, float("nan")) for s in seeds])[0], ms([pass4[s].get(steps, float("nan")) for s in seeds])[0]
if model:
    L.append(f"From the pretrained model, pass@4 moved from {p40:.3f} to {p41:.3f}; on average {statistics.mean(zs):.0%} of the advantage "
             f"groups had no reward variance; turns per held-out episode went from {t0:.2f} to {t1:.2f}.\n")
else:
    g_read = greedy(f"{out}/greedy-read.json")
    read = f"the first SFT stage alone answers {g_read:.3f} of the held-out questions greedily; " if g_read is not None else ""
    L.append(f"What RL learned: to stop slipping. The warm start can read the asked place ({read}the second stage teaches it to read "
             f"one place to the right about {1 - float(pc):.0%} of the time). RL took sampled accuracy from {b0:.3f} to {a0:.3f} and pass@4, "
             f"whether any of 4 samples is right, from {p40:.3f} to {p41:.3f}: the gain is a slip unlearnt, not a new skill — "
             "Dr. MAS turned reward into held-out accuracy where the policy's own samples contained the right answer. "
             f"On average {statistics.mean(zs):.0%} of the advantage groups (a question's 4 trajectories, per agent) had no reward "
             f"variance; the Solver's mean token entropy was {statistics.mean(es):.3f} nats. The Verifier learned to approve: "
             f"turns per held-out episode went from {t0:.2f} to {t1:.2f} (2 = Solver, Verifier, done), so the gain is in the Solver's "
             "first answer, not in second tries.\n")
    L.append("How this setting was found (seed 1 each unless said; docs/findings.md has the earlier tries). From a warm-up on "
             "fixed demonstrations right 35 % of the time, 40 steps moved nothing (0.410 → 0.420 ± 0.030 greedy over 3 seeds): seen "
             "about 80 times each, the wrong demonstrations were learnt by heart (Solver token entropy 0.03 nats). Drawing them anew "
             "each pass (`train sft --redraw`) let a warm-up learn a slip rate, but one that had to learn to read and to slip at once "
             "read hardly better than a random digit of the number (greedy 0.335, sampled 0.237 with the slip at another random "
             "place); from it, 40 steps at lr 3e-4 moved sampled accuracy by −0.3 to +1.1 points, and at lr 1e-3 the output format "
             "came apart (accuracy 0 at step 40; with a KL penalty of 0.05, 0.035 at step 20 and back to 0.236 at 40; with an Adam ε "
             "of 1e-5 or 1e-4, 0.198 and 0.185 at 40). With a "
             "reading stage of 1000 steps (greedy 0.76) and P_CORRECT 0.35, 100 steps at lr 5e-4 took sampled accuracy from 0.214 "
             "to 0.436 (one update per step) and 0.422 (two): how far RL gets is bounded by how well the warm start reads.\n")
L.append("## Setup and commands\n")
L.append("```")
L.append(f"make build && make experiment-math-placevalue   # = SEEDS=\"{' '.join(seeds)}\" STEPS={steps} SFT_STEPS={sft} SLIP_STEPS={slip} P_CORRECT={pc} scripts/experiments/math-placevalue.sh")
start = model or out + "/sft/tiny"
if not model:
    L.append(f"bin/train init {out}/base --hidden 128 --layers 3 --head-dim 32 --intermediate 256 --text math")
    L.append(f"bin/train sft -c configs/drmas-math-placevalue-tiny.yaml --set models.tiny.path={out}/base --out {out}/read --steps {sft} --p-correct 1")
    L.append(f"bin/train sft -c configs/drmas-math-placevalue-tiny.yaml --set models.tiny.path={out}/read/tiny --out {out}/sft --steps {slip} --p-correct {pc} --redraw")
extra = "".join(f" --set {kv}" for kv in sets.split())
L.append(f"bin/train -c configs/drmas-math-placevalue-tiny.yaml -q --seed N --set models.tiny.path={start} "
         f"--set run.steps={steps} --set run.output_dir={out}/drmas-sN" + extra)
g = " --set eval.n=1 --set 'eval.ks=[1]' --set eval.sampling.temperature=0 --json"
if not model:
    L.append(f"bin/train eval -c configs/drmas-math-placevalue-tiny.yaml --set models.tiny.path={out}/read/tiny{g}")
L.append(f"bin/train eval -c configs/drmas-math-placevalue-tiny.yaml --set models.tiny.path={start}{g}" + extra)
L.append(f"bin/train eval -c configs/drmas-math-placevalue-tiny.yaml --checkpoint {out}/drmas-sN/checkpoints/step-{steps:06d}{g}" + extra)
L.append("```\n")
L.append("## Machine and time\n")
L.append("```")
L.append(machine(out))
L.append("```")
L.append(f"Wall time, init to the last run: **{wall} s ({wall/60:.1f} min)**.\n")
L.append("## Charts (`train compare`)\n")
for b in sorted(os.listdir(doc)):
    if b.endswith(".png"):
        L.append(f"![{b}]({b})")
L.append("")
L.append("## On a GPU\n")
L.append("Not run here (this machine has no GPU). A pretrained model needs no warm-up and harder questions; the same script:\n")
L.append("```")
L.append("MODEL=/models/Qwen2.5-0.5B-Instruct OUT=runs/exp-math-qwen DOC=docs/math-placevalue-qwen \\")
L.append("  SETS=\"run.device=cuda run.dtype=bfloat16 optim.lr=1e-6 env.math.procedural.difficulty=3 max_new_tokens=512\" scripts/experiments/math-placevalue.sh")
L.append("```\n")
if not model:
    L.append("The model is a toy and the task is copying a digit: this shows that troupe's Dr. MAS pipeline turns reward into "
             "held-out accuracy on a task the model can represent, and what kind of gain that is (a slip unlearnt), not what "
             "Dr. MAS does on competition math.\n")
open(f"{doc}/report.md", "w").write("\n".join(L))
print(f"math-placevalue: wrote {doc}/report.md")
PY
echo "math-placevalue: done; report: $doc/report.md"
