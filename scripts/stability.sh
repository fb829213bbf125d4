#!/usr/bin/env bash
# The Dr. MAS stability experiment on CPU: drmas, grpo and grpo-step over
# three seeds on configs/stability-math-tiny.yaml (a Solver and a Verifier
# whose rewards differ in scale by construction), then one report.
#
#   scripts/stability.sh            # everything under runs/stability/
#   SEEDS="1 2" STEPS=20 scripts/stability.sh
#   WARM=runs/x/sft/tiny scripts/stability.sh   # skip init and sft
#
# Writes runs/stability/report/report.md and its PNG charts. It starts from
# nothing: a tiny model (train init) warmed up by train sft, as make demo.
set -euo pipefail
cd "$(dirname "$0")/.."
out=runs/stability
seeds=${SEEDS:-1 2 3}
steps=${STEPS:-20}
estimators=${ESTIMATORS:-drmas grpo grpo-step}
cfg=configs/stability-math-tiny.yaml
if [ -e "$out" ]; then
	echo "stability: $out exists; remove it first (rm -rf $out)" >&2
	exit 1
fi
start=$(date +%s)
if [ -n "${WARM:-}" ]; then # a warmed-up model directory to start from instead
	mkdir -p "$out/sft" && cp -a "$WARM" "$out/sft/tiny"
else
	bin/train init "$out/base" --hidden 128 --layers 3 --heads 4 --kv-heads 2 --head-dim 32 --intermediate 256
	bin/train sft -c "$cfg" --set models.tiny.path="$out/base" --out "$out/sft" \
		--steps "${SFT_STEPS:-400}" --lr 3e-3 --p-correct 0.35 --tasks 1000 --log-every 100
fi
runs=()
for est in $estimators; do
	for seed in $seeds; do
		dir="$out/$est-s$seed"
		echo "stability: $est, seed $seed → $dir"
		bin/train -c "$cfg" -q --set advantage.estimator="$est" --set run.seed="$seed" \
			--set run.steps="$steps" --set run.output_dir="$dir" | grep -E '^(eval|step [0-9]+/[0-9]+ )' | awk 'NR % 5 == 0 || /^eval/'
		runs+=("$dir")
	done
done
bin/train compare --out "$out/report" "${runs[@]}"
echo "stability: done in $(( $(date +%s) - start )) s; report: $out/report/report.md"
