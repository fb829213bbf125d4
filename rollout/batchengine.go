// batchengine.go — the one adapter between the two ways of generating: a
// batch Generator (model.Generate with engine.enabled false, the scripted
// generator) seen as an Engine, so that the sampler has one loop.
package rollout

import (
	"fmt"

	"troupe/gen"
)

// batchEngine is a Generator as an Engine. Submit queues a request; Step
// generates everything queued, in submission order, in batches of at most
// maxRows (0: one batch), and returns it all. The k-th Generate call of a
// rollout, counted over every model in the order the sampler steps them,
// gets the seed DeriveSeed(seed, 0, k); the per-request seeds Submit
// receives are not used (a Generator draws a batch from one seed).
type batchEngine struct {
	gen     Generator
	maxRows int
	seed    uint64
	calls   *uint64 // Generate calls of the rollout so far, shared by its engines
	queue   []gen.Request
	next    int         // the id of the next Submit
	stop    func() bool // asked between Generate calls (Sampler.Stop); nil: never

	lastCalls, lastMaxRows int // the last Step's Generate calls and largest batch (the sampler's stats)
}

// batchEngines wraps each generator for one rollout of the given seed;
// stop (may be nil) is asked between Generate calls.
func batchEngines(gens map[string]Generator, maxRows int, seed uint64, stop func() bool) map[string]Engine {
	var calls uint64
	out := make(map[string]Engine, len(gens))
	for m, g := range gens {
		out[m] = &batchEngine{gen: g, maxRows: maxRows, seed: seed, calls: &calls, stop: stop}
	}
	return out
}

func (b *batchEngine) Submit(req gen.Request, _ uint64) (int, error) {
	b.queue = append(b.queue, req)
	b.next++
	return b.next - 1, nil
}

func (b *batchEngine) Pending() int { return len(b.queue) }

func (b *batchEngine) Step() ([]gen.Completion, error) {
	first := b.next - len(b.queue) // the id of queue[0]
	out := make([]gen.Completion, 0, len(b.queue))
	b.lastCalls, b.lastMaxRows = 0, 0
	for len(b.queue) > 0 {
		if b.stop != nil && b.stop() { // between Generate calls: a signal is honoured within one
			return nil, ErrStopped
		}
		size := len(b.queue)
		if b.maxRows > 0 && size > b.maxRows {
			size = b.maxRows
		}
		reqs := b.queue[:size]
		res, err := b.gen.Generate(reqs, DeriveSeed(b.seed, 0, *b.calls))
		if err != nil {
			return nil, fmt.Errorf("generate %d rows: %w", len(reqs), err)
		}
		if len(res) != len(reqs) {
			return nil, fmt.Errorf("generator returned %d results for %d requests; it must return one per request", len(res), len(reqs))
		}
		*b.calls++
		b.lastCalls++
		b.lastMaxRows = max(b.lastMaxRows, size)
		for _, r := range res {
			out = append(out, gen.Completion{ID: first + len(out), Result: r})
		}
		b.queue = b.queue[size:]
	}
	b.queue = nil
	return out, nil
}
