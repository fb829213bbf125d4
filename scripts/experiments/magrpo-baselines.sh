#!/usr/bin/env bash
# MAGRPO's prompt-only baselines on CPU, at tiny scale, for writing and
# coding: the untrained two-agent team under the three protocols of
# CoMLRL's task repositories (workflow.joint.protocol: parallel, sequential,
# discussion; LLM_Collab_Writing evals/, LLM_Collab_Code_Generation
# baselines/multi_agent_tti.py) and the untrained single agent, scored as
# the reference scores it (coding: the whole response as the main program,
# the helper empty). Nothing is trained: each arm is `train eval` of a
# warmed-up model (train init + train sft, as make demo and make
# coding-demo make them), over SEEDS evaluation seeds.
#
#   scripts/experiments/magrpo-baselines.sh           # make magrpo-baselines
#   TASKS=writing SEEDS="1 2 3" scripts/experiments/magrpo-baselines.sh
#   TEAM_MODEL=... SINGLE_MODEL=... TASKS=coding ...  # evaluate given models
#
# Output: runs/magrpo-baselines/ (models, logs, one JSON per evaluation) and
# the table in runs/magrpo-baselines/report.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-runs/magrpo-baselines}
tasks=${TASKS:-writing coding}
seeds=${SEEDS:-1 2 3}
sft_steps=${SFT_STEPS:-150}
train=${TRAIN:-bin/train}
mkdir -p "$out/logs"

# protocol → the --set pairs it needs (the coding configs run two turns)
sets_for() {
	case $1 in
	parallel | sequential) echo "workflow.joint.protocol=$1 workflow.joint.turns=1" ;;
	discussion) echo "workflow.joint.protocol=discussion workflow.joint.turns=2" ;;
	esac
}

# warm a model up on demonstrations of a config's roles, once
warm() {
	local cfg=$1 dir=$2 text=$3
	[ -e "$dir/tiny/config.json" ] && return
	[ -e "$out/base-$text/config.json" ] || "$train" init "$out/base-$text" --text "$text" >"$out/logs/init-$text.log"
	echo "magrpo-baselines: SFT warm-up for $cfg ($sft_steps steps)"
	"$train" sft -c "$cfg" --set models.tiny.path="$out/base-$text" --out "$dir" --steps "$sft_steps" --log-every 50 >"$out/logs/$(basename "$dir").log" 2>&1
}

for task in $tasks; do
	team_cfg=configs/magrpo-$task-tiny.yaml
	single_cfg=configs/magrpo-$task-single-tiny.yaml
	team_model=${TEAM_MODEL:-$out/sft-$task-team/tiny}
	single_model=${SINGLE_MODEL:-$out/sft-$task-single/tiny}
	[ -n "${TEAM_MODEL:-}" ] || warm "$team_cfg" "$out/sft-$task-team" "$task"
	[ -n "${SINGLE_MODEL:-}" ] || warm "$single_cfg" "$out/sft-$task-single" "$task"
	for seed in $seeds; do
		for protocol in parallel sequential discussion; do
			args=(eval -c "$team_cfg" --json --set models.tiny.path="$team_model" --set run.seed="$seed")
			for kv in $(sets_for "$protocol"); do args+=(--set "$kv"); done
			echo "magrpo-baselines: $task, $protocol, seed $seed"
			"$train" "${args[@]}" >"$out/$task-$protocol-s$seed.json" 2>"$out/logs/$task-$protocol-s$seed.log"
		done
		echo "magrpo-baselines: $task, single agent, seed $seed"
		"$train" eval -c "$single_cfg" --json --set models.tiny.path="$single_model" --set run.seed="$seed" \
			>"$out/$task-single-s$seed.json" 2>"$out/logs/$task-single-s$seed.log"
	done
done

OUT_DIR="$out" TASKS_RUN="$tasks" SEEDS_RUN="$seeds" python3 - <<'PY'
import json, os, statistics
out, tasks, seeds = os.environ["OUT_DIR"], os.environ["TASKS_RUN"].split(), os.environ["SEEDS_RUN"].split()
arms = ["parallel", "sequential", "discussion", "single"]
L = ["# MAGRPO's prompt-only baselines (tiny, CPU)", "",
     "Held-out accuracy / mean joint reward of the untrained (warmed-up) models, mean ± sample sd over evaluation seeds "
     + ", ".join(seeds) + "; nothing is trained (scripts/experiments/magrpo-baselines.sh).", ""]
for task in tasks:
    L += [f"## {task}", "", "| arm | accuracy | joint reward |", "| --- | --- | --- |"]
    for arm in arms:
        acc, rew = [], []
        for s in seeds:
            m = json.load(open(f"{out}/{task}-{arm}-s{s}.json"))["metrics"]
            acc.append(m["eval/accuracy"]); rew.append(m["eval/mean_reward"])
        sd = lambda x: statistics.stdev(x) if len(x) > 1 else 0.0
        L.append(f"| {arm} | {statistics.mean(acc):.3f} ± {sd(acc):.3f} | {statistics.mean(rew):.2f} ± {sd(rew):.2f} |")
    L.append("")
open(f"{out}/report.md", "w").write("\n".join(L))
print("\n".join(L))
PY
