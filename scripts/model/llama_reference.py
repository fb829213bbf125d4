#!/usr/bin/env python3
"""transformers as the reference for troupe's Llama and Mistral models.

Runs with the Python reference environment (scripts/pyref/python: torch,
transformers, safetensors; no Go, no network). Two jobs:

  fixtures OUTDIR   random-init LlamaForCausalLM / MistralForCausalLM models
                    of real structure at small sizes (VARIANTS below: GQA and
                    MQA, tied and untied heads, head_dim equal to and apart
                    from hidden/heads, Llama 3.1's llama3 rope scaling with a
                    131072-position context, attention and MLP biases),
                    built with AutoModelForCausalLM.from_config and saved
                    with save_pretrained into OUTDIR/<name>/, each with
                    OUTDIR/<name>/reference.safetensors:
                      input_ids, lengths    int64 (B, T), (B): a right-padded
                                            batch, one row 300 tokens long
                      logits, logits_bf16   f32 (N, V) at the real tokens,
                                            row after row (float32 model; the
                                            same model cast to bfloat16)
                      logprobs              f32 (B, T): log p(ids[b, t+1] |
                                            ids[b, ≤t]) for t + 1 < length,
                                            else 0 (float32)
                      prompt_ids, prompt_lengths, greedy_tokens, greedy_margins
                                            greedy generation of each prompt
                                            alone (float32, no stop token)
                                            and the top-1 minus top-2 logit
                                            at each step
                      inv_freq              f32 (head_dim/2): the rotary
                                            embedding's inverse frequencies
                    model/llama_reference_test.go runs it at test time.
  check-export DIR IDS_JSON
                    loads a directory troupe exported with
                    AutoModelForCausalLM.from_pretrained (strict: missing or
                    unexpected weights are an error) and prints JSON:
                    {"class": ..., "model_type": ..., "logits": [[...]]}
                    with float32 logits over the id rows of IDS_JSON.

    scripts/pyref/python scripts/model/llama_reference.py fixtures /tmp/llama-fixtures

Weights: every parameter is redrawn from one seeded generator (projections
and embeddings N(0, 0.1²), RMSNorm gains 1 + 0.2·N(0, 1), biases
0.2·N(0, 1)) so the logits spread over a few units and a forward that
ignored a gain or a bias would show. Attention is eager (no fused kernels).

What it is not: a test of troupe (the comparison is in Go), nor the Qwen
reference (scripts/model/reference.py, scripts/gpu/hf_reference.py).
"""

import json
import os
import sys

import torch
import transformers
from safetensors.torch import save_file
from transformers import AutoModelForCausalLM

LLAMA3_SCALING = {"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                  "original_max_position_embeddings": 8192}

# name: (config class, keyword arguments, what it covers)
VARIANTS = {
    "llama32-tied": ("llama", dict(
        vocab_size=256, hidden_size=128, intermediate_size=256, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=32, rms_norm_eps=1e-5,
        tie_word_embeddings=True, max_position_embeddings=131072, rope_theta=500000.0,
        rope_scaling=dict(LLAMA3_SCALING)),
        "Llama 3.2 structure: GQA 4/2, tied embeddings, llama3 rope scaling (factor 32, 8192 -> 131072)"),
    "llama3-short-context": ("llama", dict(
        vocab_size=256, hidden_size=96, intermediate_size=160, num_hidden_layers=2,
        num_attention_heads=6, num_key_value_heads=2, head_dim=32, rms_norm_eps=1e-5,
        tie_word_embeddings=False, max_position_embeddings=131072, rope_theta=500000.0,
        rope_scaling={**LLAMA3_SCALING, "factor": 8.0, "original_max_position_embeddings": 64},
        attention_bias=True, mlp_bias=True),
        "llama3 scaling from a 64-position context (every band moves the logits within 300 tokens), "
        "head_dim 32 != hidden/heads 16, untied, attention_bias (q/k/v/o) and mlp_bias"),
    "llama2-mha": ("llama", dict(
        vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=3,
        num_attention_heads=4, num_key_value_heads=4, rms_norm_eps=1e-5, tie_word_embeddings=False,
        max_position_embeddings=4096, rope_theta=10000.0),
        "Llama 2 structure: MHA, plain RoPE, untied, head_dim = hidden/heads"),
    "mistral-mqa": ("mistral", dict(
        vocab_size=256, hidden_size=64, intermediate_size=160, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=1, head_dim=32, rms_norm_eps=1e-5,
        tie_word_embeddings=False, max_position_embeddings=32768, rope_theta=1e6, sliding_window=None),
        "Mistral v0.3 structure: MQA (1 kv head), head_dim 32 != hidden/heads, sliding_window null"),
}

MAJOR = int(transformers.__version__.split(".")[0])


def make_config(family, kw):
    kw = dict(kw)
    theta = kw.pop("rope_theta")
    scaling = kw.pop("rope_scaling", None)
    if MAJOR >= 5:
        kw["rope_parameters"] = {**(scaling or {"rope_type": "default"}), "rope_theta": theta}
    else:
        kw["rope_theta"] = theta
        kw["rope_scaling"] = scaling
    cls = transformers.LlamaConfig if family == "llama" else transformers.MistralConfig
    return cls(hidden_act="silu", bos_token_id=None, eos_token_id=None, pad_token_id=None, **kw)


def build(config, seed):
    model = AutoModelForCausalLM.from_config(config, attn_implementation="eager").float().eval()
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            noise = torch.randn(p.shape, generator=gen, dtype=torch.float32)
            if name.endswith("norm.weight"):
                p.copy_(1 + 0.2 * noise)
            elif name.endswith(".bias"):
                p.copy_(0.2 * noise)
            else:
                p.copy_(0.1 * noise)
    model.generation_config.eos_token_id = None
    model.generation_config.pad_token_id = 0
    return model


def padded(lengths, vocab, gen):
    ids = torch.zeros(len(lengths), max(lengths), dtype=torch.int64)
    for b, n in enumerate(lengths):
        ids[b, :n] = torch.randint(0, vocab, (n,), generator=gen)
    return ids, torch.tensor(lengths, dtype=torch.int64)


@torch.no_grad()
def forward(model, ids, lengths):
    """float32 logits (B, T, V) of a right-padded batch, positions 0..T-1."""
    B, T = ids.shape
    mask = (torch.arange(T)[None, :] < lengths[:, None]).long()
    return model(input_ids=ids, attention_mask=mask, position_ids=torch.arange(T)[None, :].expand(B, T)).logits.float()


def real_tokens(logits, lengths):
    return torch.cat([logits[b, : int(n)] for b, n in enumerate(lengths)])


def token_logprobs(logits, ids, lengths):
    lp = torch.log_softmax(logits.double(), dim=-1)
    out = torch.zeros(ids.shape, dtype=torch.float32)
    for b, n in enumerate(lengths):
        n = int(n)
        if n > 1:
            out[b, : n - 1] = lp[b, torch.arange(n - 1), ids[b, 1:n]].float()
    return out


@torch.no_grad()
def greedy(model, prompts, lengths, new_tokens):
    tokens, margins = [], []
    for p, n in zip(prompts, lengths):
        ids = p[: int(n)][None]
        out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=new_tokens,
                             do_sample=False, num_beams=1, pad_token_id=0, eos_token_id=None,
                             return_dict_in_generate=True, output_logits=True)
        seq = out.sequences[0, ids.shape[1]:]
        if seq.numel() != new_tokens:
            sys.exit(f"llama_reference: generate returned {seq.numel()} tokens, asked for {new_tokens}")
        top2 = torch.stack([step[0].double().topk(2).values for step in out.logits])
        tokens.append(seq)
        margins.append((top2[:, 0] - top2[:, 1]).float())
    return torch.stack(tokens), torch.stack(margins)


def fixtures(outdir):
    torch.set_float32_matmul_precision("highest")
    os.makedirs(outdir, exist_ok=True)
    for i, (name, (family, kw, covers)) in enumerate(sorted(VARIANTS.items())):
        config = make_config(family, kw)
        model = build(config, seed=2000 + i)
        folder = os.path.join(outdir, name)
        model.save_pretrained(folder)
        gen = torch.Generator().manual_seed(91)
        ids, lengths = padded([300, 29, 9, 1], config.vocab_size, gen)
        prompts, prompt_lengths = padded([6, 13, 1, 24], config.vocab_size, gen)
        logits = forward(model, ids, lengths)
        real = real_tokens(logits, lengths)
        tokens, margins = greedy(model, prompts, prompt_lengths, 12)
        inv_freq = model.model.rotary_emb.inv_freq.float().clone()
        bf16 = real_tokens(forward(model.to(torch.bfloat16), ids, lengths), lengths)
        scale = real.abs().max().item()
        save_file({"input_ids": ids, "lengths": lengths, "logits": real.contiguous(),
                   "logits_bf16": bf16.contiguous(), "logprobs": token_logprobs(logits, ids, lengths),
                   "prompt_ids": prompts, "prompt_lengths": prompt_lengths, "greedy_tokens": tokens.contiguous(),
                   "greedy_margins": margins.contiguous(), "inv_freq": inv_freq},
                  os.path.join(folder, "reference.safetensors"),
                  metadata={"generator": "scripts/model/llama_reference.py fixtures", "model": name,
                            "covers": covers, "transformers": transformers.__version__,
                            "torch": torch.__version__, "logits_max_abs": f"{scale:.6g}",
                            "bf16_vs_f32_max_abs": f"{(bf16 - real).abs().max().item():.3g}"})
        print(f"fixture {name}: {covers}; logits {tuple(real.shape)}, max |logit| {scale:.3f}, "
              f"smallest greedy margin {margins.min().item():.2e}")
    print(f"llama_reference: transformers {transformers.__version__}, torch {torch.__version__}")


@torch.no_grad()
def check_export(folder, ids_json):
    with open(ids_json) as f:
        rows = json.load(f)
    model, info = AutoModelForCausalLM.from_pretrained(folder, torch_dtype=torch.float32,
                                                       attn_implementation="eager", output_loading_info=True)
    bad = {k: v for k, v in info.items() if v and k != "mismatched_keys" or (k == "mismatched_keys" and v)}
    if bad:
        sys.exit(f"llama_reference: {folder} does not load cleanly: {bad}")
    model.eval()
    out = []
    for row in rows:
        ids = torch.tensor([row], dtype=torch.int64)
        out.append(model(input_ids=ids).logits[0].float().tolist())
    print(json.dumps({"class": type(model).__name__, "model_type": model.config.model_type,
                      "rope_type": model.model.rotary_emb.rope_type,
                      "inv_freq": model.model.rotary_emb.inv_freq.float().tolist(), "logits": out}))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "fixtures":
        fixtures(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "check-export":
        check_export(sys.argv[2], sys.argv[3])
    else:
        sys.exit("usage: llama_reference.py fixtures OUTDIR | check-export DIR IDS_JSON")


if __name__ == "__main__":
    main()
