package model

// prefill.go — computing the admitted prompts' keys and values, in forwards
// of at most EngineConfig.PrefillTokens tokens.
//
// The tokens to compute (each admitted prompt past what it reuses, prefix.go)
// are laid out in admission order and cut into forwards of at most the
// budget; a prompt longer than the rest of a forward continues in the next
// one, attending over its own rows already in the arena (chunked prefill).
// This bounds the prefill's transient memory — one block's intermediates
// for the budget's tokens — however many prompts are admitted at once.
//
// Copies run in the forward where they become possible: a computed row's
// in the forward of its first tokens, a row sharing a prompt's in the
// forward of its leader's last tokens. Because forwards follow admission
// order and copies only read rows admitted before them, every source is
// complete by then (prefix.go orders the copies within a forward).

import (
	"slices"

	"troupe/torch"
)

// piece is a run of one admitted row's prompt tokens computed in one forward.
type piece struct {
	row, from, to int // index in the admissions; prompt positions [from, to)
}

// prefill computes the admitted rows' prompt keys and values into their
// slots and returns the first-token logits of every admitted row, (R, V)
// float32, in the current scope.
func (e *Engine) prefill(adm []admission) *torch.Tensor {
	budget := e.cfg.PrefillTokens
	var chunks [][]piece
	var cur []piece
	n := 0
	for i, a := range adm {
		if a.leader >= 0 {
			continue
		}
		p := a.r.req.Prompt
		for t := a.start; t < len(p); {
			if n == budget {
				chunks, cur, n = append(chunks, cur), nil, 0
			}
			k := min(len(p)-t, budget-n)
			cur = append(cur, piece{row: i, from: t, to: t + k})
			n, t = n+k, t+k
		}
	}
	chunks = append(chunks, cur) // not empty: every follower has a computed leader
	first, last := map[int]int{}, map[int]int{}
	for c, ch := range chunks {
		for _, pc := range ch {
			if _, ok := first[pc.row]; !ok {
				first[pc.row] = c
			}
			last[pc.row] = c
		}
	}
	copies := make([]kvCopies, len(chunks))
	for i, a := range adm {
		c := first[i]
		if a.leader >= 0 {
			c = last[a.leader]
		}
		copies[c].join(a.copies)
	}

	var hidden []*torch.Tensor // each forward's last-position states
	var order []int            // the admitted row of each of their rows
	for c, ch := range chunks {
		s := torch.NewScope()
		h, rows := e.prefillForward(adm, ch, copies[c])
		hidden = append(hidden, s.Keep(h))
		order = append(order, rows...)
		s.Close()
		e.stats.Prefills++
	}
	at := make(map[int]int64, len(order))
	for j, i := range order {
		at[i] = int64(j)
	}
	idx := make([]int64, len(adm)) // a follower takes its leader's logits
	for i, a := range adm {
		src := i
		if a.leader >= 0 {
			src = a.leader
		}
		idx[i] = at[src]
	}
	h := torch.Cat(hidden, 0)                                         // (Q,D)
	logits := torch.Linear(h, e.m.LMHead, nil).ToDType(torch.Float32) // (Q,V)
	return logits.IndexSelect(0, torch.FromInt64(idx).ToDevice(e.m.device))
}

// prefillForward runs one forward over pieces against the arena, with
// copies around each layer's writes, and returns the final hidden states of
// the rows whose prompts it finishes, with those rows' admission indices.
func (e *Engine) prefillForward(adm []admission, pieces []piece, cp kvCopies) (*torch.Tensor, []int) {
	dev, slotLen := e.m.device, e.slotLen
	slices.SortFunc(pieces, func(a, b piece) int { return adm[a.row].r.slot - adm[b.row].r.slot }) // varlen offsets must not decrease
	var ids, pos, flat, lastTok []int64
	var perToken []*Adapter
	var done []int
	P := len(pieces)
	cuQ, cuK, used := make([]int32, P+1), make([]int32, P+1), make([]int32, P)
	maxQ := 0
	for j, pc := range pieces {
		a := adm[pc.row]
		p, base := a.r.req.Prompt, int64(a.r.slot)*slotLen
		for t := pc.from; t < pc.to; t++ {
			ids, pos, flat = append(ids, int64(p[t])), append(pos, int64(t)), append(flat, base+int64(t))
			perToken = append(perToken, e.adapterOf(a.r))
		}
		cuQ[j+1] = int32(len(ids))
		cuK[j] = int32(base)
		used[j] = int32(pc.to) // the reused prefix, earlier pieces and this one
		maxQ = max(maxQ, pc.to-pc.from)
		if pc.to == len(p) {
			lastTok = append(lastTok, int64(len(ids)-1))
			done = append(done, pc.row)
		}
	}
	cuK[P] = cuK[P-1] + int32(slotLen)
	e.stats.PrefillTokens += len(ids)
	up64 := func(v []int64) *torch.Tensor { return torch.FromInt64(v).ToDevice(dev) }
	up32 := func(v []int32) *torch.Tensor { return torch.FromInt32(v).ToDevice(dev) }
	va := torch.Varlen{CuQ: up32(cuQ), CuK: up32(cuK), MaxQ: int64(maxQ), MaxK: slotLen, SeqUsedK: up32(used), Causal: true}
	var copies arenaCopies
	if len(cp.preSrc) > 0 {
		copies.preSrc, copies.preDst = up64(cp.preSrc), up64(cp.preDst)
	}
	if len(cp.postSrc) > 0 {
		copies.postSrc, copies.postDst = up64(cp.postSrc), up64(cp.postDst)
	}
	h := e.arenaHidden(up64(ids), up64(pos), up64(flat), va, e.m.routeRows(perToken, int64(len(perToken))), &copies)
	if len(lastTok) == 0 {
		return torch.Zeros([]int64{0, h.Size(1)}, h.DType(), dev), nil
	}
	return h.IndexSelect(0, up64(lastTok)), done
}
