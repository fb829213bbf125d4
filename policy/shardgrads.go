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
// when the whole backward is.
//
// Clipping uses the global norm, √(Σ over ranks of the squared sums of
// their chunks), and scales the sums.

import (
	"fmt"
	"math"

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

// reduceUnit reduce-scatters unit u's grads (zeros where a weight has
// none) into its buckets' float32 sums and frees them.
func (s *sharded) reduceUnit(u int) error {
	s.noteGrads()
	for _, b := range s.units[u] {
		if err := s.reduceBucket(b); err != nil {
			return fmt.Errorf("reduce-scattering the grads: %w", err)
		}
	}
	for _, i := range s.unitParams[u] {
		s.params[i].ZeroGrad()
	}
	s.reduced[u] = true
	s.noteGrads()
	return nil
}

func (s *sharded) reduceBucket(b *shardBucket) error {
	sc := torch.NewScope()
	defer sc.Close()
	dev := b.master.Device()
	parts := make([]*torch.Tensor, 0, len(b.pieces)+1)
	for _, p := range b.pieces {
		if g := s.params[p.param].Grad(); g != nil {
			parts = append(parts, g.Reshape(-1).Narrow(0, p.from, p.n))
		} else {
			parts = append(parts, torch.Zeros([]int64{p.n}, s.dtype, dev))
		}
	}
	if pad := b.chunk*int64(s.world) - b.numel; pad > 0 {
		parts = append(parts, torch.Zeros([]int64{pad}, s.dtype, dev))
	}
	mine := torch.Empty([]int64{b.chunk}, s.dtype, dev)
	if err := s.pg.ReduceScatter(torch.Cat(parts, 0), mine); err != nil {
		return err
	}
	if b.sums == nil {
		b.sums = torch.Zeros([]int64{b.chunk}, torch.Float32, dev).Untrack()
	}
	b.sums.AddInPlace(mine)
	return nil
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
	return nil
}

// ghostMicroBatch runs a micro-batch's collectives with nothing computed:
// at level 3 the forward's and backward's gathers, then the reductions of
// zero grads.
func (s *sharded) ghostMicroBatch() error {
	if s.level == 3 {
		s.ghostForward()
		for u := len(s.units) - 1; u >= 1; u-- {
			if err := s.gather(u); err != nil {
				return err
			}
			if err := s.reduceUnit(u); err != nil {
				return err
			}
			s.release(u)
		}
	}
	return s.finishMicroBatch()
}

// clipSums scales the grad sums so that their global norm is at most
// maxNorm (when maxNorm > 0 and the norm is finite) and returns the norm
// before clipping, the same on every rank.
func (s *sharded) clipSums(maxNorm float64) (float64, error) {
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
	if s.level == 3 {
		return s.publish([]int{0})
	}
	return s.publish(allUnits(len(s.units)))
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
