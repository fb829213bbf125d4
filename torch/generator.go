package torch

// #include "tshim.h"
import "C"

// Generator is a seeded random-number generator for one device. Sampling
// code passes one explicitly so that reruns with the same seed draw the same
// numbers, whatever else the process does with the global generator.
type Generator struct {
	h C.ts_gen
}

// NewGenerator makes a generator for dev seeded with seed.
func NewGenerator(dev Device, seed uint64) *Generator {
	var h C.ts_gen
	check("generator", C.ts_gen_new(C.int(dev), C.uint64_t(seed), &h))
	return &Generator{h: h}
}

// handle returns the C handle; a nil *Generator means the global generator.
func (g *Generator) handle() C.ts_gen {
	if g == nil {
		return nil
	}
	if g.h == nil {
		panic(&Error{Op: "generator", Msg: "use of a freed generator"})
	}
	return g.h
}

// Seed is the seed the generator was last seeded with.
func (g *Generator) Seed() uint64 {
	var s C.uint64_t
	check("generator_seed", C.ts_gen_seed(g.handle(), &s))
	return uint64(s)
}

// State returns the full generator state as a CPU uint8 tensor (for checkpoints).
func (g *Generator) State() *Tensor {
	var out C.ts_tensor
	check("generator_get_state", C.ts_gen_get_state(g.handle(), &out))
	return wrap(out)
}

// SetState restores a state returned by State.
func (g *Generator) SetState(state *Tensor) {
	check("generator_set_state", C.ts_gen_set_state(g.handle(), state.handle()))
}

// Free releases the generator. Idempotent.
func (g *Generator) Free() {
	if g == nil || g.h == nil {
		return
	}
	h := g.h
	g.h = nil
	check("generator_free", C.ts_gen_free(h))
}
