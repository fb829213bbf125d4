"""Writes docs/atgrpo-roles/report.md from the runs of atgrpo-roles.sh.

Reads each run's metrics.jsonl (eval/accuracy before and after RL), the
swapped and unswapped evaluations (train eval --json) and the timings; the
environment variables are set by the script.
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_lib import evals, machine, ms, records, timings  # noqa: E402

out, doc = os.environ["OUT_DIR"], os.environ["DOC_DIR"]
steps, sft = int(os.environ["STEPS"]), os.environ["SFT_STEPS"]
tasks = int(os.environ["EVAL_TASKS"])
seeds = os.environ["SEEDS_DONE"].split()
model = os.environ.get("MODEL", "")
arms = ("single", "shared", "separate")


def train_reward(d, last=5):
    """reward/mean over a run's last and first steps."""
    xs = [r["reward/mean"] for r in records(d) if "reward/mean" in r]
    return statistics.mean(xs[-last:]), statistics.mean(xs[:last])


def fmt(xs):
    m, s = ms(xs)
    return f"{m:.3f} ± {s:.3f}"


before, after, rw = {a: [] for a in arms}, {a: [] for a in arms}, {a: [] for a in arms}
swapped, unswapped = [], []
rows = []
for s in seeds:
    cells = {}
    for a in arms:
        e = evals(f"{out}/{a}-s{s}")
        if 0 not in e or steps not in e:
            raise SystemExit(f"{out}/{a}-s{s}: no held-out evaluation at step 0 and {steps}")
        before[a].append(e[0])
        after[a].append(e[steps])
        rw[a].append(train_reward(f"{out}/{a}-s{s}"))
        cells[a] = (e[0], e[steps])
    sw = json.load(open(f"{out}/swapped-s{s}.json"))["metrics"]["eval/accuracy"]
    un = json.load(open(f"{out}/unswapped-s{s}.json"))["metrics"]["eval/accuracy"]
    swapped.append(sw)
    unswapped.append(un)
    rows.append((s, cells, un, sw))

_, wall = timings(out)

L = []
L.append("# AT-GRPO role split — " + (os.path.basename(model.rstrip("/")) if model else "Plan-Path, tiny, on CPU") + "\n")
L.append("The question, from the AT-GRPO paper: on a task split into roles (a tool agent that proposes a route, a plan agent "
         "that commits to one), does a team trained with agent- and turn-wise groups beat one agent, does it help that each "
         "role trains its own policy rather than sharing one, and are the trained role policies specialised — does the team "
         "still work with their roles swapped?\n")
L.append("## Setup\n")
L.append("- **Task:** Plan-Path, 5 × 5 grids with walls (p 0.22), 3 turns, reward 1 at the goal; success is reaching it. "
         f"Held-out: {tasks} test grids (disjoint from training), greedy decoding.")
L.append(f"- **Warm start:** " + (f"`{model}`, no warm-up." if model else
         f"one tiny model (`train init --text plan-path`) after {sft} `train sft` steps on both roles' demonstrations; every arm and seed starts from it."))
L.append("- **RL:** `configs/atgrpo-planpath-tiny.yaml` — tree sampling with K = 4 candidates per (turn, agent), groups keyed by "
         "(environment, turn, agent), the lowest-mean half of each model's groups dropped, T 1.5 and repetition penalty 1.2, "
         f"4 grids per step, {steps} steps, seeds {', '.join(seeds)}.")
L.append("- **Arms:** *single* — the plan agent alone (`workflow.tree.agents: [plan]`, no proposal to read); *shared* — tool + plan on "
         "one model (`assignment: shared`); *separate* — tool + plan, each its own copy and optimizer (`assignment: separate`). "
         "*swapped* — the separate arm's trained policies with roles exchanged at evaluation (the tool's model plays plan); "
         "*unswapped* is the same command with the roles in place, as its control.\n")
L.append("## Results\n")
L.append("Held-out success (share of the test grids solved), before → after RL, per seed:\n")
L.append("| seed | single | shared | separate | separate, unswapped eval | separate, roles swapped |")
L.append("| --- | --- | --- | --- | --- | --- |")
for s, cells, un, sw in rows:
    L.append(f"| {s} | " + " | ".join(f"{b:.2f} → {a:.2f}" for b, a in cells.values()) + f" | {un:.2f} | {sw:.2f} |")
L.append("| **mean ± sd** | " + " | ".join(f"{fmt(before[a])} → {fmt(after[a])}" for a in arms)
         + f" | {fmt(unswapped)} | {fmt(swapped)} |")
L.append("")
L.append(f"Mean ± sample standard deviation over {len(seeds)} seed" + ("s" if len(seeds) > 1 else "") + f". One grid is {1/tasks:.2f} of success. Training reward "
         "(`reward/mean`, first 5 → last 5 steps): "
         + "; ".join(f"{a} {ms([x[1] for x in rw[a]])[0]:.2f} → {ms([x[0] for x in rw[a]])[0]:.2f}" for a in arms) + ".\n")


def apart(a, b):
    """a's mean - sd above b's mean + sd."""
    (ma, sa), (mb, sb) = ms(a), ms(b)
    return ma - sa > mb + sb


gains = {a: [x - y for x, y in zip(after[a], before[a])] for a in arms}
sent = []
sent.append("RL moved held-out success by " + ", ".join(f"{a} {ms(gains[a])[0]:+.3f} ± {ms(gains[a])[1]:.3f}" for a in arms))
best = max(arms, key=lambda a: ms(after[a])[0])
if apart(after["separate"], after["single"]) and apart(after["shared"], after["single"]):
    sent.append("both teams beat the single agent (mean ± sd ranges apart)")
elif apart(after[best], after["single"]) and best != "single":
    sent.append(f"only the {best} team beats the single agent beyond the spread")
else:
    sent.append("the teams' edge over the single agent is within the spread over seeds")
if apart(after["separate"], after["shared"]):
    sent.append("separate role policies beat one shared policy, as the paper reports")
elif apart(after["shared"], after["separate"]):
    sent.append("one shared policy beats separate role policies — the opposite of the paper's finding")
else:
    sent.append("separate and shared policies are within each other's spread: the paper's advantage of role-specialised "
                "policies is not reproduced at this scale")
# swapped and unswapped evaluate the same trained models: compare them per seed
drop = [u - w for u, w in zip(unswapped, swapped)]
dm, dsd = ms(drop)
lower = sum(d > 0 for d in drop)
paired = f"paired drop {dm:+.3f} ± {dsd:.3f}, lower in {lower} of {len(drop)} seeds"
if len(drop) > 1 and dm - dsd > 0:
    sent.append(f"swapping the trained roles drops success from {fmt(unswapped)} to {fmt(swapped)} ({paired}): "
                "the two policies have specialised")
else:
    sent.append(f"swapping the trained roles changes success from {fmt(unswapped)} to {fmt(swapped)} ({paired}), "
                "within the spread: no clear sign of specialisation")
L.append("## Result\n")
L.append("**" + "; ".join(sent) + ".**\n")
L.append(f"The criterion: an arm beats another when the mean ± sample sd ranges over seeds do not overlap (swapped against "
         "unswapped, which evaluate the same trained models, by the paired drop: its mean minus its sd above 0); with "
         f"{len(seeds)} seeds a loose bar, not a significance test. The model is a toy and the run short, so this says what troupe's AT-GRPO does at this scale, "
         "not what the paper's result is at the paper's.\n")
L.append("## Commands\n")
L.append("```")
L.append(f"make build && make experiment-atgrpo-roles   # = SEEDS=\"{' '.join(seeds)}\" STEPS={steps} SFT_STEPS={sft} scripts/experiments/atgrpo-roles.sh")
L.append("```")
L.append("Per seed N and arm (single adds `--set 'workflow.tree.agents=[plan]' --set 'workflow.tree.simulate=[]' --set assignment=shared`):")
L.append("```")
start = model or f"{out}/sft/tiny"
L.append(f"bin/train -c configs/atgrpo-planpath-tiny.yaml -q --seed N --set models.tiny.path={start} --set assignment=separate \\")
L.append(f"  --set run.steps={steps} --set run.output_dir={out}/separate-sN --set eval.tasks={tasks} --set eval.every={steps} --set eval.at_start=true --set checkpoint.every={steps}")
L.append(f"bin/train eval -c configs/atgrpo-planpath-tiny.yaml --json --set assignment=separate --set eval.tasks={tasks} --set models.tiny.path={start} \\")
L.append(f"  --set models.from_plan.path={out}/separate-sN/export/plan --set models.from_tool.path={out}/separate-sN/export/tool \\")
L.append("  --set 'agents[0].model=from_plan' --set 'agents[1].model=from_tool'   # swapped")
L.append("```\n")
L.append("## Machine and time\n")
L.append("```")
L.append(machine(out))
L.append("```")
L.append(f"Wall time, init to the last evaluation: **{wall} s ({wall/60:.1f} min)**.\n")
L.append("## Charts (`train compare`)\n")
L.append("Per arm, the mean over seeds with the range from the lowest to the highest seed shaded; then every run.\n")
grads = sorted(b for b in os.listdir(doc) if b.startswith("grad_norm-") and b.endswith(".png"))
for b in ["accuracy-by-group.png", "reward-by-group.png", "accuracy.png", "reward.png"] + grads:
    if os.path.exists(f"{doc}/{b}"):
        L.append(f"![{b}]({b})")
L.append("")
L.append("## On a GPU\n")
L.append("Not run here. The same script with a pretrained model and the reference's learning rate "
         "(`configs/atgrpo-planpath-qwen3-1.7b.yaml` is the full recipe):\n")
L.append("```")
L.append("MODEL=/models/Qwen3-1.7B OUT=runs/exp-atgrpo-qwen DOC=docs/atgrpo-roles-qwen \\")
L.append("  SETS=\"run.device=cuda run.dtype=bfloat16 optim.lr=1e-6 max_new_tokens=512\" STEPS=150 scripts/experiments/atgrpo-roles.sh")
L.append("```\n")
open(f"{doc}/report.md", "w").write("\n".join(L))
print(f"atgrpo-roles: wrote {doc}/report.md")
