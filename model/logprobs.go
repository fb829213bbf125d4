package model

// logprobs.go — per-token log-probabilities for the policy update.
//
// The update needs log π(y_t | y_<t) only at response tokens. TokenLogProbs
// selects the hidden states of the requested positions first, then projects
// them onto the vocabulary with torch.LinearTokenLogProbs: Chunk positions
// at a time, and without autograd keeping the float32 logits — the backward
// pass recomputes each chunk's. So no (N, V) float32 tensor ever exists, and
// the memory of the projection is Chunk × V per pass whatever the batch.

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
	h := m.hidden(in.IDs, in.Positions, in.Valid, nil, m.routeRows(in.Adapters, B, 1)) // (B,T,D)
	flatMask := mask.Reshape(B * T)                                                    // (B·T)
	idx := torch.Arange(0, float64(B*T), 1, torch.Int64, m.device)                     // (B·T)
	sel := idx.MaskedSelect(flatMask)                                                  // (N)
	N := sel.Size(0)
	hs := h.Reshape(B*T, h.Size(2)).IndexSelect(0, sel) // (N,D)
	tg := targets.Reshape(B*T).IndexSelect(0, sel)      // (N)
	var lp, ent *torch.Tensor
	if N > 0 {
		lp, ent = torch.LinearTokenLogProbs(hs, m.LMHead, tg, opt.Temperature, chunk, opt.Entropy) // (N)
	}
	scatter := func(vals *torch.Tensor) *torch.Tensor {
		out := torch.Zeros([]int64{B * T}, torch.Float32, m.device)
		if N == 0 {
			return out.Reshape(B, T)
		}
		return out.IndexPut([]*torch.Tensor{sel}, vals.ToDType(torch.Float32), false).Reshape(B, T)
	}
	logp = s.Keep(scatter(lp))
	if opt.Entropy {
		entropy = s.Keep(scatter(ent))
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
