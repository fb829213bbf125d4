#!/usr/bin/env python3
"""Check that transformers loads the Hugging Face directories ckpt.Export wrote.

Called by ckpt's TestExportLoadsInTransformers (ckpt/transformers_test.go)
with one argument, a directory holding, for each exported variant,

    <variant>/                   the export (config.json, weights, tokenizer, ...)
    <variant>.reference.json     what troupe computed from the same export

and checks, for every variant:

  - AutoModelForCausalLM.from_pretrained loads it in float32 with no missing,
    unexpected or mismatched weights (transformers would otherwise fill them
    with random values and only warn), and its logits for each reference
    sequence, run alone (no padding), agree with troupe's to 1e-4 absolute;
  - AutoTokenizer.from_pretrained encodes the reference text to the same ids
    (add_special_tokens=False) and renders the chat template the same way;
  - GenerationConfig.from_pretrained reads eos_token_id as troupe wrote it;
  - config.json's torch_dtype is the export dtype.

Prints one line per check and a closing "N passed, N failed" line; exits 1
on any failure. Needs python3 with torch and transformers (4.5x or 5.x);
runs on the CPU, so it needs no GPU even on a GPU machine.
"""
import json
import os
import sys

import torch
import transformers
from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig

TOLERANCE = 1e-4


def load_model(path):
    kwargs = {"output_loading_info": True}
    try:
        return AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32, **kwargs)
    except TypeError:  # transformers before the dtype argument
        return AutoModelForCausalLM.from_pretrained(path, torch_dtype=torch.float32, **kwargs)


def as_list(v):
    if v is None:
        return []
    return list(v) if isinstance(v, (list, tuple)) else [v]


def check_variant(root, name, ref, results):
    path = os.path.join(root, name)

    def report(what, ok, detail=""):
        results.append(ok)
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {what}{': ' + detail if detail else ''}", flush=True)

    model, info = load_model(path)
    model.eval()
    problems = {k: v for k, v in info.items() if v and k != "error_msgs"} if isinstance(info, dict) else {}
    if isinstance(info, dict) and info.get("error_msgs"):
        problems["error_msgs"] = info["error_msgs"]
    report("weights load completely", not problems, json.dumps(problems, default=str)[:500])

    worst = 0.0
    for ids, want in zip(ref["sequences"], ref["logits"]):
        with torch.no_grad():
            got = model(torch.tensor([ids], dtype=torch.long)).logits[0].float()
        worst = max(worst, (got - torch.tensor(want, dtype=torch.float32)).abs().max().item())
    report("logits match", worst <= TOLERANCE, f"max |diff| {worst:.3g} (tolerance {TOLERANCE:g})")

    tok = AutoTokenizer.from_pretrained(path)
    ids = tok(ref["text"], add_special_tokens=False)["input_ids"]
    report("tokenizer ids match", ids == ref["text_ids"], f"transformers {ids}, troupe {ref['text_ids']}" if ids != ref["text_ids"] else "")
    chat = tok.apply_chat_template([{"role": "user", "content": "2+2?"}], tokenize=False, add_generation_prompt=True)
    report("chat template renders the same", chat == ref["chat"], f"transformers {chat!r}, troupe {ref['chat']!r}" if chat != ref["chat"] else "")

    gen = GenerationConfig.from_pretrained(path)
    eos = as_list(gen.eos_token_id)
    report("generation eos_token_id", eos == ref["eos_token_id"], f"transformers {eos}, troupe {ref['eos_token_id']}")

    with open(os.path.join(path, "config.json")) as f:
        dtype = json.load(f).get("torch_dtype") or ""
    report("config torch_dtype", dtype == ref["dtype"], f"{dtype!r}, want {ref['dtype']!r}")


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    root = sys.argv[1]
    print(f"transformers {transformers.__version__}, torch {torch.__version__}", flush=True)
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
