package model

// qwen.go — the decoder of every family troupe loads (Qwen2, Qwen3, Llama,
// Mistral: family.go lists what switches between them), in reading order:
// Config (config.go) → RMSNorm → rotary embedding → attention → MLP →
// block → model.
//
// Structs mirror the Hugging Face checkpoint key path
// (model.layers.N.self_attn.q_proj.weight is Model.Layers[N].Attn.Q.W) and
// hold weights only: the KV cache, positions and masks are arguments, so many
// agents and rollouts share one Model.
//
// Fused projections: q_proj, k_proj and v_proj of a layer (and gate_proj
// and up_proj) are views of one weight tensor (weights.go, fuse), so each
// stays a leaf with its own checkpoint key, grad and optimizer state.
// Generation — the forwards that write keys and values: the engine and the
// plain decode path — runs one GEMM over the fused tensor where the
// checkpoint has three (two): 3 fewer kernels per layer and decode step.
// Every other forward (the old log-probs, the update, evaluation's scoring)
// runs one GEMM per projection. The two agree to rounding, not bit for bit,
// so the trainer's no-grad and grad forwards stay identical and the first
// mini-batch's ratio exactly 1; sampled log-probs are diagnostics (the
// update recomputes them) and may differ from the update's in the last bits.
//
// Departures from the Hugging Face definition: none in the math. Attention
// uses a bool mask in which a padded query attends to itself (see
// attentionMask), where transformers lets such rows attend to nothing; the
// outputs at real tokens are the same.

import (
	"troupe/torch"
)

// RMSNorm is the Qwen RMSNorm (normalised in float32, scaled in the model dtype).
type RMSNorm struct {
	W   *torch.Tensor // (D)
	Eps float64
}

func (n RMSNorm) Forward(x *torch.Tensor) *torch.Tensor { return torch.RMSNorm(x, n.W, n.Eps) }

// rotary holds the inverse frequencies θ^(−2i/d), i < d/2, in float32
// (rescaled for llama3 rope scaling, rope.go).
type rotary struct {
	invFreq *torch.Tensor // (Dh/2)
}

func newRotary(cfg Config, dev torch.Device) rotary {
	s := torch.NewScope()
	defer s.Close()
	// computed as transformers does: float32 θ ** (arange(0, d, 2) / d)
	exps := torch.Arange(0, float64(cfg.HeadDim), 2, torch.Int64, dev).ToDType(torch.Float32).DivScalar(float64(cfg.HeadDim))
	base := torch.Full(nil, cfg.RopeTheta, torch.Float32, dev)
	invFreq := base.Pow(exps).Reciprocal() // (Dh/2)
	if cfg.RopeScaling != nil {            // llama3 (rope.go)
		invFreq = torch.FromFloat32(cfg.RopeScaling.scale(invFreq.Float32s()), invFreq.Size(0)).To(dev, torch.Float32)
	}
	return rotary{invFreq: s.Keep(invFreq).Untrack()}
}

// table returns cos and sin (..., Dh) for integer positions of any shape, in
// dt, sin sign-folded as torch.RoPE takes it: cat(−sin, sin) of the
// frequencies where Hugging Face has cat(sin, sin).
func (r rotary) table(positions *torch.Tensor, dt torch.DType) (cos, sinSigned *torch.Tensor) {
	freqs := positions.ToDType(torch.Float32).Unsqueeze(-1).Mul(r.invFreq) // (...,Dh/2)
	emb := torch.Cat([]*torch.Tensor{freqs, freqs}, -1)                    // (...,Dh)
	// sin and cos over the full width, as transformers computes them: over
	// the half width, vectorised kernels can round the last bit differently
	sin := emb.Sin()
	half := emb.Size(-1) / 2
	sinSigned = torch.Cat([]*torch.Tensor{sin.Narrow(-1, 0, half).Neg(), sin.Narrow(-1, half, half)}, -1)
	return emb.Cos().ToDType(dt), sinSigned.ToDType(dt)
}

// cosSin returns the (B, 1, T, Dh) tables for integer positions (B, T), in
// dt (sin sign-folded).
func (r rotary) cosSin(positions *torch.Tensor, dt torch.DType) (cos, sin *torch.Tensor) {
	cos, sin = r.table(positions, dt) // (B,T,Dh)
	return cos.Unsqueeze(1), sin.Unsqueeze(1)
}

// Linear is y = x·Wᵀ (+ B), plus the routed adapter's low-rank update
// when adapters are attached (lora.go).
type Linear struct {
	W *torch.Tensor // (out, in)
	B *torch.Tensor // (out) or nil

	lora *loraSite // the attached adapters' updates; nil: none
}

func (l Linear) forward(x *torch.Tensor, rt route) *torch.Tensor {
	return l.adapt(torch.Linear(x, l.W, l.B), x, rt)
}

// adapt adds the routed adapter's update of input x to y = x·Wᵀ (+ B).
func (l Linear) adapt(y, x *torch.Tensor, rt route) *torch.Tensor {
	if d := l.lora.delta(x, rt); d != nil {
		y = y.Add(d)
	}
	return y
}

// fusedForward applies the projections ls, whose weights (and biases) are
// consecutive row blocks of whole, to x and returns each one's output: one
// GEMM sliced along the last dimension when fused (generation) and whole
// exists, otherwise one GEMM per projection (see the file header).
func fusedForward(whole Linear, fused bool, x *torch.Tensor, rt route, ls ...*Linear) []*torch.Tensor {
	out := make([]*torch.Tensor, len(ls))
	if !fused || whole.W == nil {
		for i, l := range ls {
			out[i] = l.forward(x, rt)
		}
		return out
	}
	y := torch.Linear(x, whole.W, whole.B) // (…, Σ out)
	var at int64
	for i, l := range ls {
		n := l.W.Size(0)
		out[i] = l.adapt(y.Narrow(-1, at, n), x, rt) // (…, out_i)
		at += n
	}
	return out
}

// Attention is grouped-query self-attention with rotary embedding; Qwen3
// adds an RMSNorm over each head's q and k before the rotation.
type Attention struct {
	Q, K, V, O   Linear
	QNorm, KNorm *RMSNorm // Qwen3 only
	qkv          Linear   // Q, K and V's rows in one tensor (fuse); W nil: not fused
	heads        int64
	kvHeads      int64
	headDim      int64
}

// project returns x's query, key and value projections (…, H·Dh),
// (…, KVH·Dh), (…, KVH·Dh), through the routed adapters; fused for
// generation.
func (a *Attention) project(x *torch.Tensor, rt route, fused bool) (q, k, v *torch.Tensor) {
	o := fusedForward(a.qkv, fused, x, rt, &a.Q, &a.K, &a.V)
	return o[0], o[1], o[2]
}

// Forward maps x (B, T, D) to (B, T, D). cos/sin are (B, 1, T, Dh); mask is
// (B, 1, T, S) bool. With a cache layer, k and v of the T new positions are
// written at slots [past, past+T) and attention runs over all past+T slots.
func (a *Attention) forward(x, cos, sin, mask *torch.Tensor, layer *cacheLayer, rt route) *torch.Tensor {
	shape := x.Shape()
	B, T := shape[0], shape[1]
	q, k, v := a.project(x, rt, layer != nil) // generation writes a cache
	q = q.View(B, T, a.heads, a.headDim)      // (B,T,H,Dh)
	k = k.View(B, T, a.kvHeads, a.headDim)    // (B,T,KVH,Dh)
	v = v.View(B, T, a.kvHeads, a.headDim)
	if a.QNorm != nil {
		q = a.QNorm.Forward(q)
		k = a.KNorm.Forward(k)
	}
	q = torch.RoPE(q.Transpose(1, 2), cos, sin) // (B,H,T,Dh)
	k = torch.RoPE(k.Transpose(1, 2), cos, sin) // (B,KVH,T,Dh)
	v = v.Transpose(1, 2)
	if layer != nil {
		k, v = layer.append(k, v) // (B,KVH,S,Dh)
	}
	if rep := a.heads / a.kvHeads; rep > 1 {
		k = k.RepeatInterleave(rep, 1) // (B,H,S,Dh)
		v = v.RepeatInterleave(rep, 1)
	}
	out := torch.ScaledDotProductAttention(q, k, v, torch.Attention{Mask: mask}) // (B,H,T,Dh)
	return a.O.forward(out.Transpose(1, 2).Reshape(B, T, a.heads*a.headDim), rt)
}

// MLP is the SwiGLU feed-forward: down(silu(gate(x)) · up(x)).
type MLP struct {
	Gate, Up, Down Linear
	gateUp         Linear // Gate and Up's rows in one tensor (fuse); W nil: not fused
}

// forward maps x (…, D) to (…, D); fused for generation.
func (m *MLP) forward(x *torch.Tensor, rt route, fused bool) *torch.Tensor {
	o := fusedForward(m.gateUp, fused, x, rt, &m.Gate, &m.Up) // (…,F) each
	return m.Down.forward(o[0].Silu().Mul(o[1]), rt)
}

// Block is one pre-norm decoder layer.
type Block struct {
	InputNorm RMSNorm
	Attn      Attention
	PostNorm  RMSNorm
	MLP       MLP
}

func (b *Block) forward(x, cos, sin, mask *torch.Tensor, layer *cacheLayer, rt route) *torch.Tensor {
	h := x.Add(b.Attn.forward(b.InputNorm.Forward(x), cos, sin, mask, layer, rt))
	return h.Add(b.MLP.forward(b.PostNorm.Forward(h), rt, layer != nil))
}

// Model is a causal language model of one of the families.
type Model struct {
	Config Config
	Embed  *torch.Tensor // model.embed_tokens.weight (V, D)
	Layers []*Block      // model.layers.N
	Norm   RMSNorm       // model.norm
	LMHead *torch.Tensor // lm_head.weight (V, D); the same tensor as Embed when tied

	rope   rotary
	dtype  torch.DType
	device torch.Device

	adapters []*Adapter // attached to this base, by slot (nil: freed)
	adapter  *Adapter   // an adapter's view: the adapter every forward routes through
	base     *Model     // an adapter's view: the base model

	version uint64 // bumped by MarkUpdated (base models only)

	layerHook LayerHook // around the training passes' use of each layer (layerhook.go)
}

// MarkUpdated tells the model that its weights (or, for an adapter's view,
// the adapter's) were changed in place, so keys and values computed before
// (the engines' prefix caches) are stale. Whoever changes weights calls it:
// the optimizer steps of the trainer and of SFT do.
func (m *Model) MarkUpdated() { m.root().version++ }

// Version counts MarkUpdated calls: what the engines compare.
func (m *Model) Version() uint64 { return m.root().version }

// Adapter is the adapter a view routes through; nil for a base model.
func (m *Model) Adapter() *Adapter {
	if m == nil {
		return nil
	}
	return m.adapter
}

// DType is the dtype of the weights and of the forward computation.
func (m *Model) DType() torch.DType { return m.dtype }

// Device is where the weights live.
func (m *Model) Device() torch.Device { return m.device }

// hidden runs the decoder over ids/positions (B, T) and returns the final
// normalised hidden states (B, T, D). keyValid (B, S) marks the real slots
// among the S = past+T keys; cache, when given, holds the past and receives
// the new keys and values; rt routes the rows through adapters.
func (m *Model) hidden(ids, positions, keyValid *torch.Tensor, cache *KVCache, rt route) *torch.Tensor {
	T := ids.Size(1)
	x := torch.Embedding(m.Embed, ids) // (B,T,D)
	cos, sin := m.rope.cosSin(positions, m.dtype)
	mask := attentionMask(keyValid, T)
	for i, blk := range m.Layers {
		var layer *cacheLayer
		if cache != nil {
			layer = &cache.layers[i]
		}
		s := torch.NewScope() // the block's intermediates go with it (autograd keeps what it needs)
		x = s.Keep(blk.forward(x, cos, sin, mask, layer, rt))
		s.Close()
	}
	if cache != nil {
		cache.advance(T)
	}
	return m.Norm.Forward(x)
}

// Logits runs a full forward over a padded batch and returns (B, T, V)
// logits in the model dtype. Meant for tests and small batches: training
// uses TokenLogProbs, which never materialises all of them at once.
func (m *Model) Logits(in Input) (logits *torch.Tensor, err error) {
	defer torch.Recover(&err)
	s := torch.NewScope()
	defer s.Close()
	B, _ := in.Shape()
	h := m.hidden(in.IDs, in.Positions, in.Valid, nil, m.routeRows(in.Adapters, B, 1))
	return s.Keep(torch.Linear(h, m.LMHead, nil)), nil
}
