#!/usr/bin/env bash
# demo-warmup.sh — makes the model `make demo` starts from (demo/warmup),
# from nothing, and compares it with the shipped one:
#
#   1. bin/train init: a Qwen3-architecture model, hidden 128, 2 layers,
#      head dim 32, MLP 256, with a BPE tokenizer learned from the math
#      environment's text (about 0.4M parameters, float32), seed 1;
#   2. bin/train sft, "reading": 1200 steps at lr 3e-3 on the demo config's
#      workflow demonstrations, every answer right (it learns to read the
#      asked digit);
#   3. bin/train sft, "slipping": 100 steps at lr 1e-3 on demonstrations
#      drawn anew every pass, right with probability 0.4, else the digit one
#      place to the right (it learns to slip that often: what RL unlearns).
#
# Each stage's greedy held-out accuracy is printed. The result goes to
# runs/demo-warmup/sft/tiny (OUT= another directory); demo/warmup is
# replaced only with --install, after the result is shown. One thread
# (TROUPE_THREADS=1) as the shipped model was made: the same CPU level
# gives the same bytes; another level (another CPU, or internal/cpulevel's
# forced ones) gives other weights, and the demo's figures
# (docs/demo/figures.md) were measured from the shipped ones.
#
#   scripts/demo-warmup.sh              # make demo-warmup
#   scripts/demo-warmup.sh --install    # and replace demo/warmup with it
#
# 504 s on this project's 2-core machine (AMD EPYC, AVX2) beside other jobs.
set -euo pipefail
cd "$(dirname "$0")/.."
install=0
case "${1:-}" in
  --install) install=1 ;;
  "") ;;
  *) echo "demo-warmup: unknown argument $1 (only --install)" >&2; exit 2 ;;
esac
out=${OUT:-runs/demo-warmup}
cfg=configs/drmas-math-demo-tiny.yaml
export TROUPE_THREADS=1
if [ -e "$out" ]; then
  echo "demo-warmup: $out exists; move it away or delete it first (nothing was changed)" >&2
  exit 1
fi
greedy() {
  bin/train eval -c "$cfg" --set models.tiny.path="$1" --set eval.n=1 --set 'eval.ks=[1]' \
    --set eval.sampling.temperature=0 --json |
    python3 -c 'import json,sys; print("%.3f" % json.load(sys.stdin)["metrics"]["eval/accuracy"])'
}
began=$SECONDS
bin/train init "$out/base" --seed 1 --hidden 128 --layers 2 --head-dim 32 --intermediate 256 --text math
bin/train sft -c "$cfg" --set models.tiny.path="$out/base" --out "$out/read" \
  --steps 1200 --lr 3e-3 --p-correct 1 --tasks 2000 --log-every 200
echo "demo-warmup: after reading, greedy held-out accuracy $(greedy "$out/read/tiny")"
bin/train sft -c "$cfg" --set models.tiny.path="$out/read/tiny" --out "$out/sft" \
  --steps 100 --lr 1e-3 --p-correct 0.4 --redraw --tasks 2000 --log-every 25
echo "demo-warmup: after slipping, greedy held-out accuracy $(greedy "$out/sft/tiny")"
echo "demo-warmup: made $out/sft/tiny in $((SECONDS - began)) s"
made=$(sha256sum "$out/sft/tiny/model.safetensors" | cut -c1-16)
shipped=$(sha256sum demo/warmup/model.safetensors 2>/dev/null | cut -c1-16 || echo none)
if [ "$made" = "$shipped" ]; then
  echo "demo-warmup: its weights are the shipped demo/warmup's, bit for bit (sha256 $made…)"
else
  echo "demo-warmup: its weights differ from the shipped demo/warmup's (sha256 $made… against $shipped…):"
  echo "             another CPU level or build; the demo's figures are the shipped model's"
fi
if [ "$install" = 1 ]; then
  rm -rf demo/warmup.new
  mkdir -p demo/warmup.new
  cp "$out"/sft/tiny/{config.json,generation_config.json,model.safetensors,tokenizer.json,tokenizer_config.json} demo/warmup.new/
  rm -rf demo/warmup.old
  if [ -e demo/warmup ]; then mv demo/warmup demo/warmup.old; fi
  mv demo/warmup.new demo/warmup
  rm -rf demo/warmup.old
  echo "demo-warmup: installed it as demo/warmup (rerun scripts/demo-figures.sh: the figures are the old model's)"
fi
