#!/usr/bin/python3
"""Independent reference logits for troupe's Qwen2 / Qwen3 forward pass.

What it is: a plain PyTorch implementation of the Qwen2 and Qwen3 decoder as
the Hugging Face modelling definitions specify it, written from those
definitions (not copied, and not importing transformers, which Debian does
not package). It reads each tiny model that `go run ./scripts/model/gentiny`
saved under testdata/model/<name>/, runs it on fixed token ids, and writes
testdata/model/<name>/reference.safetensors holding

    input_ids   int64 (B, T)  the batch, right-padded with id 0
    lengths     int64 (B)     real tokens per row
    logits      f32   (N, V)  logits at the real tokens only, row by row
                              (row 0's tokens, then row 1's, ...), N = sum(lengths)

plus string metadata (the generator, the model, the measured float32 and
bfloat16 errors below). model/reference_test.go compares troupe's logits with
these.

Usage (Debian's python3, with python3-torch and python3-numpy installed):

    /usr/bin/python3 scripts/model/reference.py [testdata/model]

What it deliberately is not: a test of itself against transformers (the GPU
script scripts/gpu/hf_reference.py does that comparison where transformers is
installed), nor fast.

The math, per the Hugging Face Qwen2/Qwen3 definitions:
  1. RMSNorm: x·rsqrt(mean(x²) + eps) computed in float32, cast back to the
     input dtype, then multiplied by the weight.
  2. RoPE (rotate-half form): inv_freq_i = 1/θ^(2i/d) for i < d/2, computed in
     float32; angles = position·inv_freq; cos/sin of cat(angles, angles) cast
     to the compute dtype; x' = x·cos + rotate_half(x)·sin with
     rotate_half([a, b]) = [−b, a].
  3. Attention: q, k, v projections (q/k/v bias on Qwen2, on Qwen3 only with
     attention_bias, which also puts a bias on o_proj); Qwen3 applies an
     RMSNorm over each head's q and k (weights q_norm/k_norm, size head_dim)
     before RoPE; k and v heads are repeated to the query head count (GQA);
     scores = q·kᵀ/√head_dim with the causal and padding mask; softmax in
     float32, cast back; output = o_proj(softmax·v).
  4. MLP: down(silu(gate(x)) · up(x)).
  5. Pre-norm blocks: h = x + attn(norm1(x)); out = h + mlp(norm2(h)).
  6. Final RMSNorm, then lm_head (or the embedding matrix when tied).
Position ids are 0..len−1 for each row; padded keys are masked out.

Self-checks before anything is written (the script stops on failure):
  - each row run alone, unpadded, gives the same logits as in the padded
    batch (max abs difference < 1e-5);
  - the float32 logits agree with a float64 run of the same weights; the
    difference is recorded as the intrinsic float32 noise;
  - a bfloat16 run (weights and activations in bf16, norms and softmax in
    float32 as Hugging Face does) is recorded as the spread a correct bf16
    implementation shows, which is what the Go bf16 tolerance is set from.
"""

import json
import math
import os
import struct
import sys

import numpy as np
import torch

# ---------------------------------------------------------------- safetensors

# safetensors dtype name -> (numpy dtype read from disk, torch dtype it stands for)
_DTYPES = {
    "F64": (np.float64, torch.float64),
    "F32": (np.float32, torch.float32),
    "F16": (np.float16, torch.float16),
    "BF16": (np.int16, torch.bfloat16),  # numpy has no bf16: read the bits, reinterpret
    "I64": (np.int64, torch.int64),
    "I32": (np.int32, torch.int32),
}


def read_safetensors(path):
    """Returns ({name: tensor}, metadata) from a safetensors file.

    Format: 8-byte little-endian header length N, N bytes of JSON
    {name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {...}},
    then the raw little-endian data, offsets relative to its start.
    """
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8 : 8 + n].decode("utf-8"))
    data = blob[8 + n :]
    metadata = header.pop("__metadata__", {})
    tensors = {}
    for name, info in header.items():
        np_dtype, torch_dtype = _DTYPES[info["dtype"]]
        begin, end = info["data_offsets"]
        arr = np.frombuffer(data[begin:end], dtype=np.dtype(np_dtype).newbyteorder("<"))
        t = torch.from_numpy(arr.copy()).reshape(info["shape"])
        if torch_dtype == torch.bfloat16:
            t = t.view(torch.bfloat16)
        tensors[name] = t
    return tensors, metadata


def write_safetensors(path, tensors, metadata):
    """Writes {name: tensor} (float32 / int64 only) in safetensors layout,
    tensors in name order, header padded with spaces to a multiple of 8."""
    names = sorted(tensors)
    header, chunks, offset = {}, [], 0
    for name in names:
        t = tensors[name].contiguous()
        code = {torch.float32: ("F32", "<f4"), torch.int64: ("I64", "<i8")}[t.dtype]
        raw = t.numpy().astype(code[1]).tobytes()
        header[name] = {"dtype": code[0], "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    header["__metadata__"] = {k: str(v) for k, v in metadata.items()}
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for c in chunks:
            f.write(c)
    os.replace(tmp, path)


# ---------------------------------------------------------------- the model


class QwenReference:
    """The Qwen2/Qwen3 causal LM over a dict of weights keyed by checkpoint path.

    dtype is the compute dtype (float32, float64 or bfloat16); weights are
    cast to it once. Norms and softmax run in at least float32, as in the
    Hugging Face definitions.
    """

    def __init__(self, config, weights, dtype):
        self.family = config["model_type"]
        assert self.family in ("qwen2", "qwen3"), self.family
        self.hidden = config["hidden_size"]
        self.layers = config["num_hidden_layers"]
        self.heads = config["num_attention_heads"]
        self.kv_heads = config.get("num_key_value_heads") or self.heads
        self.head_dim = config.get("head_dim") or self.hidden // self.heads
        self.theta = config.get("rope_theta", 10000.0)
        self.eps = config.get("rms_norm_eps", 1e-6)
        self.tied = config.get("tie_word_embeddings", False)
        # Qwen2 always has q/k/v bias and never an o bias; Qwen3 has both only with attention_bias.
        if self.family == "qwen2":
            self.qkv_bias, self.o_bias = True, False
        else:
            self.qkv_bias = self.o_bias = bool(config.get("attention_bias", False))
        self.dtype = dtype
        self.w = {k: v.to(dtype) for k, v in weights.items()}

    # 1. RMSNorm
    def rms_norm(self, x, weight):
        in_dtype = x.dtype
        x32 = x.to(torch.float64 if in_dtype == torch.float64 else torch.float32)
        x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)
        return weight * x32.to(in_dtype)

    # 2. rotary embedding
    def rope_tables(self, positions):
        """cos, sin of shape (B, 1, T, head_dim) for integer positions (B, T)."""
        exps = torch.arange(0, self.head_dim, 2, dtype=torch.int64).to(torch.float32) / self.head_dim
        inv_freq = 1.0 / (self.theta ** exps)  # float32, (head_dim/2)
        angles = positions.to(torch.float32)[..., None] * inv_freq  # (B, T, head_dim/2)
        emb = torch.cat([angles, angles], dim=-1)[:, None]  # (B, 1, T, head_dim)
        return emb.cos().to(self.dtype), emb.sin().to(self.dtype)

    @staticmethod
    def rotate(x, cos, sin):
        half = x.shape[-1] // 2
        rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
        return x * cos + rotated * sin

    def linear(self, x, prefix, bias):
        y = x @ self.w[prefix + ".weight"].T
        if bias:
            y = y + self.w[prefix + ".bias"]
        return y

    # 3. attention
    def attention(self, x, i, cos, sin, allowed):
        p = f"model.layers.{i}.self_attn."
        B, T, _ = x.shape
        q = self.linear(x, p + "q_proj", self.qkv_bias).view(B, T, self.heads, self.head_dim)
        k = self.linear(x, p + "k_proj", self.qkv_bias).view(B, T, self.kv_heads, self.head_dim)
        v = self.linear(x, p + "v_proj", self.qkv_bias).view(B, T, self.kv_heads, self.head_dim)
        if self.family == "qwen3":
            q = self.rms_norm(q, self.w[p + "q_norm.weight"])
            k = self.rms_norm(k, self.w[p + "k_norm.weight"])
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # (B, heads, T, head_dim)
        q, k = self.rotate(q, cos, sin), self.rotate(k, cos, sin)
        group = self.heads // self.kv_heads
        k = k.repeat_interleave(group, dim=1)  # kv head j serves query heads j·group .. j·group+group−1
        v = v.repeat_interleave(group, dim=1)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(self.head_dim)  # (B, heads, T, T)
        scores = scores.masked_fill(~allowed, float("-inf"))
        soft_dtype = torch.float64 if self.dtype == torch.float64 else torch.float32
        probs = torch.softmax(scores.to(soft_dtype), dim=-1).to(self.dtype)
        out = (probs @ v).transpose(1, 2).reshape(B, T, self.heads * self.head_dim)
        return self.linear(out, p + "o_proj", self.o_bias)

    # 4. MLP
    def mlp(self, x, i):
        p = f"model.layers.{i}.mlp."
        gate = self.linear(x, p + "gate_proj", False)
        up = self.linear(x, p + "up_proj", False)
        return self.linear(torch.nn.functional.silu(gate) * up, p + "down_proj", False)

    # 5.–6. blocks, final norm, head
    def logits(self, ids, lengths):
        """ids (B, T) right-padded, lengths (B) -> float32 logits (B, T, V)."""
        B, T = ids.shape
        valid = torch.arange(T)[None, :] < lengths[:, None]  # (B, T)
        positions = torch.arange(T)[None, :].expand(B, T)  # 0..len−1 on real tokens
        causal = torch.ones(T, T, dtype=torch.bool).tril()
        allowed = causal[None, None] & valid[:, None, None, :]  # (B, 1, T, T)
        # with right padding key 0 is real in every row and every query may
        # see it, so no softmax row is empty (padded queries are discarded)
        cos, sin = self.rope_tables(positions)
        x = self.w["model.embed_tokens.weight"][ids]
        for i in range(self.layers):
            p = f"model.layers.{i}."
            x = x + self.attention(self.rms_norm(x, self.w[p + "input_layernorm.weight"]), i, cos, sin, allowed)
            x = x + self.mlp(self.rms_norm(x, self.w[p + "post_attention_layernorm.weight"]), i)
        x = self.rms_norm(x, self.w["model.norm.weight"])
        head = self.w["model.embed_tokens.weight" if self.tied else "lm_head.weight"]
        return (x @ head.T).to(torch.float32)


# ---------------------------------------------------------------- inputs


def fixed_batch(vocab):
    """The token ids every model is run on: four rows of lengths 37, 11, 6
    and 1, right-padded with 0. Id 0 and vocab−1 occur as real tokens (so
    nothing may treat id 0 as padding), and the long row reaches positions
    where the fast RoPE frequencies have wrapped many times."""
    gen = torch.Generator().manual_seed(20240601)
    lengths = [37, 11, 6, 1]
    T = max(lengths)
    ids = torch.zeros(len(lengths), T, dtype=torch.int64)
    for b, n in enumerate(lengths):
        ids[b, :n] = torch.randint(0, vocab, (n,), generator=gen)
    ids[0, 3], ids[0, 4] = 0, vocab - 1
    ids[1, 0] = 0
    return ids, torch.tensor(lengths, dtype=torch.int64)


def real_rows(logits, lengths):
    """(B, T, V) -> (N, V): the logits at real tokens, row by row."""
    return torch.cat([logits[b, : int(n)] for b, n in enumerate(lengths)], dim=0)


# ---------------------------------------------------------------- main


def reference_for(model_dir):
    with open(os.path.join(model_dir, "config.json")) as f:
        config = json.load(f)
    weights, _ = read_safetensors(os.path.join(model_dir, "model.safetensors"))
    ids, lengths = fixed_batch(config["vocab_size"])

    f32 = QwenReference(config, weights, torch.float32)
    expected = real_rows(f32.logits(ids, lengths), lengths)

    # self-check: each row alone, unpadded, matches the padded batch
    alone = torch.cat([f32.logits(ids[b : b + 1, : int(n)], lengths[b : b + 1])[0] for b, n in enumerate(lengths)])
    pad_err = (alone - expected).abs().max().item()
    if pad_err > 1e-5:
        sys.exit(f"reference: {model_dir}: padded batch and unpadded rows differ by {pad_err:.3g} (> 1e-5); the mask is wrong")

    f64 = real_rows(QwenReference(config, weights, torch.float64).logits(ids, lengths), lengths)
    bf16 = real_rows(QwenReference(config, weights, torch.bfloat16).logits(ids, lengths), lengths)
    scale = expected.abs().max().item()
    f32_err = (expected.double() - f64.double()).abs().max().item()
    bf16_err = (bf16 - expected).abs().max().item()
    if not torch.isfinite(expected).all() or f32_err > 1e-5:
        sys.exit(f"reference: {model_dir}: float32 and float64 runs differ by {f32_err:.3g}; something is unstable")

    write_safetensors(
        os.path.join(model_dir, "reference.safetensors"),
        {"input_ids": ids, "lengths": lengths, "logits": expected.contiguous()},
        {
            "generator": "scripts/model/reference.py (rerun: /usr/bin/python3 scripts/model/reference.py)",
            "model": os.path.basename(os.path.normpath(model_dir)),
            "torch": torch.__version__,
            "logits_max_abs": f"{scale:.6g}",
            "f32_vs_f64_max_abs": f"{f32_err:.3g}",
            "bf16_vs_f32_max_abs": f"{bf16_err:.3g}",
        },
    )
    print(
        f"{os.path.basename(os.path.normpath(model_dir)):18s} logits {tuple(expected.shape)}, max |logit| {scale:.3f}, "
        f"f32 vs f64 {f32_err:.2e}, bf16 vs f32 {bf16_err:.2e} ({bf16_err / scale:.2e} of max), "
        f"padded vs alone {pad_err:.1e}"
    )


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "testdata/model"
    torch.set_num_threads(1)  # deterministic summation order
    dirs = sorted(d for d in os.listdir(root) if os.path.isfile(os.path.join(root, d, "config.json")))
    if not dirs:
        sys.exit(f"reference: no model folders (with config.json) under {root}; run `go run ./scripts/model/gentiny` first")
    for d in dirs:
        reference_for(os.path.join(root, d))


if __name__ == "__main__":
    main()
