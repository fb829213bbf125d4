package policy

// shardgrads.go — sharded grads (shard levels 2 and 3), ZeRO-2's way: no
// rank keeps a whole grad across micro-batches. After each micro-batch's
// backward every unit's grads are reduce-scattered, bucket by bucket, into
// float32 sums of this rank's chunk and freed; with the checkpointed
// backward a layer's grads go as soon as the backward is through it
// (model.LayerLeaveBackward), so at most one layer's grads, with the
// embedding's and head's, exist whole at a time. The reduce-scatter
// carries the grads' dtype (bf16 on GPUs); the sums are float32 whatever
// grad_accum_dtype says.
//
// Collectives must match across ranks, and a mini-batch's micro-batches
// split unevenly over them (micro-batch j is rank j mod W's): a rank with
// one micro-batch fewer runs a ghost — the same reduce-scatters of zeros
// (and at level 3 the same gathers) — so every rank runs ⌈n/W⌉ rounds.
// Units are reduced in one order everywhere: the layers from the last,
// then unit 0 (embedding, final norm, head), whose grads are complete only
// when the whole backward is. A unit's reduce-scatter is completed (added
// into the sums) when the next unit's is issued, so on NCCL it runs while
// the next layer's backward does (shardcomm.go).
//
// Clipping uses the global norm, √(Σ over ranks of the squared sums of
// their chunks), and scales the sums.

import (
	"fmt"
	"math"

	"troupe/model"
	"troupe/torch"
)

// ghosts is how many ghost micro-batches a rank with own micro-batches of
// a mini-batch of total runs (0 unless the grads are sharded).
func (s *sharded) ghosts(total, own int) int {
	if s == nil || s.level < 2 {
		return 0
	}
	return (total+s.world-1)/s.world - own
}

// shardedGradients is Trainer.gradients at levels 2 and 3.
func (t *Trainer) shardedGradients(i int, micros []*microBatch, total int, rows []rowRecord) (float64, error) {
	s := t.shard
	for j, mb := range micros {
		if err := t.accumulate(mb, i, j, total, rows); err != nil {
			return 0, err
		}
		if err := s.finishMicroBatch(); err != nil {
			return 0, err
		}
	}
	for range s.ghosts(total, len(micros)) {
		if err := s.ghostMicroBatch(); err != nil {
			return 0, err
		}
	}
	norm, err := s.clipSums(t.cfg.Group.Settings.GradClip)
	if err != nil {
		return 0, fmt.Errorf("model %q: %w", t.Model(), err)
	}
	return norm, nil
}

// reduceUnit issues the reduce-scatters of unit u's grads (zeros where a
// weight has none) into this rank's chunks, frees the grads, and completes
// the unit reduced before it (adding its chunks into the float32 sums).
func (s *sharded) reduceUnit(u int) error {
	s.noteGrads()
	r := &reduction{unit: u}
	for _, b := range s.units[u] {
		w, mine, err := s.issueReduce(b)
		if err != nil {
			s.flight.reducing = append(s.flight.reducing, r) // dropped by dropInFlight
			return fmt.Errorf("reduce-scattering the grads: %w", err)
		}
		r.works, r.mine = append(r.works, w), append(r.mine, mine)
	}
	for _, i := range s.unitParams[u] {
		s.params[i].ZeroGrad()
	}
	s.reduced[u] = true
	s.flight.reducing = append(s.flight.reducing, r)
	err := s.completeReductions(1)
	s.noteGrads()
	return err
}

// finishMicroBatch reduces the units this micro-batch's backward has not
// reduced yet, in the one order (layers from the last, then unit 0).
func (s *sharded) finishMicroBatch() error {
	for u := len(s.units) - 1; u >= 1; u-- {
		if !s.reduced[u] {
			if err := s.reduceUnit(u); err != nil {
				return err
			}
		}
	}
	if err := s.reduceUnit(0); err != nil {
		return err
	}
	clear(s.reduced)
	err := s.completeReductions(0)
	s.noteGrads()
	return err
}

// ghostMicroBatch runs a micro-batch's collectives with nothing computed:
// at level 3 the forward's gathers and the checkpointed backward's, through
// the same hook calls a real pass makes (so the prefetches match), then the
// reductions of zero grads.
func (s *sharded) ghostMicroBatch() error {
	if s.level == 3 {
		s.ghostForward()
		for layer := len(s.units) - 2; layer >= 0; layer-- {
			s.hook(layer, model.LayerEnter)
			s.hook(layer, model.LayerLeaveBackward)
		}
	}
	return s.finishMicroBatch()
}

// clipSums scales the grad sums so that their global norm is at most
// maxNorm (when maxNorm > 0 and the norm is finite) and returns the norm
// before clipping, the same on every rank.
func (s *sharded) clipSums(maxNorm float64) (float64, error) {
	if err := s.settle(); err != nil {
		return 0, fmt.Errorf("reduce-scattering the grads: %w", err)
	}
	sc := torch.NewScope()
	defer sc.Close()
	local := 0.0
	for _, b := range s.buckets {
		if b.sums != nil {
			local += b.sums.Mul(b.sums).Sum().Item()
		}
	}
	sq := torch.FromFloat64([]float64{local})
	if err := s.pg.AllReduce([]*torch.Tensor{sq}, torch.ReduceSum); err != nil {
		return 0, fmt.Errorf("summing the grad norm over the ranks: %w", err)
	}
	norm := math.Sqrt(sq.Item())
	if maxNorm > 0 && !math.IsInf(norm, 0) && !math.IsNaN(norm) && norm > maxNorm {
		coef := torch.Scalar(maxNorm/(norm+1e-6), torch.Float32, s.buckets[0].master.Device())
		for _, b := range s.buckets {
			if b.sums != nil {
				b.sums.MulInPlace(coef)
			}
		}
	}
	return norm, nil
}

// stepSums is the optimizer step of levels 2 and 3: the masters step from
// the clipped sums, which are freed; level 2 all-gathers every weight,
// level 3 unit 0's (the layers are gathered when a pass enters them, and
// all of them at the end of the update).
func (s *sharded) stepSums() error {
	for _, b := range s.buckets {
		b.master.SetGrad(b.sums)
	}
	s.opt.Step()
	for _, b := range s.buckets {
		b.master.SetGrad(nil)
	}
	s.freeSums()
	units := allUnits(len(s.units))
	if s.level == 3 {
		units = []int{0}
	}
	if err := s.publish(units); err != nil {
		return err
	}
	return s.settle()
}

// freeSums drops the grad sums.
func (s *sharded) freeSums() {
	for _, b := range s.buckets {
		b.sums.Free()
		b.sums = nil
	}
}

// noteGrads records the grads alive now, whole and summed.
func (s *sharded) noteGrads() {
	sc := torch.NewScope()
	defer sc.Close()
	n := s.sumsBytes()
	s.mem.sums = max(s.mem.sums, n)
	for _, p := range s.params {
		if g := p.Grad(); g != nil {
			n += g.Numel() * int64(g.DType().Size())
		}
	}
	s.mem.grads = max(s.mem.grads, n)
}
