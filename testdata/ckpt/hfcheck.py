"""What check_transformers.py and check_peft.py share: loading a Hugging Face
directory in float32, comparing its logits with troupe's reference, and the
loop over <variant>.reference.json files with its "N passed, N failed"
report and exit status."""
import json
import os
import sys

import torch
from transformers import AutoModelForCausalLM

TOLERANCE = 1e-4


def load(path, **kwargs):
    """AutoModelForCausalLM.from_pretrained in float32 (dtype= or, before it
    existed, torch_dtype=)."""
    try:
        return AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32, **kwargs)
    except TypeError:
        return AutoModelForCausalLM.from_pretrained(path, torch_dtype=torch.float32, **kwargs)


def worst_diff(model, ref):
    """The largest |logit − troupe's| over ref's sequences, each run alone."""
    worst = 0.0
    for ids, want in zip(ref["sequences"], ref["logits"]):
        with torch.no_grad():
            got = model(torch.tensor([ids], dtype=torch.long)).logits[0].float()
        worst = max(worst, (got - torch.tensor(want, dtype=torch.float32)).abs().max().item())
    return worst


def reporter(name, results):
    """report(what, ok, detail) prints one check's line and records it."""
    def report(what, ok, detail=""):
        results.append(ok)
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {what}{': ' + detail if detail else ''}", flush=True)
    return report


def run(doc, versions, check_variant):
    """Calls check_variant(root, name, ref, report) for every
    <name>.reference.json under the one argument's directory; a variant that
    raises is a failed check and the others still run. Exits 0 when every
    check passed, 1 otherwise, 2 on bad usage."""
    if len(sys.argv) != 2:
        print(doc)
        sys.exit(2)
    root = sys.argv[1]
    print(versions, flush=True)
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
            check_variant(root, name, ref, reporter(name, results))
        except Exception as e:  # a load that raises is a failed check
            results.append(False)
            print(f"FAIL {name}: {type(e).__name__}: {e}", flush=True)
    passed = sum(results)
    print(f"{passed} passed, {len(results) - passed} failed")
    sys.exit(0 if passed == len(results) else 1)
