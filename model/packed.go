package model

// packed.go — the forward pass over sequences laid end to end without
// padding (flash attention's variable-length layout). The policy update packs
// its micro-batches this way and the generation engine prefills prompts this
// way: no padded position costs work and no attention mask is built, because
// attention runs through torch.VarlenAttention with the sequences' offsets.
//
// The math is the decoder of qwen.go, position for position: a packed
// forward equals the padded one at every real token (packed_test.go).

import (
	"fmt"

	"troupe/torch"
)

// Packed is a batch of token sequences laid end to end, on one device.
type Packed struct {
	IDs       *torch.Tensor // (N) int64: every sequence's ids, one after the other
	Positions *torch.Tensor // (N) int64 RoPE positions, 0 at each sequence's first token
	CuSeqLens *torch.Tensor // (B+1) int32 offsets: sequence b is [CuSeqLens[b], CuSeqLens[b+1])
	Lens      []int         // per-sequence lengths (host copy)
	MaxLen    int64         // the longest sequence
	// Adapters routes sequence b through Adapters[b], as Input.Adapters.
	Adapters []*Adapter
}

// PackSequences lays seqs end to end on dev. Empty sequences are refused.
func PackSequences(seqs [][]int, dev torch.Device) (p Packed, err error) {
	defer torch.Recover(&err)
	if len(seqs) == 0 {
		return Packed{}, fmt.Errorf("model: empty batch")
	}
	var ids, pos []int64
	cu := make([]int32, 1, len(seqs)+1)
	lens := make([]int, len(seqs))
	for i, s := range seqs {
		if len(s) == 0 {
			return Packed{}, fmt.Errorf("model: sequence %d is empty", i)
		}
		for j, tok := range s {
			ids = append(ids, int64(tok))
			pos = append(pos, int64(j))
		}
		cu = append(cu, cu[i]+int32(len(s)))
		lens[i] = len(s)
		p.MaxLen = max(p.MaxLen, int64(len(s)))
	}
	s := torch.NewScope()
	defer s.Close()
	p.IDs = s.Keep(torch.FromInt64(ids).ToDevice(dev))
	p.Positions = s.Keep(torch.FromInt64(pos).ToDevice(dev))
	p.CuSeqLens = s.Keep(torch.FromInt32(cu).ToDevice(dev))
	p.Lens = lens
	return p, nil
}

// Tokens is N, the total number of tokens.
func (p Packed) Tokens() int64 { return p.IDs.Size(0) }

// Free releases the tensors.
func (p Packed) Free() { torch.FreeAll(p.IDs, p.Positions, p.CuSeqLens) }

// KVSink, when passed to a packed forward, receives every layer's keys and
// values after the rotary embedding, each (N, KVH, Dh) in the model dtype —
// what a KV cache stores. They belong to the forward pass and are freed with
// it: copy what you keep (the engine's prefill copies them into its slots).
type KVSink func(layer int, k, v *torch.Tensor)

// forwardPacked maps x (N, D) to (N, D); cos/sin are (N, 1, Dh).
func (a *Attention) forwardPacked(x, cos, sin *torch.Tensor, p Packed, sink KVSink, layer int, rt route) *torch.Tensor {
	N := x.Size(0)
	q, k, v := a.project(x, rt, false)
	q = q.View(N, a.heads, a.headDim)   // (N,H,Dh)
	k = k.View(N, a.kvHeads, a.headDim) // (N,KVH,Dh)
	v = v.View(N, a.kvHeads, a.headDim)
	if a.QNorm != nil {
		q = a.QNorm.Forward(q)
		k = a.KNorm.Forward(k)
	}
	q = torch.RoPE(q, cos, sin)
	k = torch.RoPE(k, cos, sin)
	if sink != nil {
		sink(layer, k, v)
	}
	out := torch.VarlenAttention(q, k, v, torch.Varlen{
		CuQ: p.CuSeqLens, CuK: p.CuSeqLens, MaxQ: p.MaxLen, MaxK: p.MaxLen, Causal: true,
	}) // (N,H,Dh)
	return a.O.forward(out.Reshape(N, a.heads*a.headDim), rt)
}

func (b *Block) forwardPacked(x, cos, sin *torch.Tensor, p Packed, sink KVSink, layer int, rt route) *torch.Tensor {
	h := x.Add(b.Attn.forwardPacked(b.InputNorm.Forward(x), cos, sin, p, sink, layer, rt))
	return h.Add(b.MLP.forward(b.PostNorm.Forward(h), rt, false))
}

// packedHidden runs the decoder over a packed batch and returns the final
// normalised hidden states (N, D).
func (m *Model) packedHidden(p Packed, sink KVSink) *torch.Tensor {
	x := torch.Embedding(m.Embed, p.IDs) // (N,D)
	cos, sin := m.rope.table(p.Positions, m.dtype)
	cos, sin = cos.Unsqueeze(1), sin.Unsqueeze(1) // (N,1,Dh)
	rt := m.packedRoute(p)
	for i, blk := range m.Layers {
		m.layer(i, LayerEnter)
		s := torch.NewScope() // the block's intermediates go with it (autograd keeps what it needs)
		x = s.Keep(blk.forwardPacked(x, cos, sin, p, sink, i, rt))
		s.Close()
		m.layer(i, LayerLeave)
	}
	return m.Norm.Forward(x)
}

// PackedHidden returns the final hidden states (N, D) of a packed batch;
// sink (may be nil) receives every layer's keys and values.
func (m *Model) PackedHidden(p Packed, sink KVSink) (h *torch.Tensor, err error) {
	defer torch.Recover(&err)
	s := torch.NewScope()
	defer s.Close()
	return s.Keep(m.packedHidden(p, sink)), nil
}

// PackedLogits returns the (N, V) logits of a packed batch in the model
// dtype. Meant for tests and small batches.
func (m *Model) PackedLogits(p Packed) (logits *torch.Tensor, err error) {
	defer torch.Recover(&err)
	s := torch.NewScope()
	defer s.Close()
	return s.Keep(torch.Linear(m.packedHidden(p, nil), m.LMHead, nil)), nil
}

// packedRoute routes each packed token through its sequence's adapter.
func (m *Model) packedRoute(p Packed) route {
	if p.Adapters == nil {
		return m.ownRoute()
	}
	perToken := make([]*Adapter, 0, p.Tokens())
	for b, n := range p.Lens {
		for range n {
			perToken = append(perToken, p.Adapters[b])
		}
	}
	return m.routeRows(perToken, int64(len(perToken)))
}
