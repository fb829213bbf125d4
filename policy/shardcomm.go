package policy

// shardcomm.go — the sharded collectives in flight (levels 1–3): issued,
// waited for on the compute stream only where their result is read, and
// checked by the host a unit later.
//
// On NCCL a collective runs on its own stream (torch/dist.go). Issuing one
// makes it wait for the compute queued so far; Work.Wait makes the compute
// queued after it wait for the collective; the host blocks only in
// Work.Check. So:
//
//   - a unit's reduce-scatter is issued when the backward is through the
//     unit and completed (waited for, added into the float32 sums) when the
//     next unit's is issued: it runs while the next layer's backward does;
//   - at level 3 the gather of the layer a pass enters next is issued when it
//     enters this one (prefetch, shardparams.go) and completed (waited for,
//     copied into the freshly allocated weights) when it enters that layer;
//   - a publish after the optimizer step keeps two buckets in flight;
//   - every Work waited for is checked by the host at the next unit
//     boundary (so the GPU still has that unit's work queued), and all of
//     them before the grad norm is read and when the update ends.
//
// On Gloo every collective has completed when it returns (its Work is nil)
// and all of this is the same calls in the same order, which is what the
// CPU tests exercise.

import (
	"fmt"

	"troupe/torch"
)

// reduction is one unit's reduce-scatters in flight: per bucket, the Work
// and this rank's chunk of the sum it writes, (chunk) in the grads' dtype.
type reduction struct {
	unit  int
	works []*torch.Work
	mine  []*torch.Tensor
}

// gathering is all-gathers in flight: per bucket, the Work and the whole
// bucket it writes, (W·chunk) in the weights' dtype.
type gathering struct {
	unit    int // level 3: the unit whose weights these are (−1: a publish)
	buckets []*shardBucket
	works   []*torch.Work
	wholes  []*torch.Tensor
}

// inFlight is what a sharded trainer has issued and not finished.
type inFlight struct {
	reducing []*reduction  // at most two: the unit just issued and the one before
	prefetch *gathering    // level 3: the next layer's gather
	waited   []*torch.Work // waited for on the stream since the last unit boundary
	due      []*torch.Work // waited for before it: the host checks them at the next boundary
}

// issueReduce reduce-scatters b's grads (zeros where a weight has none,
// and in the padding) into a fresh chunk, without waiting.
func (s *sharded) issueReduce(b *shardBucket) (*torch.Work, *torch.Tensor, error) {
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
	mine := torch.Empty([]int64{b.chunk}, s.dtype, dev).Untrack()
	w, err := s.pg.ReduceScatterAsync(torch.Cat(parts, 0), mine)
	if err != nil {
		mine.Free()
		return nil, nil, err
	}
	return w, mine, nil
}

// completeReduction waits for r on the stream and adds its chunks into the
// buckets' float32 sums.
func (s *sharded) completeReduction(r *reduction) error {
	for i, b := range s.units[r.unit] {
		if r.works[i] == nil && r.mine[i] == nil {
			continue
		}
		if err := r.works[i].Wait(); err != nil {
			return fmt.Errorf("reduce-scattering the grads: %w", err)
		}
		s.flight.waited = append(s.flight.waited, r.works[i])
		r.works[i] = nil
		if b.sums == nil {
			b.sums = torch.Zeros([]int64{b.chunk}, torch.Float32, b.master.Device()).Untrack()
		}
		b.sums.AddInPlace(r.mine[i])
		r.mine[i].Free()
		r.mine[i] = nil
	}
	return nil
}

// completeReductions completes every reduction in flight but the newest
// keep.
func (s *sharded) completeReductions(keep int) error {
	for len(s.flight.reducing) > keep {
		r := s.flight.reducing[0]
		s.flight.reducing = s.flight.reducing[1:]
		if err := s.completeReduction(r); err != nil {
			s.flight.reducing = append(s.flight.reducing, r) // dropped by dropInFlight
			return err
		}
	}
	return nil
}

// issueGather all-gathers the buckets' masters, rounded to the weights'
// dtype, into fresh whole buckets, without waiting.
func (s *sharded) issueGather(unit int, buckets []*shardBucket) (*gathering, error) {
	g := &gathering{unit: unit}
	for _, b := range buckets {
		if err := s.issueGatherBucket(g, b); err != nil {
			s.dropGathering(g)
			return nil, fmt.Errorf("gathering the weights: %w", err)
		}
	}
	return g, nil
}

func (s *sharded) issueGatherBucket(g *gathering, b *shardBucket) error {
	sc := torch.NewScope()
	defer sc.Close()
	send := b.master
	if s.dtype != torch.Float32 {
		send = b.master.ToDType(s.dtype)
	}
	whole := torch.Empty([]int64{b.chunk * int64(s.world)}, s.dtype, b.master.Device()).Untrack()
	w, err := s.pg.AllGatherIntoAsync(send, whole)
	if err != nil {
		whole.Free()
		return err
	}
	g.buckets, g.works, g.wholes = append(g.buckets, b), append(g.works, w), append(g.wholes, whole)
	return nil
}

// completeGather waits for g on the stream and copies the whole buckets
// into the weights (which must be present).
func (s *sharded) completeGather(g *gathering) error {
	defer s.dropGathering(g)
	for i, b := range g.buckets {
		if err := g.works[i].Wait(); err != nil {
			return fmt.Errorf("gathering the weights: %w", err)
		}
		s.flight.waited = append(s.flight.waited, g.works[i])
		g.works[i] = nil
		sc := torch.NewScope()
		for _, p := range b.pieces {
			s.params[p.param].Detach().Reshape(-1).Narrow(0, p.from, p.n).CopyFrom(g.wholes[i].Narrow(0, p.at, p.n))
		}
		sc.Close()
	}
	return nil
}

// dropGathering frees what g holds (after completeGather, or unfinished).
func (s *sharded) dropGathering(g *gathering) {
	for i := range g.wholes {
		g.works[i].Free()
		g.wholes[i].Free()
	}
	g.buckets, g.works, g.wholes = nil, nil, nil
}

// boundary is a unit boundary: the host checks the collectives waited for
// before the previous boundary.
func (s *sharded) boundary() error {
	due := s.flight.due
	s.flight.due, s.flight.waited = s.flight.waited, nil
	return s.checkAll(due)
}

// settle checks every collective waited for (none may be in flight).
func (s *sharded) settle() error {
	due := append(s.flight.due, s.flight.waited...)
	s.flight.due, s.flight.waited = nil, nil
	return s.checkAll(due)
}

// checkAll checks ws with the host, through the group, and releases them.
func (s *sharded) checkAll(ws []*torch.Work) error {
	var first error
	for _, w := range ws {
		if err := s.pg.Check(w); err != nil && first == nil {
			first = err
		}
		w.Free()
	}
	return first
}

// dropInFlight releases whatever an error left in flight: unfinished
// reductions and a prefetched gather (c10d keeps the buffers NCCL still
// writes until its own wait), and the unchecked Works.
func (s *sharded) dropInFlight() {
	for _, r := range s.flight.reducing {
		for i := range r.works {
			r.works[i].Free()
			r.mine[i].Free()
		}
	}
	if s.flight.prefetch != nil {
		s.dropGathering(s.flight.prefetch)
	}
	for _, w := range append(s.flight.due, s.flight.waited...) {
		w.Free()
	}
	s.flight = inFlight{}
}
