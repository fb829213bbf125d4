#!/usr/bin/env python3
"""transformers as the external reference for troupe's Qwen2/Qwen3/Llama model.

Runs with python3 with torch, transformers, safetensors (no Go, no
network): the Python reference environment (scripts/pyref) on any machine,
or a GPU machine's python3. Four jobs:

  fixtures OUTDIR   tiny random Qwen2/Qwen2.5/Qwen3/Llama 3.2 models built from configs
                    with AutoModelForCausalLM.from_config, saved with
                    save_pretrained into OUTDIR/<name>/, plus
                    OUTDIR/<name>/reference.safetensors (layout below) with
                    transformers' logits, greedy generations, per-token
                    log-probs and the loss and gradients of one clipped
                    policy-gradient step. model's
                    TestForwardMatchesTransformers and policy's
                    TestTrainStepMatchesTransformers write them into a temp
                    dir with the reference environment at test time, or read
                    them from TROUPE_HF_FIXTURES=OUTDIR (on CUDA with
                    TROUPE_CUDA=1). On the CPU it takes a few seconds.
  peft-fixtures OUTDIR
                    LoRA adapters written by PEFT itself: for each variant a
                    tiny random base (OUTDIR/<name>/base/, save_pretrained),
                    a LoraConfig adapter from get_peft_model with every
                    lora_A/lora_B redrawn from a seeded generator (PEFT
                    starts B at zero), saved with PeftModel.save_pretrained
                    into OUTDIR/<name>/adapter/, and the adapted model's
                    float32 logits over the fixed batch in
                    OUTDIR/<name>/reference.safetensors (input_ids, lengths,
                    logits as above). model's TestPEFTAdapterLoadsInTroupe
                    loads each adapter with LoadAdapter and compares.
  time              model.generate decode tokens/s of a random model the
                    size of Qwen2.5-0.5B in bf16 at batch 1 and 32: the peer
                    figure for troupe's own decode benchmark.
  time-train        one forward/backward/AdamW step of the same model: the
                    peer for troupe's update step (tokens/s and MFU).

    python3 scripts/gpu/hf_reference.py fixtures .gpu/hf-fixtures
    python3 scripts/gpu/hf_reference.py peft-fixtures /tmp/peft-fixtures
    python3 scripts/gpu/hf_reference.py time [--batches 1,32] [--new-tokens 256] [--json out.json]
    python3 scripts/gpu/hf_reference.py time-train [--batch 8] [--seq 1024]

reference.safetensors (same names as scripts/model/reference.py writes, plus
the generation part):
    input_ids       int64 (B, T)   right-padded with 0
    lengths         int64 (B)
    logits          f32 (N, V)     float32 model, at the real tokens row by row
    logits_bf16     f32 (N, V)     the same model cast to bfloat16
    prompt_ids      int64 (P, Tp)  prompts, right-padded with 0 (troupe
                                   left-pads them itself inside Generate)
    prompt_lengths  int64 (P)
    greedy_tokens   int64 (P, G)   greedy continuation of each prompt alone,
                                   float32 model, G new tokens, no stop token
    greedy_margins  f32 (P, G)     top-1 minus top-2 logit at each of those
                                   steps (small margins are near ties)
  one training step (float32, eager attention; train_step below):
    train_ids             int64 (B, T)  rows of prompt + response, right-padded
    train_lengths         int64 (B)     prompt + response tokens per row
    train_prompt_lengths  int64 (B)
    train_advantages      f32 (B)       one fixed advantage per row
    train_logprobs        f32 (B, T)    log p(ids[b, t+1] | ids[b, ≤t]) where
                                        t predicts a response token, else 0
    train_old_logprobs    f32 (B, T)    −log V + 0.3·N(0, 1) there, else 0
    train_loss            f32 (1)       the clipped surrogate, token-mean
    grad.<parameter>      f32           d train_loss / d parameter, for every
                                        parameter named as in named_parameters()
                                        (a tied lm_head is embed_tokens)
and string metadata (versions, device, the loss settings, errors).

What it deliberately is not: a copy of troupe's tests (the comparison is in
model/reference_test.go) or a benchmark of transformers' fastest path (the
timing uses plain generate with its default dynamic cache, which is what
"HF generate" figures usually mean; --cache static tries the static cache).

Departures from transformers' own initialisation: every weight is redrawn
here from one seeded generator — projections and embeddings N(0, 0.1²)
instead of N(0, 0.02²), RMSNorm gains 1 + 0.2·N(0,1) instead of 1, biases
0.2·N(0,1) instead of 0 — so the logits spread over a few units and a
forward that ignored a norm gain or a bias would show.
"""

import argparse
import contextlib
import json
import math
import os
import statistics
import sys
import time

import torch
import transformers
from safetensors.torch import save_file
from transformers import AutoModelForCausalLM

# ---------------------------------------------------------------- models

TINY = {
    # name: (family, config overrides, what it covers)
    "qwen2-hf": ("qwen2", dict(num_key_value_heads=2, tie_word_embeddings=False, rope_theta=1e6),
                 "Qwen2, q/k/v bias, GQA 4/2, untied"),
    "qwen2-hf-tied": ("qwen2", dict(num_key_value_heads=1, tie_word_embeddings=True, rope_theta=1e4),
                      "Qwen2, MQA, tied embeddings"),
    # Qwen2.5 is the qwen2 architecture; these take the shape ratios of its
    # released configs: 0.5B (GQA 14/2, tied) and 7B (GQA 28/4, untied)
    "qwen2.5-hf-tied": ("qwen2", dict(hidden_size=112, intermediate_size=304, num_attention_heads=14,
                                      num_key_value_heads=2, tie_word_embeddings=True, rope_theta=1e6),
                        "Qwen2.5-0.5B shape: GQA 14/2, head_dim 8, tied"),
    "qwen2.5-hf": ("qwen2", dict(hidden_size=112, intermediate_size=304, num_attention_heads=7,
                                 num_key_value_heads=1, tie_word_embeddings=False, rope_theta=1e6),
                   "Qwen2.5-7B shape: GQA 7/1, head_dim 16, untied"),
    "qwen3-hf": ("qwen3", dict(num_key_value_heads=2, head_dim=32, tie_word_embeddings=True, rope_theta=1e6),
                 "Qwen3, q/k norm, head_dim 32 != 64/4, GQA 4/2, tied"),
    "qwen3-hf-bias": ("qwen3", dict(num_key_value_heads=4, head_dim=16, tie_word_embeddings=False,
                                    attention_bias=True, rope_theta=1e6),
                      "Qwen3, attention_bias (q/k/v/o), MHA, untied"),
}
# Llama fixtures, seeded after TINY's (so adding them left the Qwen fixtures'
# weights as they were): the Llama 3.2 structure with llama3 rope scaling
# whose three bands all hold some of the 8 frequencies (θ 1e4, head_dim 16:
# wavelengths 2π … 2π·1e4^(7/8) against 32/4 and 32/1), MLP biases, tied.
TINY_LLAMA = {
    "llama3.2-hf": ("llama", dict(num_key_value_heads=2, tie_word_embeddings=True, mlp_bias=True, rope_theta=1e4,
                                  rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                                "high_freq_factor": 4.0, "original_max_position_embeddings": 32}),
                    "Llama 3.2 structure: GQA 4/2, llama3 rope scaling (three bands), mlp_bias, tied"),
}
TINY_BASE = dict(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                 num_attention_heads=4, max_position_embeddings=256, rms_norm_eps=1e-6)

# Qwen2.5-0.5B's shape (its config.json), for the timings.
QWEN25_05B = dict(vocab_size=151936, hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
                  num_attention_heads=14, num_key_value_heads=2, max_position_embeddings=32768,
                  rms_norm_eps=1e-6, tie_word_embeddings=True, rope_theta=1e6)

TRANSFORMERS_MAJOR = int(transformers.__version__.split(".")[0])


def make_config(family, **kw):
    """A Qwen2Config/Qwen3Config/LlamaConfig. transformers 5 keeps rope_theta
    (and a rope scaling) inside rope_parameters; 4.x takes them as keywords."""
    theta = kw.pop("rope_theta", 1e4)
    scaling = kw.pop("rope_scaling", None)
    if TRANSFORMERS_MAJOR >= 5:
        kw["rope_parameters"] = {**(scaling or {"rope_type": "default"}), "rope_theta": theta}
    else:
        kw["rope_theta"] = theta
        if scaling:
            kw["rope_scaling"] = scaling
    if family == "llama":
        return transformers.LlamaConfig(hidden_act="silu", bos_token_id=None, eos_token_id=None, pad_token_id=None, **kw)
    cls = transformers.Qwen2Config if family == "qwen2" else transformers.Qwen3Config
    return cls(use_sliding_window=False, hidden_act="silu", bos_token_id=None, eos_token_id=None,
               pad_token_id=None, **kw)


def build(config, seed, device, attn="eager", std=0.1):
    """from_config, then every weight redrawn from one seeded generator (see
    the module docstring) so the result does not depend on transformers'
    init code; tied weights are one Parameter and drawn once."""
    # allocate (and let transformers initialise) on the GPU directly: 0.5B
    # parameters initialise in seconds there, much longer on the CPU
    where = torch.device(device) if device != "cpu" else contextlib.nullcontext()
    with where:
        model = AutoModelForCausalLM.from_config(config, attn_implementation=attn)
    model = model.to(device=device, dtype=torch.float32).eval()
    gen = torch.Generator(device=device).manual_seed(seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            noise = torch.randn(p.shape, generator=gen, dtype=torch.float32, device=device)
            if name.endswith("norm.weight"):
                p.copy_(1 + 0.2 * noise)
            elif name.endswith(".bias"):
                p.copy_(0.2 * noise)
            else:
                p.copy_(std * noise)
    model.generation_config.eos_token_id = None
    model.generation_config.pad_token_id = 0
    return model


# ---------------------------------------------------------------- fixtures


def fixed_inputs(vocab):
    """A padded batch (lengths 29, 9, 4, 1) for logits and four prompts
    (lengths 6, 13, 1, 24) for generation, from a fixed seed."""
    gen = torch.Generator().manual_seed(77)

    def padded(lengths):
        ids = torch.zeros(len(lengths), max(lengths), dtype=torch.int64)
        for b, n in enumerate(lengths):
            ids[b, :n] = torch.randint(0, vocab, (n,), generator=gen)
        return ids, torch.tensor(lengths, dtype=torch.int64)

    ids, lengths = padded([29, 9, 4, 1])
    ids[0, 2], ids[1, 0] = 0, vocab - 1  # id 0 is a real token too
    prompts, prompt_lengths = padded([6, 13, 1, 24])
    return ids, lengths, prompts, prompt_lengths


@torch.no_grad()
def real_token_logits(model, ids, lengths, device):
    """Logits (N, V) in float32 at the real tokens of a right-padded batch."""
    B, T = ids.shape
    mask = (torch.arange(T)[None, :] < lengths[:, None]).long()
    positions = torch.arange(T)[None, :].expand(B, T)
    out = model(input_ids=ids.to(device), attention_mask=mask.to(device),
                position_ids=positions.to(device)).logits.float().cpu()
    return torch.cat([out[b, : int(n)] for b, n in enumerate(lengths)])


@torch.no_grad()
def greedy(model, prompts, lengths, new_tokens, device):
    """Greedy continuation of each prompt on its own (no padding), with the
    top-1 minus top-2 logit margin at every step."""
    tokens, margins = [], []
    for p, n in zip(prompts, lengths):
        ids = p[: int(n)][None].to(device)
        out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=new_tokens,
                             do_sample=False, num_beams=1, pad_token_id=0, eos_token_id=None,
                             return_dict_in_generate=True, output_logits=True)
        seq = out.sequences[0, ids.shape[1]:].cpu()
        if seq.numel() != new_tokens:
            sys.exit(f"hf_reference: generate returned {seq.numel()} tokens, asked for {new_tokens} (did a stop token fire?)")
        top2 = torch.stack([step[0].double().topk(2).values for step in out.logits]).cpu()  # (G, 2)
        tokens.append(seq)
        margins.append((top2[:, 0] - top2[:, 1]).float())
    return torch.stack(tokens), torch.stack(margins)


def fixtures(args):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.set_float32_matmul_precision("highest")  # no TF32: the float32 reference stays float32
    os.makedirs(args.outdir, exist_ok=True)
    seeded = [(1000 + i, kv) for i, kv in enumerate(sorted(TINY.items()))] + \
             [(1100 + i, kv) for i, kv in enumerate(sorted(TINY_LLAMA.items()))]
    for seed, (name, (family, overrides, covers)) in seeded:
        config = make_config(family, **{**TINY_BASE, **overrides})
        model = build(config, seed=seed, device=device)
        folder = os.path.join(args.outdir, name)
        model.save_pretrained(folder)  # config.json + model.safetensors (tied lm_head omitted)

        ids, lengths, prompts, prompt_lengths = fixed_inputs(config.vocab_size)
        logits = real_token_logits(model, ids, lengths, device)
        tokens, margins = greedy(model, prompts, prompt_lengths, args.new_tokens, device)
        train, clipped = train_step(model, config.vocab_size, device)
        bf16 = real_token_logits(model.to(torch.bfloat16), ids, lengths, device)
        scale = logits.abs().max().item()
        bf16_err = (bf16 - logits).abs().max().item()
        save_file(
            {"input_ids": ids, "lengths": lengths, "logits": logits.contiguous(), "logits_bf16": bf16.contiguous(),
             "prompt_ids": prompts, "prompt_lengths": prompt_lengths,
             "greedy_tokens": tokens.contiguous(), "greedy_margins": margins.contiguous(), **train},
            os.path.join(folder, "reference.safetensors"),
            metadata={"generator": "scripts/gpu/hf_reference.py fixtures", "model": name, "covers": covers,
                      "transformers": transformers.__version__, "torch": torch.__version__,
                      "device": torch.cuda.get_device_name() if device == "cuda" else "cpu",
                      "attn_implementation": "eager", "logits_max_abs": f"{scale:.6g}",
                      "bf16_vs_f32_max_abs": f"{bf16_err:.3g}",
                      "min_greedy_margin": f"{margins.min().item():.3g}",
                      "train_loss": "clipped, token-mean", "train_clip_low": str(TRAIN_CLIP_LOW),
                      "train_clip_high": str(TRAIN_CLIP_HIGH), "train_dual_clip": str(TRAIN_DUAL_CLIP),
                      "train_clipped_tokens": str(clipped)})
        print(f"fixture {name:14s} {covers}: logits {tuple(logits.shape)} max |logit| {scale:.3f}, "
              f"bf16 vs f32 {bf16_err:.2e} ({bf16_err / scale:.2e} of max), greedy {tuple(tokens.shape)}, "
              f"smallest top-2 margin {margins.min().item():.2e}, train loss {train['train_loss'].item():.4f} "
              f"({clipped} of {int(train['train_logprobs'].ne(0).sum())} tokens clipped)")
    print(f"hf_reference: transformers {transformers.__version__}, torch {torch.__version__} on {device}; "
          f"run the Go side with TROUPE_HF_FIXTURES={os.path.abspath(args.outdir)}")


# The loss settings of the training step; policy's
# TestTrainStepMatchesTransformers sets troupe's to the same values.
TRAIN_CLIP_LOW, TRAIN_CLIP_HIGH, TRAIN_DUAL_CLIP = 0.2, 0.28, 3.0


def train_step(model, vocab, device):
    """One clipped policy-gradient step on transformers' model, written here
    in PyTorch (the formula of policy/loss.go, not its code): per token
    ρ = exp(log π − log π_old), L = max(−A·ρ, −A·clip(ρ, 1 − ε_low, 1 + ε_high)),
    for A < 0 at most −A·c; the loss is the token mean over response tokens.
    Returns the tensors of the "train_" part of the layout and the grads."""
    gen = torch.Generator().manual_seed(91)
    lengths, prompt_lengths = [12, 7, 9, 3], [4, 2, 6, 1]
    B, T = len(lengths), max(lengths)
    ids = torch.zeros(B, T, dtype=torch.int64)
    for b, n in enumerate(lengths):
        ids[b, :n] = torch.randint(0, vocab, (n,), generator=gen)
    adv = torch.tensor([1.3, -0.8, 0.4, -1.7])
    t = torch.arange(T)[None, :]
    n, p = torch.tensor(lengths)[:, None], torch.tensor(prompt_lengths)[:, None]
    valid = (t < n).long()
    mask = ((t >= p - 1) & (t < n - 1)).float()  # (B, T): t predicts response token t+1
    targets = torch.zeros_like(ids)
    targets[:, :-1] = ids[:, 1:]
    model.zero_grad(set_to_none=True)
    logits = model(input_ids=ids.to(device), attention_mask=valid.to(device),
                   position_ids=t.expand(B, T).to(device)).logits.float().cpu()  # (B, T, V)
    logp = torch.log_softmax(logits, dim=-1).gather(-1, targets[..., None])[..., 0] * mask  # (B, T)
    # an older policy: near uniform, so ρ depends on the model and spreads
    # across both clip bounds
    old = (-math.log(vocab) + 0.3 * torch.randn(B, T, generator=gen)) * mask
    A = adv[:, None]
    ratio = torch.exp(logp - old)
    loss = torch.maximum(-A * ratio, -A * ratio.clamp(1 - TRAIN_CLIP_LOW, 1 + TRAIN_CLIP_HIGH))
    loss = torch.where(A < 0, torch.minimum(loss, -A * TRAIN_DUAL_CLIP), loss)
    total = (loss * mask).sum() / mask.sum()
    total.backward()
    tensors = {"train_ids": ids, "train_lengths": torch.tensor(lengths), "train_prompt_lengths": torch.tensor(prompt_lengths),
               "train_advantages": adv, "train_logprobs": logp.detach().contiguous(),
               "train_old_logprobs": old.contiguous(), "train_loss": total.detach().reshape(1)}
    for name, param in model.named_parameters():
        tensors["grad." + name] = param.grad.detach().float().cpu().contiguous()
    # tokens whose gradient a clip cuts (the rest carry the step)
    clipped = (((A > 0) & (ratio > 1 + TRAIN_CLIP_HIGH)) | ((A < 0) & ((ratio < 1 - TRAIN_CLIP_LOW) | (ratio > TRAIN_DUAL_CLIP)))) & (mask > 0)
    model.zero_grad(set_to_none=True)
    return tensors, int(clipped.sum())


# ---------------------------------------------------------------- PEFT

ALL_PROJECTIONS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
PEFT_VARIANTS = {
    # name: (base model in TINY, LoraConfig arguments, what it covers)
    "qwen3-all": ("qwen3-hf", dict(r=4, lora_alpha=8, target_modules=ALL_PROJECTIONS),
                  "Qwen3, every projection, r 4, alpha 8"),
    "qwen3-bias-attn-rslora": ("qwen3-hf-bias", dict(r=2, lora_alpha=3, target_modules=["q_proj", "v_proj", "o_proj"],
                                                     use_rslora=True),
                               "Qwen3 with attention bias, q/v/o, r 2, rsLoRA"),
    "qwen2.5-tied-mlp": ("qwen2.5-hf-tied", dict(r=3, lora_alpha=6, target_modules=["gate_proj", "up_proj", "down_proj"]),
                         "Qwen2.5-0.5B shape, MLP only, r 3"),
}


def peft_fixtures(args):
    import peft
    from peft import LoraConfig, get_peft_model

    torch.set_float32_matmul_precision("highest")
    for i, (name, (base_name, lora, covers)) in enumerate(sorted(PEFT_VARIANTS.items())):
        family, overrides, _ = TINY[base_name]
        config = make_config(family, **{**TINY_BASE, **overrides})
        model = build(config, seed=2000 + i, device="cpu")
        folder = os.path.join(args.outdir, name)
        model.save_pretrained(os.path.join(folder, "base"))
        adapted = get_peft_model(model, LoraConfig(task_type="CAUSAL_LM", lora_dropout=0.0, **lora))
        gen = torch.Generator().manual_seed(3000 + i)
        drawn = 0
        with torch.no_grad():
            for pname, p in sorted(adapted.named_parameters()):
                if ".lora_A." in pname or ".lora_B." in pname:
                    p.copy_(0.3 * torch.randn(p.shape, generator=gen))
                    drawn += 1
        adapted.save_pretrained(os.path.join(folder, "adapter"))
        adapted.eval()
        ids, lengths, _, _ = fixed_inputs(config.vocab_size)
        logits = real_token_logits(adapted, ids, lengths, "cpu")
        with adapted.disable_adapter():
            moved = (real_token_logits(adapted, ids, lengths, "cpu") - logits).abs().max().item()
        save_file({"input_ids": ids, "lengths": lengths, "logits": logits.contiguous()},
                  os.path.join(folder, "reference.safetensors"),
                  metadata={"generator": "scripts/gpu/hf_reference.py peft-fixtures", "variant": name, "covers": covers,
                            "peft": peft.__version__, "transformers": transformers.__version__,
                            "torch": torch.__version__, "adapter_moves_logits_by": f"{moved:.3g}"})
        print(f"peft fixture {name:24s} {covers}: {drawn} LoRA tensors, logits {tuple(logits.shape)}, "
              f"the adapter moves them by up to {moved:.3f}")
    print(f"hf_reference: peft {peft.__version__}, transformers {transformers.__version__}, torch {torch.__version__}")


# ---------------------------------------------------------------- timings


def device_peaks():
    """(HBM bytes/s, dense bf16 FLOP/s) of the current GPU, or None when unknown."""
    name = torch.cuda.get_device_name()
    if "H200" in name:
        return 4.8e12, 989e12
    if "H100" in name:
        return 3.35e12, 989e12
    return None


def timed(fn, reps):
    """Median wall time of fn() over reps runs, synchronised."""
    times = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


QWEN25_15B = dict(QWEN25_05B, hidden_size=1536, intermediate_size=8960, num_hidden_layers=28,
                  num_attention_heads=12, num_key_value_heads=2)


def big_model(args):
    if not torch.cuda.is_available():
        sys.exit("hf_reference: the timings need a CUDA device")
    shape = QWEN25_15B if getattr(args, "shape", "0.5b") == "1.5b" else QWEN25_05B
    config = make_config("qwen2", **shape)
    return config, build(config, seed=0, device="cuda", attn=args.attn, std=0.02)


def time_generate(args):
    config, model = big_model(args)
    model = model.to(torch.bfloat16)
    params = sum(p.numel() for p in model.parameters())
    weight_bytes = 2 * params
    gen_kw = dict(do_sample=False, num_beams=1, pad_token_id=0, eos_token_id=None)
    if args.cache:
        gen_kw["cache_implementation"] = args.cache
    results = []
    gen = torch.Generator().manual_seed(1)
    for B in [int(b) for b in args.batches.split(",")]:
        ids = torch.randint(0, config.vocab_size, (B, args.prompt), generator=gen).cuda()
        mask = torch.ones_like(ids)

        def run(n):
            with torch.no_grad():
                out = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=n, min_new_tokens=n, **gen_kw)
            assert out.shape[1] == args.prompt + n, out.shape

        run(8)  # warm-up: kernels, allocator, cache
        t1 = timed(lambda: run(1), args.reps)
        tn = timed(lambda: run(args.new_tokens), args.reps)
        decode = B * (args.new_tokens - 1) / (tn - t1)
        row = {"batch": B, "prompt": args.prompt, "new_tokens": args.new_tokens, "prefill_s": t1,
               "total_s": tn, "decode_tok_s": decode, "end_to_end_tok_s": B * args.new_tokens / tn,
               "ms_per_step": 1e3 * (tn - t1) / (args.new_tokens - 1)}
        peaks = device_peaks()
        if peaks:
            row["bandwidth_bound_tok_s"] = B * peaks[0] / weight_bytes  # ignores the KV cache reads
        results.append(row)
        print(f"generate bf16 batch {B:3d}: decode {decode:9.1f} tok/s ({row['ms_per_step']:.2f} ms/step), "
              f"end to end {row['end_to_end_tok_s']:9.1f} tok/s, prefill of {args.prompt} tokens + 1 {1e3 * t1:.1f} ms"
              + (f"; weights-bandwidth bound {row['bandwidth_bound_tok_s']:.0f} tok/s" if peaks else ""))
    summary = {"mode": "time", "model": "random Qwen2.5-%s shape" % getattr(args, "shape", "0.5b"), "params": params, "dtype": "bfloat16",
               "attn_implementation": args.attn, "cache": args.cache or "dynamic",
               "device": torch.cuda.get_device_name(), "transformers": transformers.__version__,
               "torch": torch.__version__, "results": results}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=2)
    print(json.dumps(summary))


def time_train(args):
    config, model = big_model(args)
    model.train()
    params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=1e-6, weight_decay=0.0, fused=True)
    gen = torch.Generator().manual_seed(2)
    ids = torch.randint(0, config.vocab_size, (args.batch, args.seq), generator=gen).cuda()

    def step():
        # float32 master weights, bf16 autocast: the usual transformers recipe
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    step()  # warm-up (AdamW state, allocator)
    t = timed(step, args.reps)
    tokens = args.batch * args.seq
    flops = 6 * params * tokens
    peaks = device_peaks()
    mfu = flops / t / peaks[1] if peaks else None
    summary = {"mode": "time-train", "params": params, "batch": args.batch, "seq": args.seq, "step_s": t,
               "tokens_per_s": tokens / t, "mfu": mfu, "attn_implementation": args.attn,
               "peak_mem_gib": torch.cuda.max_memory_allocated() / 2**30,
               "device": torch.cuda.get_device_name(), "transformers": transformers.__version__,
               "torch": torch.__version__}
    print(f"train step (f32 master, bf16 autocast, fused AdamW) batch {args.batch}×{args.seq}: {1e3 * t:.1f} ms, "
          f"{tokens / t:.0f} tok/s" + (f", MFU {100 * mfu:.1f}% (6·N·tokens)" if mfu else ""))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=2)
    print(json.dumps(summary))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    f = sub.add_parser("fixtures", help="tiny models and their reference logits/generations")
    f.add_argument("outdir")
    f.add_argument("--new-tokens", type=int, default=20)
    pf = sub.add_parser("peft-fixtures", help="LoRA adapters written by PEFT, with their logits")
    pf.add_argument("outdir")
    t = sub.add_parser("time", help="model.generate decode tokens/s, Qwen2.5-0.5B shape, bf16")
    t.add_argument("--batches", default="1,32")
    t.add_argument("--shape", default="0.5b", choices=["0.5b", "1.5b"], help="Qwen2.5 shape")
    t.add_argument("--prompt", type=int, default=128)
    t.add_argument("--new-tokens", type=int, default=256)
    t.add_argument("--reps", type=int, default=3)
    t.add_argument("--attn", default="sdpa", help="attn_implementation (sdpa, eager, flash_attention_2)")
    t.add_argument("--cache", default="", help="cache_implementation, e.g. static (default: dynamic)")
    t.add_argument("--json", default="", help="also write the results here")
    r = sub.add_parser("time-train", help="forward/backward/AdamW step, Qwen2.5-0.5B shape")
    r.add_argument("--shape", default="0.5b", choices=["0.5b", "1.5b"], help="Qwen2.5 shape")
    r.add_argument("--batch", type=int, default=8)
    r.add_argument("--seq", type=int, default=1024)
    r.add_argument("--reps", type=int, default=5)
    r.add_argument("--attn", default="sdpa")
    r.add_argument("--json", default="")
    args = ap.parse_args()
    torch.manual_seed(0)
    {"fixtures": fixtures, "peft-fixtures": peft_fixtures, "time": time_generate, "time-train": time_train}[args.mode](args)


if __name__ == "__main__":
    main()
