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

stamp() { printf '%s\t%s\n' "$1" "$(date +%s)" >>"$out/timings.tsv"; }

# arm_sets ARM: the overrides that make the arm
arm_sets() {
	case $1 in
	single) printf '%s\n' "${single[@]}" --set assignment=shared ;;
	shared) printf '%s\n' --set assignment=shared ;;
	separate) printf '%s\n' --set assignment=separate ;;
	esac
}

if [ -z "${REPORT_ONLY:-}" ]; then
	if [ -e "$out" ]; then
		echo "atgrpo-roles: $out exists; remove it first (rm -rf $out)" >&2
		exit 1
	fi
	mkdir -p "$out/logs"
	{
		echo "nproc: $(nproc)"
		echo "start: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
		echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
		echo "seeds: $seeds; RL steps: $steps; SFT steps: $sft_steps; held-out grids: $eval_tasks"
		echo "TROUPE_THREADS: ${TROUPE_THREADS:-unset (half the CPUs)}"
		[ -z "$model" ] || echo "model: $model (no init, no warm-up)"
		[ -z "${SETS:-}" ] || echo "extra overrides: $SETS"
	} >"$out/machine.txt"
	stamp start
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
			"$train" -c "$cfg" -q --seed "$seed" --set models.tiny.path="$start_model" "${sets[@]}" \
				--set run.steps="$steps" --set run.output_dir="$dir" --set eval.tasks="$eval_tasks" \
				--set eval.every="$steps" --set eval.at_start=true --set checkpoint.every="$steps" \
				${extra[@]+"${extra[@]}"} >"$out/logs/$arm-s$seed.log" 2>&1 ||
				{ echo "atgrpo-roles: $arm seed $seed failed; see $out/logs/$arm-s$seed.log" >&2; tail -20 "$out/logs/$arm-s$seed.log" >&2; exit 1; }
			grep -E '^eval' "$out/logs/$arm-s$seed.log" || true
			stamp "$arm-s$seed"
		done
		# the separate arm's trained policies with their roles swapped
		ex="$out/separate-s$seed/export"
		echo "atgrpo-roles: separate, seed $seed, roles swapped at evaluation"
		"$train" eval -c "$cfg" --json --set assignment=separate --set eval.tasks="$eval_tasks" \
			--set models.from_plan.path="$ex/plan" --set models.from_tool.path="$ex/tool" \
			--set 'agents[0].model=from_plan' --set 'agents[1].model=from_tool' \
			${extra[@]+"${extra[@]}"} >"$out/swapped-s$seed.json" 2>"$out/logs/swapped-s$seed.log" ||
			{ echo "atgrpo-roles: swapped evaluation, seed $seed, failed; see $out/logs/swapped-s$seed.log" >&2; tail -20 "$out/logs/swapped-s$seed.log" >&2; exit 1; }
		# and unswapped, through the same command, as its control
		"$train" eval -c "$cfg" --json --set assignment=separate --set eval.tasks="$eval_tasks" \
			--set models.from_plan.path="$ex/plan" --set models.from_tool.path="$ex/tool" \
			--set 'agents[0].model=from_tool' --set 'agents[1].model=from_plan' \
			${extra[@]+"${extra[@]}"} >"$out/unswapped-s$seed.json" 2>"$out/logs/unswapped-s$seed.log" ||
			{ echo "atgrpo-roles: unswapped evaluation, seed $seed, failed; see $out/logs/unswapped-s$seed.log" >&2; exit 1; }
		stamp "swap-s$seed"
	done
	stamp end
	echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/machine.txt"
	echo "end: $(date -u '+%Y-%m-%d %H:%M:%S UTC')" >>"$out/machine.txt"
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
rm -rf "$out/compare"
"$train" compare --out "$out/compare" "${runs[@]}" >/dev/null
rm -f "$doc"/*.png
cp "$out"/compare/accuracy-by-group.png "$out"/compare/reward-by-group.png "$out"/compare/accuracy.png "$out"/compare/reward.png "$doc"/ 2>/dev/null || true

OUT_DIR="$out" DOC_DIR="$doc" STEPS="$steps" SFT_STEPS="$sft_steps" EVAL_TASKS="$eval_tasks" SEEDS_DONE="${done_seeds[*]}" \
	MODEL="$model" python3 scripts/experiments/atgrpo_roles_report.py
echo "atgrpo-roles: done; report: $doc/report.md"
