package model

// logprobs.go — per-token log-probabilities for the policy update.
//
// The update needs log π(y_t | y_<t) only at response tokens. Rather than
// projecting every position onto the vocabulary, TokenLogProbs selects the
// hidden states of the requested positions first and projects them in
// chunks, so at most Chunk × V logits exist per chunk in the forward pass.
// (Autograd still keeps each chunk's float32 logits for the backward pass; a
// fused projection-and-log-softmax with recomputation would remove that too.)

import (
	"fmt"

	"troupe/torch"
)

// LogProbOptions controls TokenLogProbs.
type LogProbOptions struct {
	// Temperature divides the logits first, as the sampler did (0 or 1: none).
	Temperature float64
	// Entropy also returns the entropy of each selected position's distribution.
	Entropy bool
	// Chunk is the number of positions projected onto the vocabulary at once
	// (0: 1024).
	Chunk int
}

// TokenLogProbs returns, for a right- or left-padded batch, the
// log-probability of targets[b, t] given ids[b, ≤t] at every position where
// mask is true, as (B, T) float32 tensors that are zero elsewhere (and the
// entropy likewise when asked). targets and mask are (B, T) on the model's
// device; typically targets are the ids shifted left by one and mask marks
// the response tokens' predecessors. Differentiable with respect to the
// weights.
func (m *Model) TokenLogProbs(in Input, targets, mask *torch.Tensor, opt LogProbOptions) (logp, entropy *torch.Tensor, err error) {
	defer torch.Recover(&err)
	B, T := in.Shape()
	if s := targets.Shape(); len(s) != 2 || s[0] != B || s[1] != T {
		return nil, nil, fmt.Errorf("model: targets shape %v, want [%d %d]", s, B, T)
	}
	if s := mask.Shape(); len(s) != 2 || s[0] != B || s[1] != T {
		return nil, nil, fmt.Errorf("model: mask shape %v, want [%d %d]", s, B, T)
	}
	chunk := int64(opt.Chunk)
	if chunk <= 0 {
		chunk = 1024
	}
	s := torch.NewScope()
	defer s.Close()
	h := m.hidden(in.IDs, in.Positions, in.Valid, nil)             // (B,T,D)
	flatMask := mask.Reshape(B * T)                                // (B·T)
	idx := torch.Arange(0, float64(B*T), 1, torch.Int64, m.device) // (B·T)
	sel := idx.MaskedSelect(flatMask)                              // (N)
	N := sel.Size(0)
	hs := h.Reshape(B*T, h.Size(2)).IndexSelect(0, sel) // (N,D)
	tg := targets.Reshape(B*T).IndexSelect(0, sel)      // (N)
	var lps, ents []*torch.Tensor
	for start := int64(0); start < N; start += chunk {
		n := min(chunk, N-start)
		logits := torch.Linear(hs.Narrow(0, start, n), m.LMHead, nil) // (n,V)
		if opt.Temperature > 0 && opt.Temperature != 1 {
			logits = logits.DivScalar(opt.Temperature)
		}
		lp, ent := torch.TokenLogProbs(logits, tg.Narrow(0, start, n), opt.Entropy)
		lps = append(lps, lp)
		ents = append(ents, ent)
	}
	scatter := func(parts []*torch.Tensor) *torch.Tensor {
		out := torch.Zeros([]int64{B * T}, torch.Float32, m.device)
		if N == 0 {
			return out.Reshape(B, T)
		}
		vals := torch.Cat(parts, 0)
		return out.IndexPut([]*torch.Tensor{sel}, vals.ToDType(torch.Float32), false).Reshape(B, T)
	}
	logp = s.Keep(scatter(lps))
	if opt.Entropy {
		entropy = s.Keep(scatter(ents))
	}
	return logp, entropy, nil
}

// ShiftTargets builds, for a padded batch, the next-token targets (B, T):
// targets[b, t] = ids[b, t+1], and 0 in the last column.
func ShiftTargets(in Input) *torch.Tensor {
	B, T := in.Shape()
	if T == 1 {
		return torch.Zeros([]int64{B, 1}, torch.Int64, in.IDs.Device())
	}
	next := in.IDs.Narrow(1, 1, T-1)
	pad := torch.Zeros([]int64{B, 1}, torch.Int64, in.IDs.Device())
	return torch.Cat([]*torch.Tensor{next, pad}, 1)
}
