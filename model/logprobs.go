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
	// Entropy also returns the entropy of each selected position's
	// distribution; its backward pass runs only when a loss uses it.
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
	s := torch.NewScope()
	defer s.Close()
	h := m.hidden(in.IDs, in.Positions, in.Valid, nil, m.routeRows(in.Adapters, B, 1)) // (B,T,D)
	lp, ent := m.selectedLogProbs(h.Reshape(B*T, h.Size(2)), targets.Reshape(B*T), mask.Reshape(B*T), opt)
	logp = s.Keep(lp.Reshape(B, T))
	if opt.Entropy {
		entropy = s.Keep(ent.Reshape(B, T))
	}
	return logp, entropy, nil
}

// PackedTokenLogProbs is TokenLogProbs for a packed batch (packed.go): the
// log-probability of targets[i] given the tokens of position i's sequence up
// to i, at every position where mask is true, as (N) float32 tensors that
// are zero elsewhere. targets and mask are (N) on the model's device.
func (m *Model) PackedTokenLogProbs(p Packed, targets, mask *torch.Tensor, opt LogProbOptions) (logp, entropy *torch.Tensor, err error) {
	defer torch.Recover(&err)
	N := p.Tokens()
	for _, t := range []struct {
		name string
		x    *torch.Tensor
	}{{"targets", targets}, {"mask", mask}} {
		if s := t.x.Shape(); len(s) != 1 || s[0] != N {
			return nil, nil, fmt.Errorf("model: packed %s shape %v, want [%d]", t.name, s, N)
		}
	}
	s := torch.NewScope()
	defer s.Close()
	lp, ent := m.selectedLogProbs(m.packedHidden(p, nil), targets, mask, opt)
	logp = s.Keep(lp)
	if opt.Entropy {
		entropy = s.Keep(ent)
	}
	return logp, entropy, nil
}

// selectedLogProbs projects the hidden states h (M, D) at the positions
// where mask (M) is true onto the vocabulary, Chunk at a time, and returns
// the log-probs of targets (M) there (and the entropies when asked) as (M)
// float32 tensors, zero elsewhere.
func (m *Model) selectedLogProbs(h, targets, mask *torch.Tensor, opt LogProbOptions) (logp, entropy *torch.Tensor) {
	chunk := int64(opt.Chunk)
	if chunk <= 0 {
		chunk = 1024
	}
	M := h.Size(0)
	idx := torch.Arange(0, float64(M), 1, torch.Int64, m.device) // (M)
	sel := idx.MaskedSelect(mask)                                // (N)
	N := sel.Size(0)
	var lp, ent *torch.Tensor
	if N > 0 {
		lp, ent = torch.LinearTokenLogProbs(h.IndexSelect(0, sel), m.LMHead, targets.IndexSelect(0, sel), opt.Temperature, chunk, opt.Entropy) // (N)
	}
	scatter := func(vals *torch.Tensor) *torch.Tensor {
		out := torch.Zeros([]int64{M}, torch.Float32, m.device)
		if N == 0 {
			return out
		}
		return out.IndexPut([]*torch.Tensor{sel}, vals.ToDType(torch.Float32), false)
	}
	logp = scatter(lp)
	if opt.Entropy {
		entropy = scatter(ent)
	}
	return logp, entropy
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
