package model

// generate.go — batched generation with a KV cache: one prefill over the
// left-padded prompts, then one decode step per token for every row still
// running. Rows finish on a stop token (kept in the output) or at their own
// max_new_tokens; once a quarter of the batch has finished, the cache is
// compacted to the running rows so finished rows stop costing work.

import (
	"fmt"

	"troupe/gen"
	"troupe/torch"
)

// The generation contract's types (package gen), under the names the
// engine's code uses: a request, its result, why it stopped. The engine
// (engine.go) is how a run generates; Generate below is the reference it is
// tested against (and the path of engine.enabled: false).
type (
	GenRequest = gen.Request
	GenResult  = gen.Result
	Finish     = gen.Finish
)

const (
	FinishStop   = gen.FinishStop   // produced a stop token
	FinishLength = gen.FinishLength // reached MaxNewTokens
)

// Generate samples continuations of every request in one batch. cache may be
// nil (one is allocated for the call); a cache passed in must fit
// len(reqs) rows of max(prompt) + max(max_new_tokens) tokens and is reused.
// g draws the random numbers (nil: the global generator); the same
// generator state and requests give the same tokens.
func (m *Model) Generate(reqs []GenRequest, cache *KVCache, g *torch.Generator) (out []GenResult, err error) {
	defer torch.Recover(&err)
	if len(reqs) == 0 {
		return nil, nil
	}
	maxPrompt, maxNew := 0, 0
	for i, r := range reqs {
		if err := m.checkRequest(r); err != nil {
			return nil, fmt.Errorf("model: generate: request %d: %w", i, err)
		}
		maxPrompt, maxNew = max(maxPrompt, len(r.Prompt)), max(maxNew, r.MaxNewTokens)
	}
	out = make([]GenResult, len(reqs))
	if maxNew == 0 {
		for i := range out {
			out[i].Finish = FinishLength
		}
		return out, nil
	}
	if cache == nil {
		if cache, err = m.NewCache(len(reqs), maxPrompt+maxNew); err != nil {
			return nil, err
		}
		defer cache.Free()
	} else if !cache.Fits(len(reqs), maxPrompt+maxNew) {
		return nil, fmt.Errorf("model: generate: cache holds %d rows × %d tokens, the batch needs %d × %d", cache.batch, cache.capacity, len(reqs), maxPrompt+maxNew)
	}
	torch.NoGrad(func() { m.generate(reqs, out, cache, g, maxPrompt) })
	return out, nil
}

// checkRequest validates one request against the model.
func (m *Model) checkRequest(r GenRequest) error {
	if len(r.Prompt) == 0 {
		return fmt.Errorf("empty prompt")
	}
	if r.MaxNewTokens < 0 {
		return fmt.Errorf("max_new_tokens must be ≥ 0, got %d", r.MaxNewTokens)
	}
	if err := validateSampling(r.Sampling); err != nil {
		return err
	}
	if max := m.Config.MaxPositions; max > 0 && len(r.Prompt)+r.MaxNewTokens > max {
		return fmt.Errorf("prompt %d + max_new_tokens %d = %d tokens exceeds the model's max_position_embeddings %d; shorten the prompt or lower max_new_tokens",
			len(r.Prompt), r.MaxNewTokens, len(r.Prompt)+r.MaxNewTokens, max)
	}
	for _, ids := range [][]int{r.Prompt, r.Stop} {
		for _, id := range ids {
			if id < 0 || id >= m.Config.VocabSize {
				return fmt.Errorf("token id %d outside the vocabulary [0, %d)", id, m.Config.VocabSize)
			}
		}
	}
	return nil
}

func (m *Model) generate(reqs []GenRequest, out []GenResult, cache *KVCache, g *torch.Generator, P int) {
	cache.reset()
	rows := make([]int, len(reqs)) // rows[i] = request index of batch row i
	next := make([]int64, len(reqs))
	for i := range reqs {
		rows[i] = i
		next[i] = int64(len(reqs[i].Prompt))
	}
	prompts := make([][]int, len(reqs))
	for i, r := range reqs {
		prompts[i] = r.Prompt
	}

	outer := torch.NewScope()
	defer outer.Close()
	in, err := Pack(prompts, PadLeft, m.device)
	if err != nil {
		panic(&torch.Error{Op: "generate", Msg: err.Error()})
	}
	B := int64(len(reqs))
	cache.valid.Narrow(0, 0, B).Narrow(1, 0, int64(P)).CopyFrom(in.Valid)
	h := m.hidden(in.IDs, in.Positions, cache.valid.Narrow(0, 0, B).Narrow(1, 0, int64(P)), cache, m.ownRoute())
	logits := torch.Linear(h.Narrow(1, int64(P-1), 1).Squeeze(1), m.LMHead, nil).ToDType(torch.Float32) // (B,V)
	params := m.params(reqs, rows)
	defer func() { params.free() }()
	var seen *torch.Tensor // (rows, V) bool: the tokens of each row so far, for the repetition penalty
	if params.anyPenalty {
		seen = own(seenTokens(prompts, int64(m.Config.VocabSize), m.device))
		defer func() { seen.Free() }()
		params.seen = seen
	}
	finished := make([]bool, len(reqs))
	stops := make([]map[int]bool, len(reqs))
	for i, r := range reqs {
		stops[i] = map[int]bool{}
		for _, s := range r.Stop {
			stops[i][s] = true
		}
	}

	for {
		s := torch.NewScope()
		tok, lp := sampleNext(logits, params, g)
		if seen != nil {
			next := own(markSeen(seen, tok))
			seen.Free()
			seen, params.seen = next, next
		}
		toks, lps := tok.Int64s(), lp.Float32s()
		var running []int // batch positions still running
		for i, req := range rows {
			if finished[req] {
				continue // finished earlier, not yet compacted away
			}
			o := &out[req]
			o.Tokens = append(o.Tokens, int(toks[i]))
			o.LogProbs = append(o.LogProbs, lps[i])
			switch {
			case stops[req][int(toks[i])]:
				o.Finish = FinishStop
			case len(o.Tokens) >= reqs[req].MaxNewTokens:
				o.Finish = FinishLength
			default:
				running = append(running, i)
				continue
			}
			finished[req] = true
		}
		if len(running) == 0 {
			s.Close()
			return
		}
		cur := int64(len(rows))
		ids := make([]int64, len(rows))
		pos := make([]int64, len(rows))
		for i, req := range rows {
			ids[i] = toks[i]
			pos[i] = next[req]
			next[req]++
		}
		idsT := torch.FromInt64(ids, cur, 1).ToDevice(m.device)
		posT := torch.FromInt64(pos, cur, 1).ToDevice(m.device)
		if done := len(rows) - len(running); done > 0 && done*4 >= len(rows) {
			keep := make([]int64, len(running))
			kept := make([]int, len(running))
			for j, i := range running {
				keep[j], kept[j] = int64(i), rows[i]
			}
			keepT := torch.FromInt64(keep).ToDevice(m.device)
			cache.keepRows(keepT, cur)
			idsT, posT = idsT.IndexSelect(0, keepT), posT.IndexSelect(0, keepT)
			rows, cur = kept, int64(len(kept))
			params.free()
			params = m.params(reqs, rows)
			if seen != nil {
				kept := own(seen.IndexSelect(0, keepT))
				seen.Free()
				seen, params.seen = kept, kept
			}
		}
		slot := cache.length
		cache.valid.Narrow(0, 0, cur).Narrow(1, slot, 1).Fill(1)
		h := m.hidden(idsT, posT, cache.valid.Narrow(0, 0, cur).Narrow(1, 0, slot+1), cache, m.ownRoute())
		newLogits := s.Keep(torch.Linear(h.Squeeze(1), m.LMHead, nil).ToDType(torch.Float32)) // into outer
		s.Close()
		logits.Free()
		logits = newLogits
	}
}

// params builds the sampling tensors for the requests at rows, owned by the
// caller (not by any scope); free with rowParams.free.
func (m *Model) params(reqs []GenRequest, rows []int) rowParams {
	ss := make([]Sampling, len(rows))
	for i, r := range rows {
		ss[i] = reqs[r].Sampling
	}
	return m.ownedRowParams(ss)
}

// ownedRowParams builds sampling tensors owned by the caller (not by any
// scope); free with rowParams.free.
func (m *Model) ownedRowParams(ss []Sampling) rowParams {
	s := torch.NewScope()
	p := newRowParams(ss, int64(m.Config.VocabSize), m.device)
	owned := []*torch.Tensor{p.greedy, p.temp, p.topK, p.topP}
	if p.penalty != nil {
		owned = append(owned, p.penalty)
	}
	s.Keep(owned...)
	s.Close()
	for _, t := range owned {
		t.Untrack()
	}
	return p
}

// own takes t out of every scope: the caller frees it.
func own(t *torch.Tensor) *torch.Tensor { return t.Untrack() }

// free frees the parameters (not seen, which the caller keeps).
func (p rowParams) free() { torch.FreeAll(p.greedy, p.temp, p.topK, p.topP, p.penalty) }
