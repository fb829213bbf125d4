package model

// sample.go — choosing the next token for a batch of rows, each with its own
// temperature, top-k and top-p, in a handful of batched ops.
//
// Order of the processors, as in Hugging Face generate: temperature, then
// top-k, then top-p (the nucleus is taken over the top-k-filtered,
// temperature-scaled distribution; the most likely token is always kept).
// The returned log-probability of a sampled token is under the
// temperature-scaled distribution before top-k/top-p filtering — the same
// quantity the policy update recomputes as "old log-probs". Greedy rows
// (temperature 0) take the argmax and report its log-probability at
// temperature 1.

import (
	"fmt"
	"math"

	"troupe/torch"
)

// Sampling is one row's decoding parameters.
type Sampling struct {
	Temperature float64 // 0 = greedy
	TopK        int     // 0 = off
	TopP        float64 // 1 (or 0) = off
}

func (s Sampling) validate() error {
	switch {
	case s.Temperature < 0 || math.IsNaN(s.Temperature):
		return fmt.Errorf("temperature must be ≥ 0 (0 = greedy), got %g", s.Temperature)
	case s.TopK < 0:
		return fmt.Errorf("top_k must be ≥ 0 (0 = off), got %d", s.TopK)
	case s.TopP < 0 || s.TopP > 1 || math.IsNaN(s.TopP):
		return fmt.Errorf("top_p must be in [0, 1] (0 or 1 = off), got %g", s.TopP)
	}
	return nil
}

// rowParams are the per-row sampling parameters as (n, 1) tensors.
type rowParams struct {
	greedy    *torch.Tensor // (n) bool
	temp      *torch.Tensor // (n,1) f32, 1 for greedy rows
	topK      *torch.Tensor // (n,1) i64, V when off
	topP      *torch.Tensor // (n,1) f32, >1 when off
	anySample bool
	anyFilter bool
	allGreedy bool
	vocabSize int64
}

func newRowParams(ss []Sampling, vocab int64, dev torch.Device) rowParams {
	n := len(ss)
	greedy := make([]bool, n)
	temp := make([]float32, n)
	topK := make([]int64, n)
	topP := make([]float32, n)
	p := rowParams{vocabSize: vocab, allGreedy: true}
	for i, s := range ss {
		greedy[i] = s.Temperature == 0
		temp[i], topK[i], topP[i] = 1, vocab, 2
		if greedy[i] {
			continue
		}
		p.anySample, p.allGreedy = true, false
		temp[i] = float32(s.Temperature)
		if s.TopK > 0 && int64(s.TopK) < vocab {
			topK[i] = int64(s.TopK)
			p.anyFilter = true
		}
		if s.TopP > 0 && s.TopP < 1 {
			topP[i] = float32(s.TopP)
			p.anyFilter = true
		}
	}
	p.greedy = torch.FromBool(greedy).ToDevice(dev)
	p.temp = torch.FromFloat32(temp, int64(n), 1).ToDevice(dev)
	p.topK = torch.FromInt64(topK, int64(n), 1).ToDevice(dev)
	p.topP = torch.FromFloat32(topP, int64(n), 1).ToDevice(dev)
	return p
}

// sampleNext draws one token per row of logits (n, V) (float32) and returns
// the tokens (n) int64 and their log-probabilities (n) float32.
func sampleNext(logits *torch.Tensor, p rowParams, g *torch.Generator) (tokens, logp *torch.Tensor) {
	greedyTok := logits.Argmax(-1, true)                                // (n,1)
	greedyLogp := logits.LogSoftmax(-1).Gather(1, greedyTok).Squeeze(1) // (n)
	if p.allGreedy {
		return greedyTok.Squeeze(1), greedyLogp
	}
	scaled := logits.Div(p.temp)      // (n,V)
	logProbs := scaled.LogSoftmax(-1) // reported log-probs: temperature only
	var tok *torch.Tensor             // (n,1)
	if p.anyFilter {
		sorted, order := scaled.Sort(-1, true)                                                      // (n,V)
		rank := torch.Arange(0, float64(p.vocabSize), 1, torch.Int64, logits.Device()).Unsqueeze(0) // (1,V)
		keep := rank.Lt(p.topK)                                                                     // top-k
		probs := sorted.MaskedFill(keep.LogicalNot(), math.Inf(-1)).Softmax(-1)
		before := probs.Cumsum(-1).Sub(probs) // probability mass ranked above each token
		keep = keep.LogicalAnd(before.Lt(p.topP))
		filtered := sorted.MaskedFill(keep.LogicalNot(), math.Inf(-1)).Softmax(-1)
		tok = order.Gather(1, torch.Multinomial(filtered, 1, false, g))
	} else {
		tok = torch.Multinomial(logProbs.Exp(), 1, false, g)
	}
	tok = torch.Where(p.greedy.Unsqueeze(1), greedyTok, tok)
	lp := torch.Where(p.greedy, greedyLogp, logProbs.Gather(1, tok).Squeeze(1))
	return tok.Squeeze(1), lp
}
