#!/usr/bin/env python3
"""datasets_reference.py IN.json — what the reference projects'
preprocessing makes of the dataset fixtures, computed in Python with
Hugging Face's datasets library, compared with the files `bin/train data`
wrote; printed as one JSON object. Run with the Python reference
environment (scripts/pyref/python); troupe's side is package datasets'
TestMatchesPythonReference.

What comes from the libraries, not from troupe: which files of a
repository hold a split (datasets.load_dataset over the fixture directory,
offline), the columns and values as pyarrow and pandas read them, Python's
str() of integer and float answers, its re module on the instruction
suffix and the answer patterns, str.strip and str.splitlines, and the
reading back of troupe's Parquet and JSONL output by pandas. The
conversions are the ones the reference scripts perform (Dr. MAS's
drmas_math.py and drmas_search.py, PettingLLMs' load_math.py, CoMLRL's
split slices), written here from their description in package datasets'
file headers.

IN.json: {"fixtures": DIR (testdata/datasets), "out": DIR (where every
set was written)}
Output: {"versions": {...}, "checks": {NAME: {"rows": n, "ok": bool,
"diff": "first difference" or ""}}}
"""
import json
import math
import os
import re
import sys
import tempfile

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ["HF_HOME"] = tempfile.mkdtemp(prefix="troupe-hf-")

import datasets  # noqa: E402
import pandas as pd  # noqa: E402
import pyarrow  # noqa: E402

datasets.disable_progress_bars()


def load(fixtures, repo, split, data_dir=None):
    kw = {"split": split}
    if data_dir:
        kw["data_dir"] = data_dir
    return datasets.load_dataset(os.path.join(fixtures, repo), **kw)


def plain(v):
    """A value as JSON sees it: numpy arrays and scalars to lists and
    Python numbers, NaN-free."""
    if hasattr(v, "tolist"):
        v = v.tolist()
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


def frame_rows(path, columns=None):
    df = pd.read_parquet(path) if path.endswith(".parquet") else pd.read_json(path, lines=True, dtype=False)
    rows = [plain(r) for r in df.to_dict(orient="records")]
    if columns:
        rows = [{c: r.get(c) for c in columns} for r in rows]
    return rows


def compare(want, got):
    if len(want) != len(got):
        return {"rows": len(got), "ok": False, "diff": f"{len(got)} rows, want {len(want)}"}
    for i, (w, g) in enumerate(zip(want, got)):
        if w != g:
            return {"rows": len(got), "ok": False, "diff": f"row {i}: {json.dumps(g)[:400]} want {json.dumps(w)[:400]}"}
    return {"rows": len(got), "ok": True, "diff": ""}


# Dr. MAS drmas_math.py
SUFFIX = re.compile(
    r"(\r?\n|\\n)*\s*Let'?s\s+think\s+step\s+by\s+step\s+and\s+output\s+the\s+final\s+answer\s+within\s*\\boxed\{\}\.\s*$",
    re.IGNORECASE,
)


def verl_row(source, ability, split, idx, question, truth, style):
    return {
        "data_source": source,
        "ability": ability,
        "reward_model": {"ground_truth": truth, "style": style},
        "prompt": [{"role": "user", "content": question}],
        "extra_info": {"split": split, "index": idx, "answer": truth, "question": question},
        "env_kwargs": {"ground_truth": truth, "question": question, "data_source": source},
    }


def drmas_train(fx):
    out = []
    for idx, ex in enumerate(load(fx, "aaabiao/dapo_filter", "train")):
        assert len(ex["prompt"]) == 1
        q = SUFFIX.sub("", ex["prompt"][0]["content"])
        rm = ex["reward_model"]
        out.append(verl_row("dapo_filter", ex["ability"], "train", idx, q, rm["ground_truth"], rm["style"]))
    return out


def drmas_test(fx, parts):
    out = []
    for repo, split, source, limit in parts:
        ds = load(fx, repo, split)
        if limit:
            ds = ds.select(range(min(limit, len(ds))))
        for idx, ex in enumerate(ds):
            truth = ex["answer"] if isinstance(ex["answer"], str) else str(ex["answer"])
            out.append(verl_row(source, "math", "test", idx, ex["problem"], truth, "rule"))
    return out


VERL_COLUMNS = ["data_source", "ability", "reward_model", "prompt", "extra_info", "env_kwargs"]


# PettingLLMs load_math.py
def first_present(ex, keys):
    for k in keys:
        if k in ex and ex[k] is not None:
            return ex[k]
    return ""


def extract(text):
    s = str(text).strip()
    m = re.search(r"####\s*([^\n\r]+)", s)
    if m:
        return m.group(1).strip().replace(",", "")
    m = re.search(r"\\boxed\{([^{}]+)\}", s)
    if m:
        return m.group(1).strip()
    m = re.search(r"(?:final answer|answer)\s*:\s*([^\n\r]+)", s, re.IGNORECASE)
    if m:
        return m.group(1).strip()
    lines = [x.strip() for x in s.splitlines() if x.strip()]
    if lines and re.fullmatch(r"[A-Za-z0-9\-\+\*/\.^,_]+", lines[-1]) and len(lines[-1]) <= 20:
        return lines[-1].replace(",", "")
    return s


QKEYS = ["problem", "question", "prompt", "Problem"]


def petting(fx, repo, prefer, akeys):
    dd = datasets.load_dataset(os.path.join(fx, repo))
    split = next((s for s in prefer if s in dd), list(dd.keys())[0])
    return [{"question": str(first_present(ex, QKEYS)).strip(), "solution": extract(first_present(ex, akeys))} for ex in dd[split]]


# Dr. MAS drmas_search.py's sample_by_data_source over Search-R1's test file
def search_sampled(fx):
    df = pd.read_parquet(os.path.join(fx, "PeterJinGo/nq_hotpotqa_train/test.parquet"))
    parts = [df[df["data_source"] == s].head(30) for s in df["data_source"].unique()]
    return [plain(r) for r in pd.concat(parts, ignore_index=True).to_dict(orient="records")]


def records(ds):
    return [plain(r) for r in ds]


def main():
    with open(sys.argv[1]) as f:
        args = json.load(f)
    fx, out = args["fixtures"], args["out"]
    o = lambda p: os.path.join(out, p)  # noqa: E731
    m500 = "HuggingFaceH4/MATH-500"
    a24, a25 = ("HuggingFaceH4/aime_2024", "train"), ("MathArena/aime_2025", "train")
    sampled = [(m500, "test", "math500_first50", 50), a24 + ("aime24", 0), a25 + ("aime25", 0)]
    full = [(m500, "test", "math500", 0), a24 + ("aime24", 0), a25 + ("aime25", 0),
            ("realtreetune/olympiadbench", "test", "olympiadbench", 0), ("knoveleng/AMC-23", "train", "amc23", 0),
            ("zwhe99/simplerl-minerva-math", "test", "minerva", 0)]
    he = load(fx, "openai/openai_humaneval", "test")
    checks = {
        "drmas_math/train": compare(drmas_train(fx), frame_rows(o("data/drmas_math/train.parquet"), VERL_COLUMNS)),
        "drmas_math/test_sampled": compare(drmas_test(fx, sampled), frame_rows(o("data/drmas_math/test_sampled.parquet"), VERL_COLUMNS)),
        "drmas_math/test": compare(drmas_test(fx, full), frame_rows(o("data/drmas_math/test.parquet"), VERL_COLUMNS)),
        "pettingllms/polaris": compare(
            petting(fx, "POLARIS-Project/Polaris-Dataset-53K", ["train", "test", "validation", "dev"],
                    ["answer", "final_answer", "solution", "Solution", "Answer"]),
            frame_rows(o("data/pettingllms/polaris.parquet"))),
        "pettingllms/AIME24": compare(
            petting(fx, "Maxwell-Jia/AIME_2024", ["test", "validation", "dev", "train"],
                    ["Answer", "answer", "final_answer", "solution", "Solution"]),
            frame_rows(o("data/pettingllms/AIME24.parquet"))),
        "search-r1/test_sampled": compare(search_sampled(fx), frame_rows(o("data/search-r1/nq_hotpotqa_test_sampled.parquet"))),
        "mbpp-train": compare(records(load(fx, "google-research-datasets/mbpp", "train", "full")), frame_rows(o("data/mbpp-train.jsonl"))),
        "mbpp-test": compare(records(load(fx, "google-research-datasets/mbpp", "test", "full")), frame_rows(o("data/mbpp-test.jsonl"))),
        "tldr-train": compare(records(load(fx, "trl-lib/tldr", "train[:1100]")), frame_rows(o("data/tldr-train.jsonl"))),
        "tldr-test": compare(records(load(fx, "trl-lib/tldr", "test[:1100]")), frame_rows(o("data/tldr-test.jsonl"))),
        "humaneval-train": compare(records(he.select(range(33, min(163, len(he))))), frame_rows(o("data/humaneval-train.jsonl"))),
        "humaneval-test": compare(records(he.select(range(0, 32))), frame_rows(o("data/humaneval-test.jsonl"))),
    }
    print(json.dumps({"versions": {"datasets": datasets.__version__, "pyarrow": pyarrow.__version__, "pandas": pd.__version__},
                      "checks": checks}))


if __name__ == "__main__":
    main()
