package policy

// shardparams.go — sharded weights (shard level 3), FSDP's way, and the
// update's bracket for every level ≥ 2.
//
// Outside the update the model is whole on every rank: the rollout engine,
// evaluation, weight checks, checkpoints and exports read it as they read
// an unsharded one. beginUpdate gives back the memory of every decoder
// layer's weights (model.LayerHook); a pass that enters layer i gathers
// them — the masters of the W ranks, all-gathered bucket by bucket and
// rounded to the weights' dtype — and leaving frees them again, so a rank
// holds its 1/W of the float32 masters plus unit 0 (embedding, final norm,
// head: kept whole through the update, re-gathered after each optimizer
// step) and one layer. endUpdate gathers the whole model once, from the
// final masters: the weight sync to the rollout engine that verl performs
// from FSDP.
//
// Freeing resizes the weights' storages to nothing (torch.Tensor.
// ResizeStorage); views share them, so the fused q/k/v and gate/up weights
// the engine uses are freed and refilled with their parts. Level 3 needs
// the checkpointed backward (config refuses it otherwise): the plain one
// would keep every layer's weights for autograd.
//
// Prefetch: entering layer i, the gather of the layer the pass needs next
// (i+1 in a forward, i−1 in the checkpointed backward) is issued, and
// completed — its weights allocated, waited for, copied in — when the pass
// enters that layer; on NCCL it runs while layer i computes (shardcomm.go).
// The weights of one layer are present at a time, and the gathered buckets
// of the next.
//
// Storage moves: at level 3 beginUpdate frees the layers' memory and every
// gather gives them new memory, so the model's weight version is bumped
// (model.MarkUpdated) whenever an update begins, whether or not it steps:
// an engine that kept CUDA graphs (engine.release: false) captures them
// again instead of replaying kernels that read freed addresses.
//
// A rank whose share of a mini-batch is one micro-batch short runs ghost
// passes (ghostForward, shardgrads.go's ghostMicroBatch): the same gathers
// with nothing computed, through the same hook calls, so the ranks'
// collectives match.

import (
	"fmt"

	"troupe/model"
	"troupe/torch"
)

// unitStorage is one distinct storage under a unit's weights.
type unitStorage struct {
	t     *torch.Tensor // a weight on that storage
	bytes int64         // its size when present
}

// beginUpdate installs the layer hook (levels ≥ 2) and, at level 3, frees
// the decoder layers' weights (a new weight version: their storage moves).
func (s *sharded) beginUpdate(m *model.Model) {
	s.mem = heldBytes{}
	if s.level < 2 {
		return
	}
	m.SetLayerHook(s.hook)
	clear(s.reduced)
	s.pass = passPosition{}
	if s.level < 3 {
		return
	}
	if s.storages == nil {
		s.findStorages()
	}
	for u := 1; u < len(s.units); u++ {
		s.release(u)
	}
	m.MarkUpdated()
	s.notePresent()
}

// endUpdate removes the hook, finishes or drops what is in flight, frees
// any grad sums left by an error and, at level 3, gathers the whole model.
// A unit that cannot be gathered (a collective failed) gets zeroed memory,
// so that nothing reads freed memory, and the error is returned.
func (s *sharded) endUpdate(m *model.Model) (err error) {
	if s.level < 2 {
		s.dropInFlight()
		return nil
	}
	m.SetLayerHook(nil)
	if p := s.flight.prefetch; p != nil { // an update that stopped between two layers
		s.flight.prefetch = nil
		err = s.completeGatherOf(p)
	}
	s.dropInFlight()
	s.freeSums()
	if s.level < 3 {
		return err
	}
	defer torch.Recover(&err)
	for u := range s.units {
		if s.present[u] {
			continue
		}
		if e := s.gather(u); e != nil {
			if err == nil {
				err = e
			}
			for _, st := range s.storages[u] {
				st.t.ResizeStorage(st.bytes)
				st.t.Detach().Fill(0)
			}
			s.present[u] = true
		}
	}
	if e := s.settle(); e != nil && err == nil {
		err = e
	}
	return err
}

// findStorages lists each unit's distinct storages.
func (s *sharded) findStorages() {
	s.storages = make([][]unitStorage, len(s.units))
	s.present = make([]bool, len(s.units))
	seen := map[uint64]bool{}
	for u, ps := range s.unitParams {
		for _, i := range ps {
			n, id := s.params[i].StorageInfo()
			if !seen[id] {
				seen[id] = true
				s.storages[u] = append(s.storages[u], unitStorage{t: s.params[i], bytes: n})
			}
		}
		s.present[u] = true
	}
}

// passPosition is the last hook call, which says which way the pass goes.
type passPosition struct {
	seen  bool
	layer int
	phase model.LayerPhase
}

// backward reports whether entering layer is the checkpointed backward's:
// right after the backward through the layer above, or re-entering the
// layer a forward just left (the backward starts at the last layer).
func (p passPosition) backward(layer int) bool {
	return p.seen && ((p.phase == model.LayerLeaveBackward && p.layer == layer+1) || (p.phase == model.LayerLeave && p.layer == layer))
}

// hook is the model's layer hook during an update. Each call is a unit
// boundary: the host checks the collectives waited for a boundary ago.
func (s *sharded) hook(layer int, phase model.LayerPhase) {
	u := layer + 1
	err := s.boundary()
	if err == nil {
		switch phase {
		case model.LayerEnter:
			if s.level == 3 {
				next := layer + 1
				if s.pass.backward(layer) {
					next = layer - 1
				}
				err = s.enter(u, next+1)
			}
		case model.LayerLeave:
			if s.level == 3 {
				s.release(u)
			}
		case model.LayerLeaveBackward:
			err = s.reduceUnit(u)
			if s.level == 3 {
				s.release(u)
			}
		}
	}
	s.pass = passPosition{seen: true, layer: layer, phase: phase}
	if err != nil {
		panic(&torch.Error{Op: "shard", Msg: fmt.Sprintf("layer %d: %v", layer, err)})
	}
}

// enter makes unit u's weights present (from the prefetch when it is u's)
// and prefetches unit next's gather (a decoder layer's: 1 ≤ next < number of
// units, and not present).
func (s *sharded) enter(u, next int) error {
	if err := s.gather(u); err != nil {
		return err
	}
	if next < 1 || next >= len(s.units) || s.present[next] {
		return nil
	}
	g, err := s.issueGather(next, s.units[next])
	if err != nil {
		return err
	}
	s.flight.prefetch = g
	return nil
}

// gather makes unit u's weights present: the prefetched gather when it is
// u's, else a gather issued now; a prefetch of another unit is finished
// first (a pass that went another way than expected).
func (s *sharded) gather(u int) error {
	if s.present[u] {
		return nil
	}
	if p := s.flight.prefetch; p != nil {
		s.flight.prefetch = nil
		if err := s.completeGatherOf(p); err != nil {
			return err
		}
		if p.unit == u {
			return nil
		}
	}
	g, err := s.issueGather(u, s.units[u])
	if err != nil {
		return err
	}
	return s.completeGatherOf(g)
}

// completeGatherOf allocates g's unit's weights and copies g into them.
func (s *sharded) completeGatherOf(g *gathering) error {
	for _, st := range s.storages[g.unit] {
		st.t.ResizeStorage(st.bytes)
	}
	s.present[g.unit] = true
	s.notePresent()
	return s.completeGather(g)
}

// release frees unit u's weights.
func (s *sharded) release(u int) {
	if !s.present[u] {
		return
	}
	for _, st := range s.storages[u] {
		st.t.ResizeStorage(0)
	}
	s.present[u] = false
}

// ghostForward gathers and frees every layer in a forward's order.
func (s *sharded) ghostForward() {
	if s.level < 3 {
		return
	}
	for layer := range len(s.units) - 1 {
		s.hook(layer, model.LayerEnter)
		s.hook(layer, model.LayerLeave)
	}
}

// presentBytes is what the weights hold now.
func (s *sharded) presentBytes() int64 {
	var n int64
	if s.storages == nil {
		for _, p := range s.params {
			n += p.Numel() * int64(p.DType().Size())
		}
		return n
	}
	for _, sts := range s.storages {
		for _, st := range sts {
			b, _ := st.t.StorageInfo()
			n += b
		}
	}
	return n
}

// notePresent records the weights held now.
func (s *sharded) notePresent() { s.mem.params = max(s.mem.params, s.presentBytes()) }
