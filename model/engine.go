package model

// engine.go — the generation engine: one per model, for the whole run.
//
// What it is: a fixed set of decode slots backed by one key/value arena
// allocated once (sized from a byte budget), a FIFO of waiting requests, and
// a step function. Each Step
//
//  1. admits waiting requests, in submission order, into free slots (the
//     slot holding a prefix of the prompt first, prefix.go) and prefills
//     them in packed forwards of at most PrefillTokens tokens (prefill.go),
//     computing only what the arena does not already hold; requests with the
//     same prompt (the n samples of a group) share one prefill, whose keys
//     and values are copied into each of their slots, and sample their first
//     tokens from the same last-position logits;
//  2. decodes every live slot for up to SyncEvery steps without touching the
//     host: tokens, their log-probs, stop detection and the per-row lengths
//     stay on the device, and attention reads each slot's real length
//     (varlen attention with per-row used keys — no mask, no padding);
//  3. reads the lengths and done flags once, retires the finished rows and
//     returns them; their slots take new requests at the next Step.
//
// Determinism: slot assignment, the batch composition of every step and the
// number of steps per Step are functions of the submitted requests only.
// Every request carries its own seed; its t-th token is drawn by inverse-CDF
// sampling with the t-th uniform of that seed's stream, so a row's samples
// do not depend on which other rows share its batch.
//
// This file is the scheduling (admission, prefill, retirement); the decode
// batch's device state and its step are in decode.go.
//
// The plain Generate (generate.go) stays the reference the engine is tested
// against. Sampling here follows sample.go: temperature, then top-k, then
// top-p; log-probs are under the temperature-scaled distribution.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"troupe/torch"
)

// EngineConfig sizes an engine.
type EngineConfig struct {
	// BudgetBytes bounds the key/value arena. The engine holds
	// min(MaxSlots, BudgetBytes / (SlotLen × KV bytes per token)) slots.
	BudgetBytes int64
	// SlotLen is the most tokens (prompt + new) one request may use.
	SlotLen int
	// MaxSlots caps the decode batch (0 = 256).
	MaxSlots int
	// SyncEvery is the number of decode steps between host reads (0 = 16).
	SyncEvery int
	// PrefillTokens bounds the tokens one prefill forward computes (0 =
	// 16384): admitted prompts beyond it are computed in further forwards,
	// a long prompt in pieces (prefill.go). It bounds the prefill's
	// transient memory.
	PrefillTokens int
	// NoPrefixCache turns off reusing keys and values already in the arena
	// (prefix.go); requests with the same prompt admitted together still
	// share one prefill.
	NoPrefixCache bool
	// StaticBatches decodes in batches of fixed bucket sizes whose state
	// tensors never move (graphs.go): what CUDA graphs need. Off, each step
	// runs on exactly the live rows.
	StaticBatches bool
	// CUDAGraphs captures the decode step of each static batch as a CUDA
	// graph and replays it, on CUDA with a shim built with graphs; it
	// implies StaticBatches.
	CUDAGraphs bool
	// CPUKernels runs the CPU's single-pass generation kernels
	// (torch.GenerationKernels and DecodeKernels: attention read in place,
	// the decode step's linear layers, RoPE, RMSNorm). They round
	// differently from the ATen math, but a row the same way whatever rows
	// share its step, so a request's samples do not depend on its
	// neighbours (data-parallel ranks reproduce one process). The run's
	// default (engine.cpu_kernels); off here, for callers that build an
	// EngineConfig themselves.
	CPUKernels bool
}

// EngineRequest is a generation request with its own random stream.
type EngineRequest struct {
	GenRequest
	Seed uint64
	// Adapter routes the request through one of the engine model's base's
	// adapters (lora.go); nil: the engine model's own route. Rows of
	// different adapters decode in one batch.
	Adapter *Adapter
}

// adapterOf is the adapter a request goes through.
func (e *Engine) adapterOf(r *engineRow) *Adapter {
	if r.req.Adapter != nil {
		return r.req.Adapter
	}
	return e.m.adapter
}

// Completion is a finished request.
type Completion struct {
	ID int // the id Submit returned
	GenResult
}

// EngineStats count the engine's work since it was made.
type EngineStats struct {
	Steps          int // Step calls that did work
	DecodeSteps    int // batched decode steps
	HostReads      int // device→host reads of the decode state
	Prefills       int // packed prefill forwards
	PrefillTokens  int // tokens through prefill
	SharedPrompts  int // requests whose prompt prefill was shared with an earlier one
	ReusedTokens   int // prompt tokens whose keys and values were reused, not computed
	Graphs         int // decode steps captured as CUDA graphs
	GraphReplays   int // decode steps run by replaying a graph
	Admitted       int
	MaxBatch       int // most rows decoded at once
	GeneratedTotal int // generated tokens
}

// Engine generates for many requests with one model; see the file comment.
// An Engine is used from one goroutine (the torch thread).
type Engine struct {
	m         *Model
	cfg       EngineConfig
	slots     int
	slotLen   int64
	syncEvery int

	// device memory, nil after Release
	k, v    []*torch.Tensor // per layer (slots·slotLen, KVH, Dh)
	outTok  *torch.Tensor   // (slots·slotLen) int64: generated ids by slot and index
	outLP   *torch.Tensor   // (slots·slotLen) f32
	uniform *torch.Tensor   // (slots·slotLen) f32: each slot's uniforms by token index
	seen    *torch.Tensor   // (slots, V) bool: each slot's tokens, for the repetition penalty (penalty.go); nil until needed

	queue  []*engineRow // waiting, in submission order
	bySlot []*engineRow // nil = free
	active []*engineRow // decode batch, by slot
	state  decodeState  // device state of the decode batch
	done   []Completion // finished without a slot (max_new_tokens 0)
	nextID int
	stats  EngineStats

	content []slotContent // what each slot's arena rows hold (prefix.go)
	version uint64        // the model weights' version the content is valid for
	clock   uint64        // admissions and retirements, for LRU

	static   map[staticKey]*staticBatch // graphs.go
	pool     torch.GraphPool            // shared by the engine's graphs
	poolMade bool
	graphErr error // why graphs were turned off
}

type engineRow struct {
	id   int
	req  EngineRequest
	slot int
	n    int // tokens generated, as of the last host read (prefill: 1)
}

// KVBytesPerToken is the key/value memory one cached token takes.
func (m *Model) KVBytesPerToken() int64 {
	c := m.Config
	return int64(c.NumLayers) * 2 * int64(c.NumKVHeads) * int64(c.HeadDim) * int64(m.dtype.Size())
}

// NewEngine makes an engine; its memory is allocated at the first Step.
func (m *Model) NewEngine(cfg EngineConfig) (*Engine, error) {
	if cfg.SlotLen < 2 {
		return nil, fmt.Errorf("model: engine: slot length must be ≥ 2 tokens, got %d", cfg.SlotLen)
	}
	if max := m.Config.MaxPositions; max > 0 && cfg.SlotLen > max {
		return nil, fmt.Errorf("model: engine: slot length %d exceeds the model's max_position_embeddings %d", cfg.SlotLen, max)
	}
	if cfg.MaxSlots < 0 || cfg.SyncEvery < 0 || cfg.BudgetBytes < 0 || cfg.PrefillTokens < 0 {
		return nil, fmt.Errorf("model: engine: max slots, sync interval, budget and prefill tokens must be ≥ 0")
	}
	if cfg.PrefillTokens == 0 {
		cfg.PrefillTokens = 16384
	}
	if cfg.MaxSlots == 0 {
		cfg.MaxSlots = 256
	}
	if cfg.SyncEvery == 0 {
		cfg.SyncEvery = 16
	}
	if cfg.CUDAGraphs {
		cfg.StaticBatches = true
	}
	perSlot := int64(cfg.SlotLen) * m.KVBytesPerToken()
	if cfg.StaticBatches { // a scratch row per slot for idle rows
		perSlot += m.KVBytesPerToken()
	}
	slots := int64(cfg.MaxSlots)
	if cfg.BudgetBytes > 0 {
		slots = min(slots, cfg.BudgetBytes/perSlot)
	}
	if slots < 1 {
		return nil, fmt.Errorf("model: engine: a key/value budget of %s holds no slot of %d tokens (%s each); raise the budget or lower the slot length",
			formatBytes(cfg.BudgetBytes), cfg.SlotLen, formatBytes(perSlot))
	}
	return &Engine{m: m, cfg: cfg, slots: int(slots), slotLen: int64(cfg.SlotLen), syncEvery: cfg.SyncEvery,
		bySlot: make([]*engineRow, slots), content: make([]slotContent, slots), version: m.root().version}, nil
}

// Slots is the number of rows the engine decodes at once.
func (e *Engine) Slots() int { return e.slots }

// SlotLen is the most tokens (prompt + new) of one request.
func (e *Engine) SlotLen() int { return int(e.slotLen) }

// Bytes is the device memory the engine holds while allocated.
func (e *Engine) Bytes() int64 {
	return e.arenaRows() * (e.m.KVBytesPerToken() + 8 + 4 + 4)
}

// Stats returns the work counters.
func (e *Engine) Stats() EngineStats { return e.stats }

// Pending is the number of submitted requests not yet returned.
func (e *Engine) Pending() int { return len(e.queue) + len(e.active) + len(e.done) }

// Submit queues a request and returns its id. A request that can never fit
// a slot is refused here, naming the sizes.
func (e *Engine) Submit(r EngineRequest) (int, error) {
	if err := e.m.checkRequest(r.GenRequest); err != nil {
		return 0, fmt.Errorf("model: engine: %w", err)
	}
	if r.Sampling.Penalised() && e.cfg.StaticBatches {
		return 0, fmt.Errorf("model: engine: repetition_penalty %g: static batches (CUDA graphs) do not apply a repetition penalty; turn engine.cuda_graphs off or set repetition_penalty: 1", r.Sampling.RepetitionPenalty)
	}
	if a := r.Adapter; a != nil && a.base != e.m.root() {
		return 0, fmt.Errorf("model: engine: the request's adapter is not attached to this engine's base model")
	}
	if need := len(r.Prompt) + r.MaxNewTokens; int64(need) > e.slotLen {
		return 0, fmt.Errorf("model: engine: a request needs %d tokens (prompt %d + max_new_tokens %d) but a slot holds %d (%d slots in a %s key/value budget); raise the engine's max_seq_len or shorten the prompt",
			need, len(r.Prompt), r.MaxNewTokens, e.slotLen, e.slots, formatBytes(e.Bytes()))
	}
	id := e.nextID
	e.nextID++
	if r.MaxNewTokens == 0 {
		e.done = append(e.done, Completion{ID: id, GenResult: GenResult{Finish: FinishLength}})
		return id, nil
	}
	e.queue = append(e.queue, &engineRow{id: id, req: r, slot: -1})
	return id, nil
}

// Step admits, decodes and retires (see the file comment) and returns the
// requests that finished, by id. A Step that fails drops every pending
// request (their slots are free again) and the prefix cache.
func (e *Engine) Step() (out []Completion, err error) {
	defer func() {
		if err != nil {
			e.abandon()
		}
	}()
	defer torch.Recover(&err)
	out, e.done = e.done, nil
	if len(e.queue) == 0 && len(e.active) == 0 {
		return out, nil
	}
	e.stats.Steps++
	step := func() {
		e.acquire()
		e.admit()
		if e.cfg.CPUKernels {
			torch.DecodeKernels(e.decode) // and the decode step's linear layers
		} else {
			e.decode()
		}
		out = append(out, e.retire()...)
	}
	torch.NoGrad(func() {
		if e.cfg.CPUKernels {
			torch.GenerationKernels(step) // the CPU's single-pass kernels (torch)
		} else {
			step()
		}
	})
	slices.SortFunc(out, func(a, b Completion) int { return a.ID - b.ID })
	return out, nil
}

// Generate runs a batch of requests to completion and returns their results
// in order.
func (e *Engine) Generate(reqs []EngineRequest) ([]GenResult, error) {
	if e.Pending() > 0 {
		return nil, fmt.Errorf("model: engine: Generate needs an idle engine; %d requests are pending", e.Pending())
	}
	first := e.nextID
	for i, r := range reqs {
		if _, err := e.Submit(r); err != nil {
			e.abandon()
			return nil, fmt.Errorf("request %d: %w", i, err)
		}
	}
	res := make([]GenResult, len(reqs))
	for e.Pending() > 0 {
		done, err := e.Step()
		if err != nil {
			e.abandon()
			return nil, err
		}
		for _, c := range done {
			res[c.ID-first] = c.GenResult
		}
	}
	return res, nil
}

// abandon drops every pending request (after an error).
func (e *Engine) abandon() {
	e.queue, e.done = nil, nil
	for s := range e.bySlot { // running rows and rows admitted by a Step that failed
		e.bySlot[s] = nil
	}
	e.active = nil
	e.state.free()
	e.dropCache() // a failed prefill may have left a slot's keys half written
}

// Release frees the engine's device memory (between rollout and update); the
// next Step allocates it again. Pending requests are dropped.
func (e *Engine) Release() {
	e.abandon()    // and the prefix cache
	e.dropGraphs() // before the arena their graphs read
	torch.FreeAll(e.k...)
	torch.FreeAll(e.v...)
	torch.FreeAll(e.outTok, e.outLP, e.uniform, e.seen)
	e.k, e.v, e.outTok, e.outLP, e.uniform, e.seen = nil, nil, nil, nil, nil, nil
}

// Free releases everything; the engine must not be used again.
func (e *Engine) Free() { e.Release() }

func (e *Engine) acquire() {
	if e.k != nil {
		return
	}
	c, dev := e.m.Config, e.m.device
	rows := e.arenaRows()
	for range e.m.Layers {
		e.k = append(e.k, torch.Zeros([]int64{rows, int64(c.NumKVHeads), int64(c.HeadDim)}, e.m.dtype, dev).Untrack())
		e.v = append(e.v, torch.Zeros([]int64{rows, int64(c.NumKVHeads), int64(c.HeadDim)}, e.m.dtype, dev).Untrack())
	}
	e.outTok = torch.Zeros([]int64{rows}, torch.Int64, dev).Untrack()
	e.outLP = torch.Zeros([]int64{rows}, torch.Float32, dev).Untrack()
	e.uniform = torch.Full([]int64{rows}, 0.5, torch.Float32, dev).Untrack()
}

// admit moves waiting requests into free slots and prefills them: the
// prompt tokens not reused from the arena (prefix.go) go through packed
// forwards against the arena (prefill.go).
func (e *Engine) admit() {
	e.syncWeights()
	adm := e.place()
	if len(adm) == 0 {
		return
	}
	s := torch.NewScope()
	defer s.Close()
	dev := e.m.device
	logits := e.prefill(adm) // (R,V)
	rows := make([]*engineRow, len(adm))
	for i, a := range adm {
		rows[i] = a.r
	}
	e.stats.Admitted += len(rows)

	// every row's uniforms into its slot
	var uIdx []int64
	var uVal []float32
	for _, r := range rows {
		for t := range r.req.MaxNewTokens {
			uIdx = append(uIdx, int64(r.slot)*e.slotLen+int64(t))
			uVal = append(uVal, uniformAt(r.req.Seed, t))
		}
	}
	e.uniform.IndexCopyInPlace(0, torch.FromInt64(uIdx).ToDevice(dev), torch.FromFloat32(uVal).ToDevice(dev))

	// the first token of each row, then the rows join the decode batch
	fresh := e.batchState(rows, false)
	defer fresh.params.free()
	pos, n := make([]int64, len(rows)), make([]int64, len(rows))
	for i, r := range rows {
		pos[i], n[i] = int64(len(r.req.Prompt)), 1 // the first generated token's position
	}
	u := e.uniform.IndexSelect(0, fresh.base) // index 0 of each slot
	seenSlots := e.seenForAdmitted(rows, &fresh.params)
	tok, lp := sampleUniform(logits, fresh.params, u)
	e.markAdmitted(seenSlots, &fresh.params, tok)
	e.outTok.IndexCopyInPlace(0, fresh.base, tok)
	e.outLP.IndexCopyInPlace(0, fresh.base, lp)
	fresh.tok, fresh.pos, fresh.n = tok, torch.FromInt64(pos).ToDevice(dev), torch.FromInt64(n).ToDevice(dev)
	fresh.done = fresh.maxNew.LeScalar(1).LogicalOr(hitsStop(tok, fresh.stops))

	// merge with the running rows, ordered by slot
	all := append(append([]*engineRow(nil), e.active...), rows...)
	order := make([]int64, len(all))
	for i := range order {
		order[i] = int64(i)
	}
	slices.SortStableFunc(order, func(a, b int64) int { return all[a].slot - all[b].slot })
	merged := make([]*engineRow, len(all))
	for i, j := range order {
		merged[i] = all[j]
	}
	orderT := torch.FromInt64(order).ToDevice(dev)
	cat := func(a, b *torch.Tensor) *torch.Tensor {
		if a != nil {
			b = torch.Cat([]*torch.Tensor{a, b}, 0)
		}
		return s.Keep(b.IndexSelect(0, orderT)).Untrack()
	}
	next := e.batchState(merged, true)
	next.tok, next.pos = cat(e.state.tok, fresh.tok), cat(e.state.pos, fresh.pos)
	next.n, next.done = cat(e.state.n, fresh.n), cat(e.state.done, fresh.done)
	e.state.free()
	e.state = next
	e.active = merged
	e.stats.MaxBatch = max(e.stats.MaxBatch, len(merged))
}

// retire reads the batch state once and returns the finished rows.
func (e *Engine) retire() []Completion {
	if len(e.active) == 0 {
		return nil
	}
	s := torch.NewScope()
	defer s.Close()
	st := &e.state
	// one read: n·2 + done
	packed := st.n.MulScalar(2).Add(st.done.ToDType(torch.Int64)).ToDevice(torch.CPU).Int64s()
	e.stats.HostReads++
	var finished []int
	var keep []int64
	for i, r := range e.active {
		r.n = int(packed[i] / 2)
		if packed[i]%2 == 1 {
			finished = append(finished, i)
		} else {
			keep = append(keep, int64(i))
		}
	}
	if len(finished) == 0 {
		return nil
	}
	var idx []int64
	for _, i := range finished {
		r := e.active[i]
		for t := range r.n {
			idx = append(idx, int64(r.slot)*e.slotLen+int64(t))
		}
	}
	idxT := torch.FromInt64(idx).ToDevice(e.m.device)
	toks := e.outTok.IndexSelect(0, idxT).ToDevice(torch.CPU).Int64s()
	lps := e.outLP.IndexSelect(0, idxT).ToDevice(torch.CPU).Float32s()
	out := make([]Completion, 0, len(finished))
	off := 0
	for _, i := range finished {
		r := e.active[i]
		c := Completion{ID: r.id, GenResult: GenResult{Tokens: make([]int, r.n), LogProbs: lps[off : off+r.n : off+r.n], Finish: FinishLength}}
		for t := range r.n {
			c.Tokens[t] = int(toks[off+t])
		}
		if slices.Contains(r.req.Stop, c.Tokens[r.n-1]) {
			c.Finish = FinishStop
		}
		off += r.n
		e.stats.GeneratedTotal += r.n
		e.remember(r, c.Tokens)
		e.bySlot[r.slot] = nil
		out = append(out, c)
	}
	// shrink the batch to the rows still running
	rows := make([]*engineRow, len(keep))
	for j, i := range keep {
		rows[j] = e.active[i]
	}
	if len(rows) == 0 {
		e.state.free()
		e.active = nil
		return out
	}
	keepT := torch.FromInt64(keep).ToDevice(e.m.device)
	next := e.batchState(rows, true)
	sel := func(t *torch.Tensor) *torch.Tensor { return s.Keep(t.IndexSelect(0, keepT)).Untrack() }
	next.tok, next.pos, next.n, next.done = sel(st.tok), sel(st.pos), sel(st.n), sel(st.done)
	e.state.free()
	e.state = next
	e.active = rows
	return out
}

func promptKey(p []int) string {
	var b strings.Builder
	for _, t := range p {
		b.WriteString(strconv.Itoa(t))
		b.WriteByte(',')
	}
	return b.String()
}

// formatBytes writes a byte count in binary units.
func formatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
