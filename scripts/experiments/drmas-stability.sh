#!/usr/bin/env bash
# The Dr. MAS vs GRPO gradient-stability sweep on CPU. Dr. MAS predicts that
# under GRPO's global normalisation the agent whose reward statistics differ
# has gradient norms that grow with its amplification factor
# (σ_k² + (μ_k − μ)²)/σ², and that under Dr. MAS (per-agent normalisation)
# they do not. This script varies the Verifier's reward_scale, and its
# reward_offset (added after the scale: it moves the Verifier's reward mean,
# the (μ_k − μ)² term), on configs/stability-math-tiny.yaml (a Solver and a
# Verifier on separate copies of one warmed-up tiny model, math-refine) and
# runs every (estimator, condition, seed) with two optimizer steps per train
# step (optim.epochs: 2, so the importance ratios leave 1).
#
#   scripts/experiments/drmas-stability.sh        # full design, runs/exp-stability/
#   SEEDS="1 2 3" SCALES="1 16" OFFSETS="" STEPS=100 JOBS=2 scripts/experiments/drmas-stability.sh
#   REPORT_ONLY=1 scripts/experiments/drmas-stability.sh   # re-report finished runs
#   MODEL=/models/Qwen2.5-0.5B-Instruct OUT=runs/exp-stability-qwen DOC=docs/drmas-stability-qwen JOBS=1 \
#     SETS="run.device=cuda run.dtype=bfloat16 optim.lr=1e-6 env.math.procedural.difficulty=3" \
#     MAX_NEW_TOKENS=512 scripts/experiments/drmas-stability.sh   # a pretrained model on a GPU: no init, no warm-up
#
# Everything goes under runs/exp-stability/: the warm model (made once, shared
# by every run), one directory per run (<estimator>-x<scale>-s<seed>, and
# <estimator>-x1-o<offset>-s<seed> for the offsets, at scale 1), the train
# compare report and the summary; the summary is also written to
# docs/drmas-stability/report.md (OUT and DOC move them).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-runs/exp-stability}
doc=${DOC:-docs/drmas-stability}
model=${MODEL:-}
extra=()
for kv in ${SETS:-}; do extra+=(--set "$kv"); done
seeds=${SEEDS:-1 2 3 4 5}
scales=${SCALES:-1 4 16}
offsets=${OFFSETS-2}
steps=${STEPS:-100}
estimators=${ESTIMATORS:-drmas grpo grpo-step}
jobs=${JOBS:-2}
tokens=${MAX_NEW_TOKENS:-64}
prompts=${PROMPTS:-2}
cfg=configs/stability-math-tiny.yaml
export TROUPE_THREADS=1
mkdir -p "$out"
log="$out/commands.txt"

if [ -z "${REPORT_ONLY:-}" ]; then
	if [ -n "$(ls "$out" | grep -v '^warm$' || true)" ]; then
		echo "drmas-stability: $out has runs; remove them first (rm -rf $out, or keep $out/warm to reuse the model)" >&2
		exit 1
	fi
	start=$(date +%s)
	{
		echo "date: $(date -u +%FT%TZ)"
		echo "commit: $(git rev-parse --short HEAD)"
		echo "nproc: $(nproc)"
		echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
		echo "design: estimators [$estimators] scales [$scales] offsets at scale 1 [$offsets] seeds [$seeds] steps $steps jobs $jobs max_new_tokens $tokens prompts_per_step $prompts"
		[ -z "$model" ] || echo "model: $model (no init, no warm-up)"
		[ -z "${SETS:-}" ] || echo "extra overrides: $SETS"
	} >"$log"
	warm=$out/warm/sft/tiny
	if [ -n "$model" ]; then
		warm=$model
	elif [ ! -d "$out/warm/sft/tiny" ]; then
		init=(bin/train init "$out/warm/base" --hidden 128 --layers 3 --heads 4 --kv-heads 2 --head-dim 32 --intermediate 256)
		sft=(bin/train sft -c "$cfg" --set models.tiny.path="$out/warm/base" --out "$out/warm/sft"
			--steps 400 --lr 3e-3 --p-correct 0.35 --tasks 1000 --log-every 100)
		echo "\$ ${init[*]}" >>"$log"
		echo "\$ ${sft[*]}" >>"$log"
		nice -n 5 "${init[@]}" >/dev/null
		nice -n 5 "${sft[@]}" | tail -1
	else
		echo "warm model: reused $out/warm/sft/tiny (made earlier by the same init and sft commands as in this script)" >>"$log"
	fi
	echo "warm model ready: $(( $(date +%s) - start )) s" >>"$log"
	one() { # estimator scale offset seed
		local dir="$out/$1-x$2-s$4" t0
		if [ "$3" != 0 ]; then dir="$out/$1-x$2-o$3-s$4"; fi
		t0=$(date +%s)
		local cmd=(bin/train -c "$cfg" -q --set models.tiny.path="$warm"
			--set advantage.estimator="$1" --set agents.1.reward_scale="$2" --set agents.1.reward_offset="$3"
			--set run.seed="$4" --set run.steps="$steps" --set run.output_dir="$dir" --set optim.epochs=2
			--set batch.prompts_per_step="$prompts" --set max_new_tokens="$tokens"
			--set eval.every=0 --set eval.at_start=false ${extra[@]+"${extra[@]}"})
		if ! nice -n 5 "${cmd[@]}" >"$dir.log" 2>&1; then
			echo "drmas-stability: run $dir failed; see $dir.log" >&2
			return 1
		fi
		echo "drmas-stability: $dir done in $(( $(date +%s) - t0 )) s"
	}
	conditions=()
	for scale in $scales; do conditions+=("$scale:0"); done
	for offset in $offsets; do conditions+=("1:$offset"); done
	echo "\$ bin/train -c $cfg -q --set models.tiny.path=$warm --set advantage.estimator=EST --set agents.1.reward_scale=SCALE --set agents.1.reward_offset=OFFSET --set run.seed=SEED --set run.steps=$steps --set run.output_dir=$out/EST-xSCALE[-oOFFSET]-sSEED --set optim.epochs=2 --set batch.prompts_per_step=$prompts --set max_new_tokens=$tokens --set eval.every=0 --set eval.at_start=false${SETS:+ --set ${SETS// / --set }}   # TROUPE_THREADS=1, nice -n 5, $jobs at a time" >>"$log"
	for seed in $seeds; do # seeds outermost: a cut-short sweep still has every cell
		for cond in "${conditions[@]}"; do
			for est in $estimators; do
				while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
				one "$est" "${cond%%:*}" "${cond##*:}" "$seed" &
			done
		done
	done
	wait
	{
		echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
		echo "wall time: $(( $(date +%s) - start )) s"
	} >>"$log"
fi

mapfile -t runs < <(ls -d "$out"/*-x*-s* 2>/dev/null | grep -v '\.log$' | sort)
bin/train compare --force --out "$out/compare" "${runs[@]}" >/dev/null
if [ -z "${REPORT_ONLY:-}" ]; then
	echo "\$ bin/train compare --force --out $out/compare $out/*-x*-s*" >>"$log"
fi
mkdir -p "$doc"
python3 scripts/experiments/drmas_stability_report.py "$out" "$doc"
echo "drmas-stability: report $doc/report.md"
