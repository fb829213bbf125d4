package model

// graphs.go — decoding in batches of fixed sizes, so that on CUDA the
// decode step can be captured once as a CUDA graph and replayed (one launch
// instead of ~900 kernel launches per step; see EngineConfig.StaticBatches).
//
// A static batch is a set of decode-state tensors of a bucket size (1, 2,
// 4, 8, 16, 32, then multiples of 32, at most the slot count) that never
// move. Before a run of decode steps the live rows' state is copied into its
// first rows and the rest are reset to idle rows; after, the live rows'
// tokens, positions, counts and done flags are copied back out. Each step
// updates the static tensors in place, so the same step can be replayed.
//
// Idle rows are finished rows of no request: row i of the bucket has its own
// scratch arena row (after every slot's rows) to write its key, value, token
// and log-prob into, attends over that one key, and never advances. The
// scratch rows are part of the arena (Engine.Bytes counts them).
//
// A bucket is also keyed by what changes the step's kernels: the stop-id
// width, the sampling mode (all greedy, any sampling, any top-k/top-p
// filter) and the adapter route. On CUDA, with graphs available, a bucket's
// first step runs eagerly on the graph's own stream (it warms up kernels and
// workspaces there), the next is captured and every step from then on
// replays the graph. A capture
// that fails turns graphs off for the engine and decoding goes on eagerly;
// GraphError says why. Graphs are dropped with the arena (Release) and when
// the weights change (Model.MarkUpdated), and captured again when needed.
//
// On CPU the same static batches run eagerly: the tests check them against
// the plain path like every other engine path.

import (
	"fmt"

	"troupe/torch"
)

// staticKey identifies a bucket's tensors and graph.
type staticKey struct {
	size, stops                     int
	allGreedy, anySample, anyFilter bool
	route                           int // route.slot; −width of the one-hot for mixed batches
}

// staticBatch is one bucket: its state (live rows first, idle rows after),
// the idle rows' values to reset the tail from, and its graph.
type staticBatch struct {
	key   staticKey
	st    decodeState
	idle  decodeState
	graph *torch.Graph
}

func (b *staticBatch) free() {
	b.graph.Free()
	b.graph = nil
	b.st.free()
	b.idle.free()
}

// bucket is the static batch size for B live rows.
func (e *Engine) bucket(B int) int {
	size := 1
	for size < B && size < 32 {
		size *= 2
	}
	if B > 32 {
		size = (B + 31) / 32 * 32
	}
	return min(size, e.slots)
}

// scratchBase is the first scratch arena row (after every slot's rows).
func (e *Engine) scratchBase() int64 { return int64(e.slots) * e.slotLen }

// arenaRows is the arena's row count: the slots and, with static batches, a
// scratch row per slot for idle rows.
func (e *Engine) arenaRows() int64 {
	rows := int64(e.slots) * e.slotLen
	if e.cfg.StaticBatches {
		rows += int64(e.slots)
	}
	return rows
}

// GraphError is why the engine stopped capturing CUDA graphs, or nil.
func (e *Engine) GraphError() error { return e.graphErr }

// dropGraphs frees every static batch and its graph, and retires their
// memory pool: once its last graph is freed, libtorch marks a pool for
// release and refuses to capture into it again (an internal assert in
// create_or_incref_pool), so the next generation of graphs takes a new one.
func (e *Engine) dropGraphs() {
	for k, b := range e.static {
		b.free()
		delete(e.static, k)
	}
	e.poolMade = false
}

// staticFor returns (making it if needed) the static batch for the current
// decode state.
func (e *Engine) staticFor() *staticBatch {
	B, st := len(e.active), &e.state
	key := staticKey{size: e.bucket(B), stops: 1, allGreedy: st.params.allGreedy, anySample: st.params.anySample,
		anyFilter: st.params.anyFilter, route: st.route.slot}
	for key.stops < int(st.stops.Size(1)) {
		key.stops *= 2
	}
	if st.route.onehot != nil {
		key.route = -int(st.route.onehot.Size(1))
	}
	if b, ok := e.static[key]; ok {
		return b
	}
	b := &staticBatch{key: key}
	b.idle = e.idleState(key)
	s := torch.NewScope()
	clone := func(t *torch.Tensor) *torch.Tensor {
		if t == nil {
			return nil
		}
		return s.Keep(t.Clone()).Untrack()
	}
	id := &b.idle
	b.st = decodeState{
		tok: clone(id.tok), pos: clone(id.pos), n: clone(id.n), maxNew: clone(id.maxNew), done: clone(id.done),
		stops: clone(id.stops), base: clone(id.base), cuQ: clone(id.cuQ), cuK: clone(id.cuK),
		params: rowParams{greedy: clone(id.params.greedy), temp: clone(id.params.temp), topK: clone(id.params.topK), topP: clone(id.params.topP),
			anySample: key.anySample, anyFilter: key.anyFilter, allGreedy: key.allGreedy, vocabSize: id.params.vocabSize},
		route: route{slot: id.route.slot, onehot: clone(id.route.onehot)},
	}
	s.Close()
	if e.static == nil {
		e.static = map[staticKey]*staticBatch{}
	}
	e.static[key] = b
	return b
}

// idleState is a bucket of idle rows (owned tensors).
func (e *Engine) idleState(key staticKey) decodeState {
	n, dev := key.size, e.m.device
	base, cuQ, cuK := make([]int64, n), make([]int32, n+1), make([]int32, n+1)
	scratch := e.scratchBase()
	for i := range n {
		base[i] = scratch + int64(i)
		cuQ[i+1] = int32(i + 1)
		cuK[i] = int32(base[i])
	}
	cuK[n] = int32(scratch + int64(n))
	stops := make([]int64, n*key.stops)
	for i := range stops {
		stops[i] = -1
	}
	greedy, temp, topK, topP := make([]bool, n), make([]float32, n), make([]int64, n), make([]float32, n)
	V := int64(e.m.Config.VocabSize)
	for i := range n {
		greedy[i], temp[i], topK[i], topP[i] = true, 1, V, 2
	}
	done := make([]bool, n)
	for i := range done {
		done[i] = true
	}
	s := torch.NewScope()
	own := func(t *torch.Tensor) *torch.Tensor { return s.Keep(t.ToDevice(dev)).Untrack() }
	zeros := make([]int64, n)
	ones := make([]int64, n)
	for i := range ones {
		ones[i] = 1
	}
	st := decodeState{
		tok: own(torch.FromInt64(zeros)), pos: own(torch.FromInt64(zeros)), n: own(torch.FromInt64(zeros)),
		maxNew: own(torch.FromInt64(ones)), done: own(torch.FromBool(done)),
		stops: own(torch.FromInt64(stops, int64(n), int64(key.stops))), base: own(torch.FromInt64(base)),
		cuQ: own(torch.FromInt32(cuQ)), cuK: own(torch.FromInt32(cuK)),
		params: rowParams{greedy: own(torch.FromBool(greedy)), temp: own(torch.FromFloat32(temp, int64(n), 1)),
			topK: own(torch.FromInt64(topK, int64(n), 1)), topP: own(torch.FromFloat32(topP, int64(n), 1)),
			anySample: key.anySample, anyFilter: key.anyFilter, allGreedy: key.allGreedy, vocabSize: V},
		route: route{slot: key.route},
	}
	if key.route < 0 {
		st.route = route{onehot: s.Keep(torch.Zeros([]int64{int64(n), int64(-key.route)}, e.m.dtype, dev)).Untrack()}
	}
	s.Close()
	return st
}

// load copies the live rows' state into b's first rows and resets the rest
// to idle rows.
func (b *staticBatch) load(live *decodeState, B int) {
	s := torch.NewScope()
	defer s.Close()
	put := func(dst, idle, src *torch.Tensor) {
		dst.CopyFrom(idle)
		dst.Narrow(0, 0, int64(B)).CopyFrom(src.Narrow(0, 0, int64(B)))
	}
	st, id := &b.st, &b.idle
	put(st.tok, id.tok, live.tok)
	put(st.pos, id.pos, live.pos)
	put(st.n, id.n, live.n)
	put(st.maxNew, id.maxNew, live.maxNew)
	put(st.done, id.done, live.done)
	put(st.base, id.base, live.base)
	put(st.cuK, id.cuK, live.cuK) // the first B offsets; the idle rows' after them
	put(st.params.greedy, id.params.greedy, live.params.greedy)
	put(st.params.temp, id.params.temp, live.params.temp)
	put(st.params.topK, id.params.topK, live.params.topK)
	put(st.params.topP, id.params.topP, live.params.topP)
	st.stops.CopyFrom(id.stops)
	st.stops.Narrow(0, 0, int64(B)).Narrow(1, 0, live.stops.Size(1)).CopyFrom(live.stops)
	if st.route.onehot != nil {
		put(st.route.onehot, id.route.onehot, live.route.onehot)
	}
}

// store copies the live rows' advanced state back out of b.
func (b *staticBatch) store(live *decodeState, B int) {
	s := torch.NewScope()
	defer s.Close()
	for _, p := range [][2]*torch.Tensor{{live.tok, b.st.tok}, {live.pos, b.st.pos}, {live.n, b.st.n}, {live.done, b.st.done}} {
		p[0].CopyFrom(p[1].Narrow(0, 0, int64(B)))
	}
}

// stepInPlace runs one decode step on st and writes the new state into it.
func (e *Engine) stepInPlace(st *decodeState) {
	s := torch.NewScope()
	defer s.Close()
	tok, pos, n, done := e.decodeStepOn(st)
	st.tok.CopyFrom(tok)
	st.pos.CopyFrom(pos)
	st.n.CopyFrom(n)
	st.done.CopyFrom(done)
}

// decodeStatic runs steps decode steps of the live rows through a static
// batch: eagerly, or by replaying its CUDA graph.
func (e *Engine) decodeStatic(steps int) {
	B := len(e.active)
	b := e.staticFor()
	b.load(&e.state, B)
	for range steps {
		switch {
		case b.graph != nil:
			b.graph.Replay()
			e.stats.GraphReplays++
		case e.graphsOn():
			// this step runs eagerly on the graph's stream (the warm-up); the
			// capture records the next, and replays run the rest
			stepped, err := e.capture(b)
			if err != nil {
				e.graphErr = fmt.Errorf("model: engine: capturing the decode step (batch %d) as a CUDA graph failed; decoding goes on without graphs: %w", b.key.size, err)
			}
			if !stepped {
				e.stepInPlace(&b.st)
			}
		default:
			e.stepInPlace(&b.st)
		}
		e.stats.DecodeSteps++
	}
	b.store(&e.state, B)
}

// graphsOn reports whether decode steps are captured as CUDA graphs: on
// CUDA, in a shim with graphs, for bf16/f16 models (whose attention takes
// the fused varlen kernel; the float32 path reads offsets on the host, which
// a capture cannot).
func (e *Engine) graphsOn() bool {
	half := e.m.dtype == torch.BFloat16 || e.m.dtype == torch.Float16
	return e.cfg.CUDAGraphs && e.graphErr == nil && e.m.device.IsCUDA() && half &&
		torch.GraphsSupported() && torch.VarlenFused()
}

// capture runs one step of b eagerly on a new graph's stream (stepped
// reports whether it ran), then records the next step without running it.
func (e *Engine) capture(b *staticBatch) (stepped bool, err error) {
	if !e.poolMade {
		e.pool, e.poolMade = torch.NewGraphPool(), true
	}
	var g *torch.Graph
	defer func() {
		if err != nil {
			g.Free() // ends the capture and leaves the side stream
		}
	}()
	defer torch.Recover(&err)
	g = torch.NewGraph(e.m.device)
	g.Enter()
	e.stepInPlace(&b.st) // warm-up: a real step
	stepped = true
	g.Begin(e.pool)
	e.stepInPlace(&b.st) // recorded, not run
	g.End()
	g.Exit()
	b.graph = g
	e.stats.Graphs++
	return true, nil
}
