package policy

// dist.go — the data-parallel part of the update.
//
// Every rank holds the step's rows (the training loop gathers them), splits
// them into the same mini- and micro-batches, and computes only the
// micro-batches j with j mod World = Rank. Each micro-batch's loss is divided
// by the mini-batch's micro-batch count, as in one process, so the sum of
// the ranks' grads (one all-reduce before clipping) is the one-process grad:
// the clipped norm, the AdamW step and so the weights are the same on every
// rank, and equal one process's up to the order of the float additions.
// The all-reduce goes in buckets (models.<name>.shard_bucket_mib, else 256
// MiB): what it allocates besides the grads is a bucket or two, not a copy
// of them.
// The rows' statistics are summed across ranks too (each row is computed on
// exactly one), so every rank reports the whole step's metrics.

import (
	"fmt"

	"troupe/torch"
)

// mine says whether micro-batch j of a mini-batch is this rank's.
func (t *Trainer) mine(j int) bool {
	d := t.cfg.Dist
	return d == nil || j%d.World() == d.Rank()
}

// reduceGrads sums the grads across ranks. A rank that computed no
// micro-batch of the mini-batch contributes zeros (a zero backward defines
// its grads first).
func (t *Trainer) reduceGrads() (err error) {
	d := t.cfg.Dist
	if d == nil {
		return nil
	}
	defer torch.Recover(&err)
	s := torch.NewScope()
	defer s.Close()
	grads, missing := t.grads()
	if missing {
		if err := t.defineGrads(); err != nil {
			return err
		}
		grads, _ = t.grads()
	}
	if err := d.AllReduceBuckets(grads, torch.ReduceSum, t.cfg.Shard.allReduceBucketBytes()); err != nil {
		return fmt.Errorf("data parallel: summing the grads of model %q: %w", t.Model(), err)
	}
	return nil
}

// defineGrads gives every parameter a grad (adding zeros to those that
// have one) by a zero backward.
func (t *Trainer) defineGrads() error {
	s := torch.NewScope()
	defer s.Close()
	zero := torch.Scalar(0, torch.Float32, t.params[0].Device())
	for _, q := range t.params {
		zero = zero.Add(q.Sum().MulScalar(0).ToDType(torch.Float32))
	}
	zero.Backward()
	if _, missing := t.grads(); missing {
		return fmt.Errorf("model %q: a parameter has no grad even after a zero backward", t.Model())
	}
	return nil
}

// grads returns the parameters' grads, and whether any is undefined.
func (t *Trainer) grads() ([]*torch.Tensor, bool) {
	var out []*torch.Tensor
	for _, p := range t.params {
		g := p.Grad()
		if g == nil {
			return nil, true
		}
		out = append(out, g)
	}
	return out, false
}

// reduceRows sums the rows' statistics across ranks.
func (t *Trainer) reduceRows(rows []rowRecord) (err error) {
	d := t.cfg.Dist
	if d == nil || len(rows) == 0 {
		return nil
	}
	defer torch.Recover(&err)
	const w = numStats + 1
	flat := make([]float64, len(rows)*w)
	for i, r := range rows {
		copy(flat[i*w:], r.stats[:])
		flat[i*w+numStats] = r.entropySum
	}
	s := torch.NewScope()
	defer s.Close()
	x := torch.FromFloat64(flat)
	if err := d.AllReduce([]*torch.Tensor{x}, torch.ReduceSum); err != nil {
		return fmt.Errorf("data parallel: summing the row statistics of model %q: %w", t.Model(), err)
	}
	flat = x.Float64s()
	for i := range rows {
		copy(rows[i].stats[:], flat[i*w:i*w+numStats])
		rows[i].entropySum = flat[i*w+numStats]
	}
	return nil
}
