#!/usr/bin/env python3
"""check_lora_export.py [--metrics RUN/metrics.jsonl] BASE EXPORT AGENT... — checks what a LoRA run
(assignment: lora, export.merge_adapters) exported, with PEFT and
transformers alone (run on the GPU machine's python3 after window-tests.sh's
CUDA run; any python with peft works):

  * PeftModel.from_pretrained loads EXPORT/AGENT on BASE with every tensor
    of adapter_model.safetensors landing in a PEFT parameter;
  * the adapter was trained: some lora_B is not zero (B starts at zero) —
    unless --metrics shows every step's grad norm at zero (no learning
    signal: every advantage zero), which is reported instead;
  * EXPORT/AGENT-merged, loaded by transformers, gives the logits the
    adapter gives through PEFT, within what the merged file's dtype allows
    (bf16 weights: 2^-8 relative per weight, so 5 % of the logits' scale).

Prints one line per check; exits 1 on a failure.
"""
import json
import os
import sys

import torch
import transformers
from peft import PeftModel


def main():
    args = sys.argv[1:]
    signal = True
    if args[:1] == ["--metrics"]:
        norms = [v for line in open(args[1]) for k, v in json.loads(line).items()
                 if "grad_norm" in k and isinstance(v, (int, float))]
        signal = any(v > 0 for v in norms)
        print(f"grad norms in the run: {len(norms)} figures, largest {max(norms, default=0):.3g}")
        args = args[2:]
    base, export, agents = args[0], args[1], args[2:]
    failed = 0

    def report(name, ok, detail):
        nonlocal failed
        failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {detail}")

    ids = torch.tensor([[1, 5, 9, 13, 2, 7, 11, 3], [4, 4, 8, 15, 16, 23, 42, 6]])
    for agent in agents:
        adir = os.path.join(export, agent)
        with open(os.path.join(adir, "adapter_model.safetensors"), "rb") as f:
            n = int.from_bytes(f.read(8), "little")
            keys = [k for k in json.loads(f.read(n)) if k != "__metadata__"]
        model = PeftModel.from_pretrained(
            transformers.AutoModelForCausalLM.from_pretrained(base, torch_dtype=torch.float32), adir)
        model.eval()
        state = model.state_dict()
        loaded = [k for k in keys if k.replace(".weight", ".default.weight") in state]
        report(f"{agent}: every adapter tensor is a PEFT parameter", len(loaded) == len(keys) > 0,
               f"{len(loaded)} of {len(keys)}")
        b_norm = sum(float(v.float().abs().sum()) for k, v in state.items() if "lora_B" in k)
        if signal:
            report(f"{agent}: the adapter was trained (lora_B not zero)", b_norm > 0, f"sum |B| {b_norm:.3g}")
        else:
            print(f"note {agent}: every grad norm of the run was 0 (no learning signal); sum |B| {b_norm:.3g}")
        with torch.no_grad():
            want = model(ids).logits
            merged = transformers.AutoModelForCausalLM.from_pretrained(
                os.path.join(export, agent + "-merged"), torch_dtype=torch.float32).eval()
            got = merged(ids).logits
        diff = float((got - want).abs().max())
        scale = float(want.abs().max())
        report(f"{agent}: the merged export's logits match PEFT's", diff <= 0.05 * scale + 1e-3,
               f"max |diff| {diff:.3g} (logits up to {scale:.3g})")
    print(f"{'FAILED' if failed else 'passed'}: transformers {transformers.__version__}, peft "
          f"{__import__('peft').__version__}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
