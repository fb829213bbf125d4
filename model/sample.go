package model

// sample.go — choosing the next token for a batch of rows, each with its own
// repetition penalty, temperature, top-k and top-p, in a handful of batched
// ops.
//
// Order of the processors, as in Hugging Face generate: repetition penalty,
// then temperature, then top-k, then top-p (the nucleus is taken over the
// top-k-filtered, temperature-scaled distribution; the most likely token is
// always kept). The repetition penalty is transformers'
// RepetitionPenaltyLogitsProcessor (and vLLM's): the logit z of every token
// already in the row (prompt and response so far) becomes z/p when z > 0
// and z·p otherwise (z = 0 included: 0·p = 0/p). The returned
// log-probability of a sampled token is under the temperature-scaled
// distribution without the penalty or top-k/top-p filtering — the same
// quantity the policy update recomputes as "old log-probs". Greedy rows
// (temperature 0) take the argmax (of the penalised logits) and report its
// log-probability at temperature 1.

import (
	"fmt"
	"math"

	"troupe/gen"
	"troupe/torch"
)

// Sampling is one row's decoding parameters (gen.Sampling): temperature
// 0 = greedy, top-k 0 = off, top-p 1 (or 0) = off, repetition penalty 1 (or
// 0) = off.
type Sampling = gen.Sampling

func validateSampling(s Sampling) error {
	switch {
	case s.Temperature < 0 || math.IsNaN(s.Temperature):
		return fmt.Errorf("temperature must be ≥ 0 (0 = greedy), got %g", s.Temperature)
	case s.TopK < 0:
		return fmt.Errorf("top_k must be ≥ 0 (0 = off), got %d", s.TopK)
	case s.TopP < 0 || s.TopP > 1 || math.IsNaN(s.TopP):
		return fmt.Errorf("top_p must be in [0, 1] (0 or 1 = off), got %g", s.TopP)
	case s.RepetitionPenalty < 0 || math.IsNaN(s.RepetitionPenalty) || math.IsInf(s.RepetitionPenalty, 0):
		return fmt.Errorf("repetition_penalty must be a finite number > 0 (0 or 1 = off), got %g", s.RepetitionPenalty)
	}
	return nil
}

// rowParams are the per-row sampling parameters as (n, 1) tensors.
type rowParams struct {
	greedy *torch.Tensor // (n) bool
	temp   *torch.Tensor // (n,1) f32, 1 for greedy rows
	topK   *torch.Tensor // (n,1) i64, V when off
	topP   *torch.Tensor // (n,1) f32, >1 when off
	// penalty is each row's repetition penalty, 1 when off; nil when no row
	// has one (anyPenalty false).
	penalty *torch.Tensor // (n,1) f32
	// seen marks the tokens already in each row (prompt and response so
	// far); the caller keeps it current (Generate: markSeen after every
	// step). Read only when anyPenalty.
	seen       *torch.Tensor // (n,V) bool
	anyPenalty bool
	anySample  bool
	anyFilter  bool
	allGreedy  bool
	vocabSize  int64
}

func newRowParams(ss []Sampling, vocab int64, dev torch.Device) rowParams {
	n := len(ss)
	greedy := make([]bool, n)
	temp := make([]float32, n)
	topK := make([]int64, n)
	topP := make([]float32, n)
	p := rowParams{vocabSize: vocab, allGreedy: true}
	penalty := make([]float32, n)
	for i, s := range ss {
		penalty[i] = 1
		if s.Penalised() {
			penalty[i], p.anyPenalty = float32(s.RepetitionPenalty), true
		}
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
	if p.anyPenalty {
		p.penalty = torch.FromFloat32(penalty, int64(n), 1).ToDevice(dev)
	}
	return p
}

// seenTokens marks, per row, the tokens of ids (one list per row) in an
// (n, V) bool tensor on dev.
func seenTokens(ids [][]int, vocab int64, dev torch.Device) *torch.Tensor {
	var rows, cols []int64
	for i, r := range ids {
		for _, id := range r {
			rows, cols = append(rows, int64(i)), append(cols, int64(id))
		}
	}
	seen := torch.Zeros([]int64{int64(len(ids)), vocab}, torch.Bool, dev)
	if len(rows) == 0 {
		return seen
	}
	at := []*torch.Tensor{torch.FromInt64(rows).ToDevice(dev), torch.FromInt64(cols).ToDevice(dev)}
	return seen.IndexPut(at, torch.Ones([]int64{int64(len(rows))}, torch.Bool, dev), false)
}

// markSeen returns seen (n, V) with each row's token tok (n) marked.
func markSeen(seen, tok *torch.Tensor) *torch.Tensor {
	n := tok.Size(0)
	return seen.Scatter(1, tok.Unsqueeze(1), torch.Ones([]int64{n, 1}, torch.Bool, seen.Device()))
}

// penalise applies each row's repetition penalty to logits (n, V) over the
// row's seen tokens: z/p where z > 0, z·p elsewhere.
func penalise(logits *torch.Tensor, p rowParams) *torch.Tensor {
	if !p.anyPenalty {
		return logits
	}
	pen := torch.Where(logits.GtScalar(0), logits.Div(p.penalty), logits.Mul(p.penalty)) // (n,V)
	return torch.Where(p.seen, pen, logits)
}

// sampleNext draws one token per row of logits (n, V) (float32) and returns
// the tokens (n) int64 and their log-probabilities (n) float32.
func sampleNext(logits *torch.Tensor, p rowParams, g *torch.Generator) (tokens, logp *torch.Tensor) {
	drawn := penalise(logits, p)                                        // (n,V) what the draw uses
	greedyTok := drawn.Argmax(-1, true)                                 // (n,1)
	greedyLogp := logits.LogSoftmax(-1).Gather(1, greedyTok).Squeeze(1) // (n)
	if p.allGreedy {
		return greedyTok.Squeeze(1), greedyLogp
	}
	scaled, logProbs := scaledLogProbs(logits, drawn, p) // (n,V) each
	var tok *torch.Tensor                                // (n,1)
	if p.anyFilter {
		sorted, order, keep := keepSorted(scaled, p)
		filtered := sorted.MaskedFill(keep.LogicalNot(), math.Inf(-1)).Softmax(-1)
		tok = order.Gather(1, torch.Multinomial(filtered, 1, false, g))
	} else {
		drawnLogProbs := logProbs
		if p.anyPenalty {
			drawnLogProbs = scaled.LogSoftmax(-1)
		}
		tok = torch.Multinomial(drawnLogProbs.Exp(), 1, false, g)
	}
	tok = torch.Where(p.greedy.Unsqueeze(1), greedyTok, tok)
	lp := torch.Where(p.greedy, greedyLogp, logProbs.Gather(1, tok).Squeeze(1))
	return tok.Squeeze(1), lp
}

// scaledLogProbs returns the temperature-scaled logits the draw uses (the
// penalised ones) and the log-probs reported for the drawn token
// (temperature only); without a penalty the two share one division.
func scaledLogProbs(logits, drawn *torch.Tensor, p rowParams) (scaled, logProbs *torch.Tensor) {
	scaled = drawn.Div(p.temp)
	if !p.anyPenalty {
		return scaled, scaled.LogSoftmax(-1)
	}
	return scaled, logits.Div(p.temp).LogSoftmax(-1)
}

// keepSorted sorts scaled logits (n, V) in descending order and returns,
// in that order, which tokens top-k and then top-p keep (the nucleus over
// the top-k-filtered distribution; the most likely token is always kept).
func keepSorted(scaled *torch.Tensor, p rowParams) (sorted, order, keep *torch.Tensor) {
	sorted, order = scaled.Sort(-1, true)
	rank := torch.Arange(0, float64(p.vocabSize), 1, torch.Int64, scaled.Device()).Unsqueeze(0) // (1,V)
	keep = rank.Lt(p.topK)
	probs := sorted.MaskedFill(keep.LogicalNot(), math.Inf(-1)).Softmax(-1)
	before := probs.Cumsum(-1).Sub(probs) // probability mass ranked above each token
	return sorted, order, keep.LogicalAnd(before.Lt(p.topP))
}

// sampleUniform draws one token per row of logits (n, V) float32 by inverse
// CDF with the row's uniform u (n) in (0, 1), with the processors and the
// reported log-probs of sampleNext.
func sampleUniform(logits *torch.Tensor, p rowParams, u *torch.Tensor) (tokens, logp *torch.Tensor) {
	drawn := penalise(logits, p)
	greedyTok := drawn.Argmax(-1, true)                                 // (n,1)
	greedyLogp := logits.LogSoftmax(-1).Gather(1, greedyTok).Squeeze(1) // (n)
	if p.allGreedy {
		return greedyTok.Squeeze(1), greedyLogp
	}
	scaled, logProbs := scaledLogProbs(logits, drawn, p)
	probs := logProbs.Exp()
	if p.anyPenalty {
		probs = scaled.LogSoftmax(-1).Exp()
	}
	if p.anyFilter {
		// the kept set is found in sorted order and mapped back, so that the
		// inverse CDF always runs in vocabulary order: a row draws the same
		// token from the same uniform whether or not a row beside it filters
		_, order, keep := keepSorted(scaled, p)
		kept := torch.Zeros(probs.Shape(), probs.DType(), probs.Device()).Scatter(1, order, keep.ToDType(probs.DType()))
		probs = probs.Mul(kept)
	}
	tok := inverseCDF(probs, u, p.vocabSize) // (n,1)
	tok = torch.Where(p.greedy.Unsqueeze(1), greedyTok, tok)
	lp := torch.Where(p.greedy, greedyLogp, logProbs.Gather(1, tok).Squeeze(1))
	return tok.Squeeze(1), lp
}

// inverseCDF returns, per row of probs (n, V), the first index whose
// cumulative probability reaches u·total, as (n, 1) int64. The sum runs in
// float64 so the tail of a 150k-entry vocabulary keeps its mass.
func inverseCDF(probs, u *torch.Tensor, vocab int64) *torch.Tensor {
	cdf := probs.ToDType(torch.Float64).Cumsum(-1)
	target := u.ToDType(torch.Float64).Unsqueeze(1).Mul(cdf.Narrow(1, vocab-1, 1))
	return cdf.Lt(target).ToDType(torch.Float64).SumDim(1, true).ClampMax(float64(vocab - 1)).ToDType(torch.Int64)
}

// uniformAt is the t-th uniform of seed's stream, in (0, 1), exactly
// representable in float32: (k + ½) / 2²⁴ with k from splitmix64.
func uniformAt(seed uint64, t int) float32 {
	z := seed + uint64(t+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return (float32(z>>40) + 0.5) / (1 << 24)
}
