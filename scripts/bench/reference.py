"""reference.py — a plain eager PyTorch Qwen2 (forward with a static KV cache,
greedy generation, one train step), timed the way troupe's `train bench`
times itself, on the same weights; the PyTorch side of compare.py.

It is deliberately the simplest fast PyTorch program: no transformers, no
torch.compile, one matmul per projection (F.linear), grouped-query attention
by broadcasting (keys and values never repeated), scores in the weights'
dtype and softmax in float32 as transformers' eager attention does, logits of
the last prompt position only. It reads config.json and model.safetensors
itself (no safetensors package), so it runs on any torch ≥ 1.10 — the
reference environment's (scripts/pyref) or Debian's python3-torch, the
libtorch troupe links.

Rows match troupe's: prefill = generating 1 token (prompt forward + argmax),
decode = generating N tokens minus that, update = log-probs of every next
token, loss −mean, backward, AdamW; each the best of --reps after a warm-up.
Output: one JSON object per row on stdout.
"""
import argparse
import json
import math
import struct
import time

import torch
import torch.nn.functional as F

DTYPES = {"F32": torch.float32, "BF16": torch.bfloat16, "F16": torch.float16}


def load_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = bytearray(f.read())
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        a, b = meta["data_offsets"]
        dt = DTYPES[meta["dtype"]]
        size = torch.empty(0, dtype=dt).element_size()
        t = torch.frombuffer(data, dtype=dt, count=(b - a) // size, offset=a) if b > a else torch.empty(0, dtype=dt)
        out[name] = t.reshape(meta["shape"]).clone()
    return out


class Qwen2:
    def __init__(self, d):
        cfg = json.load(open(d + "/config.json"))
        self.cfg = cfg
        w = load_safetensors(d + "/model.safetensors")
        for t in w.values():
            t.requires_grad_(True)
        self.w = w
        self.L = cfg["num_hidden_layers"]
        self.H = cfg["num_attention_heads"]
        self.KVH = cfg["num_key_value_heads"]
        self.D = cfg.get("head_dim") or cfg["hidden_size"] // self.H
        self.eps = cfg["rms_norm_eps"]
        self.embed = w["model.embed_tokens.weight"]
        self.lm_head = w.get("lm_head.weight", self.embed)
        inv = 1.0 / (cfg.get("rope_theta", 10000.0) ** (torch.arange(0, self.D, 2, dtype=torch.float32) / self.D))
        pos = torch.arange(cfg.get("max_position_embeddings", 4096), dtype=torch.float32)
        freqs = torch.outer(pos, inv)
        emb = torch.cat([freqs, freqs], -1)
        self.cos, self.sin = emb.cos(), emb.sin()

    def params(self):
        return list(self.w.values())

    def rms(self, x, weight):
        xf = x.float()
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return weight * xf.to(x.dtype)

    def rope(self, x, cos, sin):  # x (B, h, T, D); cos, sin (T, D)
        h = self.D // 2
        rot = torch.cat([-x[..., h:], x[..., :h]], -1)
        return x * cos + rot * sin

    def forward(self, ids, start, cache=None, last_only=False):
        """ids (B, T) at positions start..start+T; cache: per-layer (k, v) of
        (B, KVH, L, D) written in place. Returns logits (B, T or 1, V)."""
        B, T = ids.shape
        x = F.embedding(ids, self.embed)
        cos, sin = self.cos[start:start + T].to(x.dtype), self.sin[start:start + T].to(x.dtype)
        S = start + T
        mask = None
        if T > 1:
            mask = torch.ones(T, S, dtype=torch.bool).tril(start)  # query i sees keys ≤ start+i
        rep = self.H // self.KVH
        for i in range(self.L):
            p = "model.layers.%d." % i
            w = self.w
            h = self.rms(x, w[p + "input_layernorm.weight"])
            q = F.linear(h, w[p + "self_attn.q_proj.weight"], w.get(p + "self_attn.q_proj.bias"))
            k = F.linear(h, w[p + "self_attn.k_proj.weight"], w.get(p + "self_attn.k_proj.bias"))
            v = F.linear(h, w[p + "self_attn.v_proj.weight"], w.get(p + "self_attn.v_proj.bias"))
            q = self.rope(q.view(B, T, self.H, self.D).transpose(1, 2), cos, sin)
            k = self.rope(k.view(B, T, self.KVH, self.D).transpose(1, 2), cos, sin)
            v = v.view(B, T, self.KVH, self.D).transpose(1, 2)
            if cache is not None:
                ck, cv = cache[i]
                ck[:, :, start:S] = k
                cv[:, :, start:S] = v
                k, v = ck[:, :, :S], cv[:, :, :S]
            qg = q.reshape(B, self.KVH, rep, T, self.D)  # heads grouped by their key/value head
            s = torch.matmul(qg, k.unsqueeze(2).transpose(-2, -1)) / math.sqrt(self.D)
            if mask is not None:
                s = s.masked_fill(~mask, float("-inf"))
            a = torch.matmul(F.softmax(s, -1, dtype=torch.float32).to(q.dtype), v.unsqueeze(2))
            a = a.reshape(B, self.H, T, self.D).transpose(1, 2).reshape(B, T, self.H * self.D)
            x = x + F.linear(a, w[p + "self_attn.o_proj.weight"])
            h = self.rms(x, w[p + "post_attention_layernorm.weight"])
            g = F.linear(h, w[p + "mlp.gate_proj.weight"])
            u = F.linear(h, w[p + "mlp.up_proj.weight"])
            x = x + F.linear(F.silu(g) * u, w[p + "mlp.down_proj.weight"])
        x = self.rms(x, self.w["model.norm.weight"])
        if last_only:
            x = x[:, -1:]
        return F.linear(x, self.lm_head)

    def generate(self, prompts, n, cache):
        B, T = prompts.shape
        tok = self.forward(prompts, 0, cache, last_only=True)[:, -1].float().argmax(-1)
        out = [tok]
        for t in range(1, n):
            tok = self.forward(tok[:, None], T + t - 1, cache)[:, -1].float().argmax(-1)
            out.append(tok)
        return torch.stack(out, 1)


def prompts(rows, length, vocab):  # troupe's bench.prompts
    return torch.tensor([[3 + (i * 7919 + j * 104729 + i * j * 31) % (vocab - 3) for j in range(length)] for i in range(rows)])


def best(fn, reps):
    b = None
    for r in range(reps + 1):
        t0 = time.perf_counter()
        fn()
        s = time.perf_counter() - t0
        if r > 0 and (b is None or s < b):
            b = s
    return b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--batch", default="1,8,32")
    ap.add_argument("--prompt", type=int, default=64)
    ap.add_argument("--new", type=int, default=32)
    ap.add_argument("--update-rows", type=int, default=8)
    ap.add_argument("--update-len", type=int, default=256)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--update-only", action="store_true")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    m = Qwen2(a.model)
    V = m.cfg["vocab_size"]
    rows = []
    if not a.update_only:
        with torch.no_grad():
            for B in [int(x) for x in a.batch.split(",")]:
                ids = prompts(B, a.prompt, V)
                dt = m.embed.dtype
                cache = [(torch.zeros(B, m.KVH, a.prompt + a.new, m.D, dtype=dt), torch.zeros(B, m.KVH, a.prompt + a.new, m.D, dtype=dt)) for _ in range(m.L)]
                pre = best(lambda: m.generate(ids, 1, cache), a.reps)
                whole = best(lambda: m.generate(ids, a.new, cache), a.reps)
                dec = whole - pre  # ≤ 0 on a busy machine: 0 tok/s, not measured (as troupe's bench)
                rows.append({"phase": "prefill", "batch": B, "tokens": B * a.prompt, "secs": pre, "tok_s": B * a.prompt / pre})
                rows.append({"phase": "decode", "batch": B, "tokens": B * (a.new - 1), "secs": max(dec, 0), "tok_s": B * (a.new - 1) / dec if dec > 0 else 0})
    if a.update_rows > 0:
        B, T = a.update_rows, a.update_len
        ids = prompts(B, T, V)
        opt = torch.optim.AdamW(m.params(), lr=1e-6, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)

        def step():
            logits = m.forward(ids, 0).float()  # (B, T, V)
            lp = torch.log_softmax(logits[:, :-1], -1).gather(-1, ids[:, 1:, None])
            (-lp.mean()).backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
        s = best(step, a.reps)
        rows.append({"phase": "update", "batch": B, "tokens": B * (T - 1), "secs": s, "tok_s": B * (T - 1) / s})
    for r in rows:
        print(json.dumps(r))


if __name__ == "__main__":
    main()
