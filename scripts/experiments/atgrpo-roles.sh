#!/usr/bin/env bash
# The AT-GRPO role-split experiment on CPU, at tiny scale: on Plan-Path,
# from one warm start, does a tool + plan team beat one agent, and does it
# matter whether the two roles share one model or each train their own
# (AT-GRPO's "role-specialised policies")? And once trained apart, are the
# two policies specialised: does the team still work with their roles
# swapped at evaluation?
#
#   scripts/experiments/atgrpo-roles.sh            # make experiment-atgrpo-roles
#   SEEDS="1 2" STEPS=20 scripts/experiments/atgrpo-roles.sh
#   REPORT_ONLY=1 scripts/experiments/atgrpo-roles.sh   # rewrite the report from runs/exp-atgrpo
#   MODEL=/models/Qwen3-1.7B SETS="run.device=cuda run.dtype=bfloat16 optim.lr=1e-6" \
#     scripts/experiments/atgrpo-roles.sh          # a pretrained model: no init, no warm-up
#
# Arms (configs/atgrpo-planpath-tiny.yaml; tree sampling, K = 4, the group
# filter, 3 turns), each for STEPS RL steps and each seed:
#   single    the plan agent alone (workflow.tree.agents [plan]: no proposal)
#   shared    tool + plan on one model (assignment: shared)
#   separate  tool + plan, each its own copy and optimizer (assignment: separate)
# then the separate arm's final weights evaluated with the roles swapped
# (the tool's model plays plan and the plan's model plays tool).
#
# One tiny base (train init --text plan-path) gets SFT_STEPS of `train sft`
# on both roles' demonstrations, once; every arm and seed starts from it.
# Held-out success is measured greedily on EVAL_TASKS test grids (100, the
# environment's whole test split) before and after RL. Runs under
# runs/exp-atgrpo/; the report and charts under docs/atgrpo-roles/.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-runs/exp-atgrpo}
doc=${DOC:-docs/atgrpo-roles}
seeds=${SEEDS:-1 2 3 4 5}
steps=${STEPS:-60}
sft_steps=${SFT_STEPS:-1500}
eval_tasks=${EVAL_TASKS:-100}
cfg=configs/atgrpo-planpath-tiny.yaml
train=${TRAIN:-bin/train}
model=${MODEL:-}
extra=()
for kv in ${SETS:-}; do extra+=(--set "$kv"); done
single=(--set 'workflow.tree.agents=[plan]' --set 'workflow.tree.simulate=[]')
mkdir -p "$doc"

name=atgrpo-roles
. scripts/experiments/lib.sh

# arm_sets ARM: the overrides that make the arm
arm_sets() {
	case $1 in
	single) printf '%s\n' "${single[@]}" --set assignment=shared ;;
	shared) printf '%s\n' --set assignment=shared ;;
	separate) printf '%s\n' --set assignment=separate ;;
	esac
}

# team_eval LABEL TOOL PLAN: the separate arm's exports of seed $seed
# evaluated with the tool agent on model TOOL and the plan agent on PLAN
# (from_tool, from_plan), into $out/LABEL-s$seed.json
team_eval() {
	# (models.tiny, which no agent uses here, still has to name a model)
	"$train" eval -c "$cfg" --json --set assignment=separate --set eval.tasks="$eval_tasks" \
		--set models.tiny.path="$start_model" --set models.from_plan.path="$ex/plan" --set models.from_tool.path="$ex/tool" \
		--set "agents[0].model=$2" --set "agents[1].model=$3" \
		${extra[@]+"${extra[@]}"} >"$out/$1-s$seed.json" 2>"$out/logs/$1-s$seed.log" ||
		{ echo "$name: $1 evaluation, seed $seed, failed; see $out/logs/$1-s$seed.log" >&2; tail -20 "$out/logs/$1-s$seed.log" >&2; exit 1; }
}

if [ -z "${REPORT_ONLY:-}" ]; then
	begin "seeds: $seeds; RL steps: $steps; SFT steps: $sft_steps; held-out grids: $eval_tasks"
	start_model=$model
	if [ -z "$model" ]; then
		"$train" init "$out/base" --text plan-path | tee "$out/logs/init.log"
		echo "atgrpo-roles: SFT warm-up on both roles' demonstrations ($sft_steps steps)"
		"$train" sft -c "$cfg" --set models.tiny.path="$out/base" --out "$out/sft" \
			--steps "$sft_steps" --log-every 250 >"$out/logs/sft.log" 2>&1
		start_model=$out/sft/tiny
	fi
	stamp sft-done
	for seed in $seeds; do
		for arm in single shared separate; do
			dir="$out/$arm-s$seed"
			echo "atgrpo-roles: $arm, seed $seed, $steps RL steps → $dir"
			mapfile -t sets < <(arm_sets "$arm")
			rl "$arm-s$seed" -c "$cfg" -q --seed "$seed" --set models.tiny.path="$start_model" "${sets[@]}" \
				--set run.steps="$steps" --set run.output_dir="$dir" --set eval.tasks="$eval_tasks" \
				--set eval.every="$steps" --set eval.at_start=true --set checkpoint.every="$steps"
			stamp "$arm-s$seed"
		done
		# the separate arm's trained policies with their roles swapped, and
		# in place through the same command, as its control
		ex="$out/separate-s$seed/export"
		echo "atgrpo-roles: separate, seed $seed, roles swapped at evaluation"
		team_eval swapped from_plan from_tool
		team_eval unswapped from_tool from_plan
		stamp "swap-s$seed"
	done
	finish
fi

done_seeds=()
runs=()
for seed in $seeds; do
	if [ -s "$out/swapped-s$seed.json" ] && [ -s "$out/unswapped-s$seed.json" ]; then
		done_seeds+=("$seed")
		runs+=("$out/single-s$seed" "$out/shared-s$seed" "$out/separate-s$seed")
	fi
done
if [ ${#done_seeds[@]} -eq 0 ]; then
	echo "atgrpo-roles: no finished seed under $out" >&2
	exit 1
fi
charts "$doc" "${runs[@]}"

OUT_DIR="$out" DOC_DIR="$doc" STEPS="$steps" SFT_STEPS="$sft_steps" EVAL_TASKS="$eval_tasks" SEEDS_DONE="${done_seeds[*]}" \
	MODEL="$model" python3 scripts/experiments/atgrpo_roles_report.py
echo "atgrpo-roles: done; report: $doc/report.md"
