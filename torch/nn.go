package torch

// #include "tshim.h"
import "C"

import "sync/atomic"

// Softmax along dim, computed in float32 and returned in t's dtype.
func (t *Tensor) Softmax(dim int64) *Tensor {
	var out C.ts_tensor
	check("softmax", C.ts_softmax(t.handle(), C.int64_t(dim), &out))
	return wrap(out)
}

// LogSoftmax along dim, computed in float32 and returned in t's dtype.
func (t *Tensor) LogSoftmax(dim int64) *Tensor {
	var out C.ts_tensor
	check("log_softmax", C.ts_log_softmax(t.handle(), C.int64_t(dim), &out))
	return wrap(out)
}

// Embedding looks up rows of weight (V, D) for integer ids of any shape.
func Embedding(weight, ids *Tensor) *Tensor {
	var out C.ts_tensor
	check("embedding", C.ts_embedding(weight.handle(), ids.handle(), &out))
	return wrap(out)
}

// Linear is x·wᵀ + b, w of shape (out, in); b may be nil.
func Linear(x, w, b *Tensor) *Tensor {
	var bh C.ts_tensor
	if b != nil {
		bh = b.handle()
	}
	var out C.ts_tensor
	check("linear", C.ts_linear(x.handle(), w.handle(), bh, &out))
	return wrap(out)
}

// RMSNorm is the Hugging Face Qwen RMSNorm over the last dimension:
// w · (x / √(mean(x²) + eps)), normalised in float32 and cast back to x's
// dtype before the scale. CUDA tensors go through ATen's fused kernel where
// the build has it (FusedRMSNorm) unless SetFusedRMSNorm(false): two
// kernels instead of eight in bf16, with the same rounding up to the order
// of the float32 sum of squares.
func RMSNorm(x, w *Tensor, eps float64) *Tensor {
	var out C.ts_tensor
	check("rms_norm", C.ts_rms_norm(x.handle(), w.handle(), C.double(eps), cbool(!explicitNorm.Load()), &out))
	return wrap(out)
}

var explicitNorm atomic.Bool

// SetFusedRMSNorm chooses between ATen's fused RMSNorm kernel (on, the
// default; used only for CUDA tensors on builds that have it) and explicit
// ops, for every RMSNorm from now on; it returns the previous choice. For
// comparing the two: both compute the same function.
func SetFusedRMSNorm(on bool) (was bool) { return !explicitNorm.Swap(!on) }

// FusedRMSNorm reports whether this build has ATen's fused RMSNorm kernel
// for CUDA tensors (GPU builds where it compiles; never CPU builds).
func FusedRMSNorm() bool {
	var on C.int
	check("rms_norm_fused", C.ts_rms_norm_fused(&on))
	return on != 0
}

// RoPE applies rotary position embedding with the rotate-half convention:
// x·cos + rotate_half(x)·sin, where rotate_half(x) = cat(−x₂, x₁) over the
// last dimension. It takes sin sign-folded: sinSigned = cat(−sin₁, sin₂),
// sin with its first half negated, so that rotate_half(x)·sin =
// cat(x₂, x₁)·sinSigned needs no negation per call (the tables are built
// once per forward and used by every layer). cos and sinSigned broadcast
// against x.
func RoPE(x, cos, sinSigned *Tensor) *Tensor {
	var out C.ts_tensor
	check("rope", C.ts_rope(x.handle(), cos.handle(), sinSigned.handle(), &out))
	return wrap(out)
}

// Attention configures ScaledDotProductAttention.
type Attention struct {
	// Mask is nil, a bool tensor (true = may attend) or an additive float
	// tensor, broadcast to (B, H, T, S).
	Mask *Tensor
	// Causal masks keys after each query, diagonal aligned top-left; it
	// needs T == S (with a KV cache, pass an explicit Mask instead).
	Causal bool
	// Scale multiplies q·kᵀ; 0 means 1/√D.
	Scale float64
	// Explicit forces the explicit-math path even where the build has the
	// fused kernel (libtorch ≥ 2.1).
	Explicit bool
}

// ScaledDotProductAttention computes softmax(q·kᵀ·scale + mask)·v for q of
// shape (B, H, T, D) and k, v of shape (B, H, S, D). Every query row must be
// allowed at least one key: a fully masked row yields NaN.
func ScaledDotProductAttention(q, k, v *Tensor, a Attention) *Tensor {
	var mh C.ts_tensor
	if a.Mask != nil {
		mh = a.Mask.handle()
	}
	var out C.ts_tensor
	check("sdpa", C.ts_sdpa(q.handle(), k.handle(), v.handle(), mh, cbool(a.Causal), C.double(a.Scale), cbool(!a.Explicit), &out))
	return wrap(out)
}

// Varlen configures VarlenAttention.
type Varlen struct {
	// CuQ and CuK are the (B+1) offsets of each sequence's queries and keys
	// in the packed tensors (int32 or int64, on any device).
	CuQ, CuK *Tensor
	// MaxQ and MaxK bound the per-sequence query and key counts (the fused
	// kernel needs them; the loop ignores them).
	MaxQ, MaxK int64
	// SeqUsedK, when set, is a (B) count of the keys each sequence uses: the
	// first SeqUsedK[b] of its key range (decoding over a per-slot cache).
	SeqUsedK *Tensor
	// Causal aligns bottom-right: query i of a sequence with tq queries and
	// tk keys sees keys j ≤ i + tk − tq.
	Causal bool
	// Scale multiplies q·kᵀ; 0 means 1/√D.
	Scale float64
	// Loop forces the per-sequence explicit-math path (the reference).
	Loop bool
}

// VarlenAttention is attention over packed sequences: q (Nq, H, D) and k, v
// (Nk, KVH, D) with H a multiple of KVH (grouped-query heads, K and V never
// repeated), returning (Nq, H, D). CUDA bf16 runs the flash kernel where the
// build has it (VarlenFused); otherwise the shim loops over the sequences
// with explicit math. Both are differentiable.
func VarlenAttention(q, k, v *Tensor, a Varlen) *Tensor {
	var used C.ts_tensor
	if a.SeqUsedK != nil {
		used = a.SeqUsedK.handle()
	}
	flags := C.int(0)
	if a.Loop {
		flags |= C.TS_VARLEN_LOOP
	}
	var out C.ts_tensor
	check("varlen_attention", C.ts_varlen_attention(q.handle(), k.handle(), v.handle(), a.CuQ.handle(), a.CuK.handle(),
		C.int64_t(a.MaxQ), C.int64_t(a.MaxK), used, cbool(a.Causal), C.double(a.Scale), flags, &out))
	return wrap(out)
}

// VarlenFused reports whether this build runs VarlenAttention through the
// flash kernel on CUDA (libtorch ≥ 2.6 built with CUDA).
func VarlenFused() bool {
	var on C.int
	check("varlen_attention_fused", C.ts_varlen_attention_fused(&on))
	return on != 0
}

// Multinomial draws n indices per row of probs (B, V) from g (nil: the
// global generator).
func Multinomial(probs *Tensor, n int64, replacement bool, g *Generator) *Tensor {
	var out C.ts_tensor
	check("multinomial", C.ts_multinomial(probs.handle(), C.int64_t(n), cbool(replacement), g.handle(), &out))
	return wrap(out)
}

// TokenLogProbs returns, for logits (N, V) and int64 targets (N), the
// log-probability of each target in float32 (float64 for float64 logits),
// and when wantEntropy the entropy of each row's distribution (nil
// otherwise). Differentiable.
func TokenLogProbs(logits, targets *Tensor, wantEntropy bool) (logp, entropy *Tensor) {
	var lp, ent C.ts_tensor
	check("token_logprobs", C.ts_token_logprobs(logits.handle(), targets.handle(), cbool(wantEntropy), &lp, &ent))
	return wrap(lp), wrap(ent)
}

// LinearTokenLogProbs is TokenLogProbs(Linear(hidden, weight)/temperature,
// targets) for hidden (N, D) and weight (V, D), computed chunk rows at a
// time without keeping the (N, V) logits for the backward pass: each chunk's
// logits are recomputed there. temperature ≤ 0 means 1. Differentiable with
// respect to hidden and weight; entropy is nil unless wantEntropy.
func LinearTokenLogProbs(hidden, weight, targets *Tensor, temperature float64, chunk int64, wantEntropy bool) (logp, entropy *Tensor) {
	var lp, ent C.ts_tensor
	check("linear_token_logprobs", C.ts_linear_token_logprobs(hidden.handle(), weight.handle(), targets.handle(),
		C.double(temperature), C.int64_t(chunk), cbool(wantEntropy), &lp, &ent))
	return wrap(lp), wrap(ent)
}

// EntropyBackwardRows is the number of rows whose entropy gradient
// LinearTokenLogProbs's backward pass has computed in this process: it
// grows only when a loss differentiates the entropy output (a test's
// counter, not a timer).
func EntropyBackwardRows() int64 {
	var n C.int64_t
	check("linear_token_logprobs_entropy_backward_rows", C.ts_linear_token_logprobs_entropy_backward_rows(&n))
	return int64(n)
}
