#!/usr/bin/env python3
"""Check that PEFT loads the LoRA adapters troupe exports.

Called by ckpt's TestAdapterLoadsInPEFT (ckpt/peft_test.go) with one
argument, a directory holding

    base/                        the base model (a Hugging Face export)
    <variant>/                   an adapter export (adapter_config.json,
                                 adapter_model.safetensors, tokenizer, ...)
    <variant>-merged/            the same adapter merged into the base
    <variant>.reference.json     troupe's logits through the adapter

and checks, for every variant:

  - PeftModel.from_pretrained loads the adapter on the base with every
    lora_A/lora_B weight found (PEFT only warns about missing ones, and a
    missing B would silently leave the base's outputs);
  - its logits for each reference sequence agree with troupe's to 1e-4;
  - transformers loads the merged export and gives the same logits, and so
    does PEFT's own merge_and_unload().

Prints one line per check and "N passed, N failed"; exits 1 on any failure,
and 3 when peft is not installed (the Go test then skips).
"""
import json
import os
import sys

import torch

try:
    import peft
    from peft import PeftModel
except ImportError:
    print("peft is not installed")
    sys.exit(3)
import transformers
from transformers import AutoModelForCausalLM

TOLERANCE = 1e-4


def load(path):
    try:
        return AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    except TypeError:  # transformers before the dtype argument
        return AutoModelForCausalLM.from_pretrained(path, torch_dtype=torch.float32)


def worst_diff(model, ref):
    worst = 0.0
    for ids, want in zip(ref["sequences"], ref["logits"]):
        with torch.no_grad():
            got = model(torch.tensor([ids], dtype=torch.long)).logits[0].float()
        worst = max(worst, (got - torch.tensor(want, dtype=torch.float32)).abs().max().item())
    return worst


def check_variant(root, name, ref, results):
    def report(what, ok, detail=""):
        results.append(ok)
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {what}{': ' + detail if detail else ''}", flush=True)

    with open(os.path.join(root, name, "adapter_model.safetensors"), "rb") as f:
        header_len = int.from_bytes(f.read(8), "little")
        keys = [k for k in json.loads(f.read(header_len)) if k != "__metadata__"]
    model = PeftModel.from_pretrained(load(os.path.join(root, "base")), os.path.join(root, name))
    model.eval()
    state = model.state_dict()
    loaded = [k for k in keys if k.replace(".weight", ".default.weight") in state]
    report("every adapter tensor is a PEFT parameter", len(loaded) == len(keys) and len(keys) > 0,
           f"{len(loaded)} of {len(keys)}")
    d = worst_diff(model, ref)
    report("logits through the adapter match", d <= TOLERANCE, f"max |diff| {d:.3g} (tolerance {TOLERANCE:g})")

    d = worst_diff(load(os.path.join(root, name + "-merged")).eval(), ref)
    report("the merged export's logits match", d <= TOLERANCE, f"max |diff| {d:.3g}")
    d = worst_diff(model.merge_and_unload().eval(), ref)
    report("PEFT's merge_and_unload logits match", d <= TOLERANCE, f"max |diff| {d:.3g}")


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    root = sys.argv[1]
    print(f"peft {peft.__version__}, transformers {transformers.__version__}, torch {torch.__version__}", flush=True)
    results = []
    refs = sorted(n for n in os.listdir(root) if n.endswith(".reference.json"))
    if not refs:
        print(f"no *.reference.json under {root}")
        sys.exit(1)
    for ref_name in refs:
        name = ref_name[: -len(".reference.json")]
        with open(os.path.join(root, ref_name)) as f:
            ref = json.load(f)
        try:
            check_variant(root, name, ref, results)
        except Exception as e:  # a load that raises is a failed check, and the others still run
            results.append(False)
            print(f"FAIL {name}: {type(e).__name__}: {e}", flush=True)
    passed = sum(results)
    print(f"{passed} passed, {len(results) - passed} failed")
    sys.exit(0 if passed == len(results) else 1)


if __name__ == "__main__":
    main()
