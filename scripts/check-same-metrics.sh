#!/usr/bin/env bash
# check-same-metrics.sh — a fixed-seed short run of every tiny config
# (configs/*-tiny.yaml), reduced to what must not change when code is moved
# or restructured without meaning to change behaviour.
#
# For each config: `train init` a tiny random model (per model of the config,
# tokenizer merges from the config's environment), 3 steps of `train sft`,
# then 2 RL steps (1 task × 2 samples; joint and tree workflows with 2
# completions per agent and 1 or 2 turns; 16 new tokens) with a held-out
# evaluation of 1 task after the last, a checkpoint and an export. What is kept, in OUT/<config>/:
#   metrics.jsonl  every line minus wall-clock fields (time, time/*,
#                  throughput/*, memory/*/peak*, gpu/*)
#   samples.jsonl  the logged rows as written
#   export.sha256  the sha256 of every exported file (JSON files with the
#                  run's directory replaced by WORK: adapters name their base)
#
#   scripts/check-same-metrics.sh OUT            record (OUT must not exist)
#   scripts/check-same-metrics.sh OUT BASELINE   record, then diff -r against BASELINE
#   BASE_TRAIN=old/train scripts/check-same-metrics.sh OUT
#       record each config with BASE_TRAIN into OUT/base and with this tree's
#       train into OUT/new, one run at a time, and diff each pair at once
#
# It builds bin/train from the working tree first (TRAIN=path to use another
# binary); CONFIGS="a b" limits it to those config names (without .yaml);
# SETS="key=value …" adds overrides to every RL run (e.g. SETS=engine.enabled=false
# checks the batch-Generate path instead of the engine).
# On 2 busy shared cores a config takes 1-5 minutes (the tree-sampling
# games the longest).
set -euo pipefail

out=${1:?usage: check-same-metrics.sh OUT [BASELINE]}
base=${2:-}
root=$(cd "$(dirname "$0")/.." && pwd)
if [[ -e $out ]]; then
	echo "check-same-metrics: $out exists; choose a new directory" >&2
	exit 2
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [[ -z ${TRAIN:-} ]]; then
	(cd "$root" && scripts/go/go build -o "$out/train" ./cmd/train)
	TRAIN=$out/train
fi
extra=()
for kv in ${SETS:-}; do extra+=(--set "$kv"); done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# record NAME TRAIN DEST TAG: one config with one binary into DEST.
record() {
	local name=$1 bin=$2 dest=$3 tag=$4
	cfg=$root/configs/$name.yaml
	w=$work/$name-$tag
	rm -rf "$w"
	mkdir -p "$w"
	env=$(awk '/^env:/{e=1;next} e&&/^  name:/{print $2; exit}' "$cfg")
	# every model of the config: its family, if the config's own recipe names one
	sets=()
	seed=3
	for m in $(awk '/^models:/{m=1;next} m&&/^  [a-z0-9_]+:/{sub(":","",$1);print $1;next} m&&/^[^ #]/{exit}' "$cfg"); do
		family=qwen3
		[[ $m == llama ]] && family=llama
		"$bin" init "$w/init-$m" --family "$family" --seed "$seed" --text "${env:-math}" >/dev/null
		sets+=(--set "models.$m.path=$w/init-$m")
		seed=$((seed + 1))
	done
	"$bin" sft -c "$cfg" "${sets[@]}" --out "$w/sft" --steps 3 --log-every 1 >"$w/sft.log" 2>&1 || { cat "$w/sft.log"; exit 1; }
	rl=()
	for m in $(ls "$w/sft"); do rl+=(--set "models.$m.path=$w/sft/$m"); done
	# small trees: the joint workflow samples its own group (batch.n 1), 2
	# completions per agent for one turn; the tree workflow 2 candidates for 2
	wf=(--set batch.n=2)
	grep -qE '^  name: joint' "$cfg" && wf=(--set batch.n=1 --set workflow.joint.samples=2 --set workflow.joint.turns=1)
	grep -qE '^  name: tree' "$cfg" && wf=(--set batch.n=2 --set workflow.tree.candidates=2 --set workflow.tree.max_turns=2)
	"$bin" -q -c "$cfg" "${rl[@]}" --set run.output_dir="$w/run" --set run.steps=2 \
		--set batch.prompts_per_step=1 "${wf[@]}" --set max_new_tokens=16 \
		--set eval.every=2 --set eval.tasks=1 --set eval.at_start=false \
		--set checkpoint.every=2 --set export.at_end=true ${extra[@]+"${extra[@]}"} >"$w/run.log" 2>&1 || { cat "$w/run.log"; exit 1; }
	mkdir -p "$dest"
	jq -c 'with_entries(select(.key != "time" and (.key | test("^(time|throughput|gpu)/|/peak") | not)))' \
		"$w/run/metrics.jsonl" >"$dest/metrics.jsonl"
	if [[ -f $w/run/samples.jsonl ]]; then # run.log_samples: 0 writes none
		cp "$w/run/samples.jsonl" "$dest/samples.jsonl"
	fi
	# exported JSON names the base model's directory, which is under $w: hash
	# it with that prefix replaced, so two runs in different directories compare
	(cd "$w/run/export" && find . -type f | sort | while read -r f; do
		case $f in
		*.json) printf '%s  %s\n' "$(sed "s#$w#WORK#g" "$f" | sha256sum | cut -d' ' -f1)" "$f" ;;
		*) sha256sum "$f" ;;
		esac
	done) >"$dest/export.sha256"
	echo "check-same-metrics: $name: $(wc -l <"$dest/metrics.jsonl") metrics lines"
}

configs=${CONFIGS:-$(cd "$root/configs" && ls *-tiny.yaml | sed 's/\.yaml$//')}
for name in $configs; do
	if [[ -n ${BASE_TRAIN:-} ]]; then
		record "$name" "$BASE_TRAIN" "$out/base/$name" base
		record "$name" "$TRAIN" "$out/new/$name" new
		if diff -r "$out/base/$name" "$out/new/$name" >"$out/$name.diff"; then
			echo "check-same-metrics: $name: identical"
			rm -f "$out/$name.diff"
		else
			echo "check-same-metrics: $name: DIFFERENT (diff in $out/$name.diff)"
		fi
		continue
	fi
	record "$name" "$TRAIN" "$out/$name" run
done
rm -f "$out/train"
if [[ -n $base ]]; then
	if diff -r "$base" "$out" >"$out.diff"; then
		echo "check-same-metrics: identical to $base"
		rm -f "$out.diff"
	else
		echo "check-same-metrics: DIFFERENT from $base (diff in $out.diff)" >&2
		exit 1
	fi
fi
