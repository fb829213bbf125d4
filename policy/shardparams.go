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
// A rank whose share of a mini-batch is one micro-batch short runs ghost
// passes (ghostForward, shardgrads.go's ghostMicroBatch): the same gathers
// with nothing computed, so the ranks' collectives match.

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
// the decoder layers' weights.
func (s *sharded) beginUpdate(m *model.Model) {
	s.mem = heldBytes{}
	if s.level < 2 {
		return
	}
	m.SetLayerHook(s.hook)
	clear(s.reduced)
	if s.level < 3 {
		return
	}
	if s.storages == nil {
		s.findStorages()
	}
	for u := 1; u < len(s.units); u++ {
		s.release(u)
	}
	s.notePresent()
}

// endUpdate removes the hook, frees any grad sums left by an error and, at
// level 3, gathers the whole model. A unit that cannot be gathered (a
// collective failed) gets zeroed memory, so that nothing reads freed
// memory, and the error is returned.
func (s *sharded) endUpdate(m *model.Model) (err error) {
	if s.level < 2 {
		return nil
	}
	m.SetLayerHook(nil)
	s.freeSums()
	if s.level < 3 {
		return nil
	}
	defer torch.Recover(&err)
	for u := range s.units {
		if s.present[u] {
			continue
		}
		if e := s.gather(u); e != nil {
			err = e
			for _, st := range s.storages[u] {
				st.t.ResizeStorage(st.bytes)
				st.t.Detach().Fill(0)
			}
			s.present[u] = true
		}
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

// hook is the model's layer hook during an update.
func (s *sharded) hook(layer int, phase model.LayerPhase) {
	u := layer + 1
	var err error
	switch phase {
	case model.LayerEnter:
		if s.level == 3 {
			err = s.gather(u)
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
	if err != nil {
		panic(&torch.Error{Op: "shard", Msg: fmt.Sprintf("layer %d: %v", layer, err)})
	}
}

// gather allocates unit u's weights and all-gathers them from the masters.
func (s *sharded) gather(u int) error {
	if s.present[u] {
		return nil
	}
	for _, st := range s.storages[u] {
		st.t.ResizeStorage(st.bytes)
	}
	s.present[u] = true
	s.notePresent()
	return s.publish([]int{u})
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
