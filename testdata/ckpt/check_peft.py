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

from hfcheck import TOLERANCE, load, run, worst_diff


def check_variant(root, name, ref, report):
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


if __name__ == "__main__":
    run(__doc__, f"peft {peft.__version__}, transformers {transformers.__version__}, torch {torch.__version__}",
        check_variant)
