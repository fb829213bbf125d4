package model

// decode.go — the engine's decode batch: the per-row device state of the
// rows being decoded (limits, stop ids, slot offsets, attention offsets,
// sampling parameters and adapter routes), rebuilt when rows join or leave,
// and the decode step that feeds every row's last token through the model
// and samples the next, on the device. engine.go decides which rows run;
// this file runs them.

import (
	"slices"

	"troupe/torch"
)

// decodeState is the per-row device state of the decode batch, in active
// order. Rebuilt whenever rows join or leave (at most once per Step).
type decodeState struct {
	tok, pos, n, maxNew *torch.Tensor // (B) int64
	done                *torch.Tensor // (B) bool
	stops               *torch.Tensor // (B, S) int64, −1 padded
	base                *torch.Tensor // (B) int64: slot·slotLen
	cuQ, cuK            *torch.Tensor // (B+1) int32
	params              rowParams
	route               route // each row's adapter
}

func (d *decodeState) free() {
	if d.maxNew == nil {
		return
	}
	torch.FreeAll(d.tok, d.pos, d.n, d.maxNew, d.done, d.stops, d.base, d.cuQ, d.cuK, d.route.onehot)
	d.params.free()
	*d = decodeState{}
}

// batchState builds the host-known parts of a batch's state (limits, stop
// ids, slot offsets, attention offsets, adapter routes) and the sampling
// parameters. owned: untracked, for the engine to free; otherwise the
// tensors belong to the current scope, except the sampling parameters (free
// them).
func (e *Engine) batchState(rows []*engineRow, owned bool) decodeState {
	m, slotLen := e.m, e.slotLen
	B := len(rows)
	maxStops := 1
	for _, r := range rows {
		maxStops = max(maxStops, len(r.req.Stop))
	}
	maxNew, base := make([]int64, B), make([]int64, B)
	stops := slices.Repeat([]int64{-1}, B*maxStops)
	cuQ, cuK := make([]int32, B+1), make([]int32, B+1)
	for i, r := range rows {
		maxNew[i] = int64(r.req.MaxNewTokens)
		base[i] = int64(r.slot) * slotLen
		for j, s := range r.req.Stop {
			stops[i*maxStops+j] = int64(s)
		}
		cuQ[i+1] = int32(i + 1)
		cuK[i] = int32(base[i])
	}
	if B > 0 {
		cuK[B] = int32(base[B-1] + slotLen)
	}
	up := func(t *torch.Tensor) *torch.Tensor {
		t = t.ToDevice(m.device)
		if owned {
			t.Untrack()
		}
		return t
	}
	return decodeState{
		maxNew: up(torch.FromInt64(maxNew)), base: up(torch.FromInt64(base)),
		stops: up(torch.FromInt64(stops, int64(B), int64(maxStops))),
		cuQ:   up(torch.FromInt32(cuQ)), cuK: up(torch.FromInt32(cuK)),
		params: m.rowParamsOf(rows),
		route:  e.routeOf(rows, owned),
	}
}

// routeOf routes each row through its request's adapter.
func (e *Engine) routeOf(rows []*engineRow, owned bool) route {
	ads := make([]*Adapter, len(rows))
	for i, r := range rows {
		ads[i] = e.adapterOf(r)
	}
	rt := e.m.routeRows(ads, int64(len(rows)))
	if owned && rt.onehot != nil {
		rt.onehot.Untrack()
	}
	return rt
}

// rowParamsOf builds the sampling parameters of rows (caller frees).
func (m *Model) rowParamsOf(rows []*engineRow) rowParams {
	ss := make([]Sampling, len(rows))
	for i, r := range rows {
		ss[i] = r.req.Sampling
	}
	return m.ownedRowParams(ss)
}

// hitsStop reports, per row, whether tok (B) is one of the row's stop ids.
func hitsStop(tok, stops *torch.Tensor) *torch.Tensor {
	return tok.Unsqueeze(1).Eq(stops).ToDType(torch.Int64).SumDim(1, false).GtScalar(0)
}

// decode runs the batch for as many steps as the longest row can still use,
// at most SyncEvery, without reading anything back.
func (e *Engine) decode() {
	if len(e.active) == 0 {
		return
	}
	steps := 0
	for _, r := range e.active {
		steps = max(steps, r.req.MaxNewTokens-r.n)
	}
	steps = min(steps, e.syncEvery)
	if e.cfg.StaticBatches {
		e.decodeStatic(steps)
		return
	}
	st := &e.state
	for range steps {
		s := torch.NewScope()
		tok, pos, n, done := e.decodeStepOn(st)
		torch.FreeAll(st.tok, st.pos, st.n, st.done)
		st.tok, st.pos, st.n, st.done = s.Keep(tok).Untrack(), s.Keep(pos).Untrack(), s.Keep(n).Untrack(), s.Keep(done).Untrack()
		s.Close()
		e.stats.DecodeSteps++
	}
}

// arenaCopies are device index lists of arena rows copied in every layer,
// before and after the layer writes its new keys and values (prefix.go).
type arenaCopies struct {
	preSrc, preDst, postSrc, postDst *torch.Tensor
}

func (c *arenaCopies) run(arena *torch.Tensor, src, dst *torch.Tensor) {
	if src != nil {
		arena.IndexCopyInPlace(0, dst, arena.IndexSelect(0, src))
	}
}

// arenaHidden runs N tokens through the model against the key/value arena:
// token i, at position pos[i], writes its keys and values to arena row
// flat[i] and attends over its sequence's rows of the arena as va says
// (causal, bottom-right aligned, for several tokens of one sequence). It
// returns the final normalised hidden states (N, D). copies (may be nil)
// run in every layer around the writes.
func (e *Engine) arenaHidden(ids, pos, flat *torch.Tensor, va torch.Varlen, rt route, copies *arenaCopies) *torch.Tensor {
	m := e.m
	N := ids.Size(0)
	x := torch.Embedding(m.Embed, ids)
	cos, sin := m.rope.table(pos, m.dtype)
	cos, sin = cos.Unsqueeze(1), sin.Unsqueeze(1) // (N,1,Dh)
	for i, blk := range m.Layers {
		ls := torch.NewScope() // this layer's intermediates go with it
		a := &blk.Attn
		q, k, v := a.projectRotated(blk.InputNorm.Forward(x), rt, cos, sin)
		if copies != nil {
			copies.run(e.k[i], copies.preSrc, copies.preDst)
			copies.run(e.v[i], copies.preSrc, copies.preDst)
		}
		e.k[i].IndexCopyInPlace(0, flat, k)
		e.v[i].IndexCopyInPlace(0, flat, v)
		if copies != nil {
			copies.run(e.k[i], copies.postSrc, copies.postDst)
			copies.run(e.v[i], copies.postSrc, copies.postDst)
		}
		att := torch.VarlenAttention(q, e.k[i], e.v[i], va)
		x = x.Add(a.O.forward(att.Reshape(N, a.heads*a.headDim), rt))
		x = ls.Keep(x.Add(blk.MLP.forward(blk.PostNorm.Forward(x), rt, true)))
		ls.Close()
	}
	return m.Norm.Forward(x)
}

// projectRotated returns the engine's rotated queries (N, H, Dh) and keys
// (N, KVH, Dh) and its values (N, KVH, Dh) for the N tokens h (N, D),
// through the fused projections. With no adapter update on q or k, the
// queries and keys are adjacent columns of the fused output and take the
// rotation in one call (Qwen3 joins its per-head-normed q and k with one
// cat first): 4 kernels fewer per layer (Qwen3: 3), with the same
// elementwise arithmetic.
func (a *Attention) projectRotated(h *torch.Tensor, rt route, cos, sin *torch.Tensor) (q, k, v *torch.Tensor) {
	N := h.Size(0)
	if a.qkv.W != nil && !a.Q.lora.touches(rt) && !a.K.lora.touches(rt) {
		nq, nkv := a.heads*a.headDim, a.kvHeads*a.headDim
		y := torch.Linear(h, a.qkv.W, a.qkv.B)                              // (N,nq+2·nkv)
		qk := y.Narrow(-1, 0, nq+nkv).View(N, a.heads+a.kvHeads, a.headDim) // (N,H+KVH,Dh)
		if a.QNorm != nil {
			qk = torch.Cat([]*torch.Tensor{a.QNorm.Forward(qk.Narrow(1, 0, a.heads)), a.KNorm.Forward(qk.Narrow(1, a.heads, a.kvHeads))}, 1)
		}
		qk = torch.RoPE(qk, cos, sin)
		v = a.V.adapt(y.Narrow(-1, nq+nkv, nkv), h, rt).View(N, a.kvHeads, a.headDim)
		return qk.Narrow(1, 0, a.heads), qk.Narrow(1, a.heads, a.kvHeads), v
	}
	q, k, v = a.project(h, rt, true)
	q, k, v = q.View(N, a.heads, a.headDim), k.View(N, a.kvHeads, a.headDim), v.View(N, a.kvHeads, a.headDim)
	if a.QNorm != nil {
		q, k = a.QNorm.Forward(q), a.KNorm.Forward(k)
	}
	return torch.RoPE(q, cos, sin), torch.RoPE(k, cos, sin), v
}

// decodeStepOn feeds every row of st its last token, samples the next and
// returns the new state (in the current scope).
func (e *Engine) decodeStepOn(st *decodeState) (tok, pos, n, done *torch.Tensor) {
	flat := st.base.Add(st.pos) // arena row of the fed token
	used := st.pos.AddScalar(1).ToDType(torch.Int32)
	va := torch.Varlen{CuQ: st.cuQ, CuK: st.cuK, MaxQ: 1, MaxK: e.slotLen, SeqUsedK: used}
	h := e.arenaHidden(st.tok, st.pos, flat, va, st.route, nil)
	logits := torch.Linear(h, e.m.LMHead, nil).ToDType(torch.Float32)
	at := st.base.Add(st.n) // index of the token being sampled
	u := e.uniform.IndexSelect(0, at)
	seenSlots := e.seenForStep(st)
	next, lp := sampleUniform(logits, st.params, u)
	e.markStep(seenSlots, st, next)
	e.outTok.IndexCopyInPlace(0, at, next)
	e.outLP.IndexCopyInPlace(0, at, lp)
	live := st.done.LogicalNot()
	step := live.ToDType(torch.Int64)
	n = st.n.Add(step)
	pos = st.pos.Add(step)
	tok = torch.Where(live, next, st.tok)
	done = st.done.LogicalOr(live.LogicalAnd(hitsStop(next, st.stops).LogicalOr(n.Ge(st.maxNew))))
	return tok, pos, n, done
}
