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
  - model.generate, greedy, continues the reference prompt with troupe's
    tokens (stopping at the same EOS), one for one, unless the two part
    where transformers' top two logits are within 1e-4 (a near tie);
  - AutoTokenizer.from_pretrained encodes the reference text and every
    document of the reference corpus to the same ids (add_special_tokens=
    False) and renders the chat template the same way;
  - GenerationConfig.from_pretrained reads eos_token_id as troupe wrote it;
  - config.json's torch_dtype is the export dtype.

Prints one line per check and a closing "N passed, N failed" line; exits 1
on any failure. Needs python3 with torch and transformers (4.5x or 5.x);
runs on the CPU, so it needs no GPU even on a GPU machine.
"""
import json
import os

import torch
import transformers
from transformers import AutoTokenizer, GenerationConfig

from hfcheck import TOLERANCE, load, run, worst_diff


def as_list(v):
    if v is None:
        return []
    return list(v) if isinstance(v, (list, tuple)) else [v]


def same_greedy(model, ref):
    """Whether generate's greedy continuation of ref's prompt equals troupe's;
    where they part, the top-2 margin there decides (a near tie is not a
    failure, and is reported)."""
    ids = torch.tensor([ref["greedy_prompt"]], dtype=torch.long)
    eos = ref["eos_token_id"]
    with torch.no_grad():
        out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), do_sample=False, num_beams=1,
                             max_new_tokens=ref["greedy_max_new_tokens"], eos_token_id=eos, pad_token_id=eos[0],
                             return_dict_in_generate=True, output_logits=True)
    got, want = out.sequences[0, ids.shape[1]:].tolist(), ref["greedy_tokens"]
    if got == want:
        return True, f"{len(got)} tokens"
    k = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    if k < len(out.logits):
        top2 = out.logits[k][0].double().topk(2).values
        margin = (top2[0] - top2[1]).item()
        if margin < TOLERANCE:
            return True, f"part at step {k}, a near tie (margin {margin:.2g})"
        return False, f"part at step {k} (margin {margin:.3g}): transformers {got}, troupe {want}"
    return False, f"transformers {got}, troupe {want}"


def check_variant(root, name, ref, report):
    path = os.path.join(root, name)
    model, info = load(path, output_loading_info=True)
    model.eval()
    problems = {k: v for k, v in info.items() if v and k != "error_msgs"} if isinstance(info, dict) else {}
    if isinstance(info, dict) and info.get("error_msgs"):
        problems["error_msgs"] = info["error_msgs"]
    report("weights load completely", not problems, json.dumps(problems, default=str)[:500])

    worst = worst_diff(model, ref)
    report("logits match", worst <= TOLERANCE, f"max |diff| {worst:.3g} (tolerance {TOLERANCE:g})")

    ok, detail = same_greedy(model, ref)
    report("greedy generate gives troupe's tokens", ok, detail)

    tok = AutoTokenizer.from_pretrained(path)
    ids = tok(ref["text"], add_special_tokens=False)["input_ids"]
    report("tokenizer ids match", ids == ref["text_ids"], f"transformers {ids}, troupe {ref['text_ids']}" if ids != ref["text_ids"] else "")
    bad = [d["name"] for d in ref["corpus"] if tok(d["text"], add_special_tokens=False)["input_ids"] != d["ids"]]
    report(f"corpus ids match ({len(ref['corpus'])} documents)", not bad and len(ref["corpus"]) > 0,
           f"{len(bad)} differ: {bad[:10]}" if bad else "")
    chat = tok.apply_chat_template([{"role": "user", "content": "2+2?"}], tokenize=False, add_generation_prompt=True)
    report("chat template renders the same", chat == ref["chat"], f"transformers {chat!r}, troupe {ref['chat']!r}" if chat != ref["chat"] else "")

    gen = GenerationConfig.from_pretrained(path)
    eos = as_list(gen.eos_token_id)
    report("generation eos_token_id", eos == ref["eos_token_id"], f"transformers {eos}, troupe {ref['eos_token_id']}")

    with open(os.path.join(path, "config.json")) as f:
        dtype = json.load(f).get("torch_dtype") or ""
    report("config torch_dtype", dtype == ref["dtype"], f"{dtype!r}, want {ref['dtype']!r}")


if __name__ == "__main__":
    run(__doc__, f"transformers {transformers.__version__}, torch {torch.__version__}", check_variant)
