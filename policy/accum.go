package policy

// accum.go — summing a bf16/f16 model's micro-batch grads in float32.
//
// Autograd adds each micro-batch's grads into the parameters' grads, in the
// parameters' dtype: with bf16 weights every addition rounds to 8 bits of
// mantissa. TestBFloat16GradAccumulationError measured what that costs on a
// 2-layer model (16 rows split into k micro-batches, the bf16 sums against
// the same grads summed exactly): 1.7e-3 relative at k = 2, 2.4e-3 at 4,
// 3.2e-3 at 8, 4.2–4.3e-3 at 16 (the CPU backward is not bit-deterministic,
// so the figures move a little between runs) — growing like √k, against
// 8.0e-3 for the bf16 backward's own error on the same weights. So up to 16 micro-batches the
// bf16 sum adds less than the bf16 backward already carries, and beyond
// some 50 it would add more. optim.grad_accum_dtype "auto" (the default)
// therefore sums in float32 once a mini-batch has more than 16
// micro-batches, and in the grads themselves otherwise, which keeps the
// update at 16 bytes per parameter in the common case.
//
// The float32 path: after each micro-batch's backward the grads are added
// into a float32 tensor per parameter and zeroed; after the last, the sums
// are all-reduced across ranks (data parallel) in float32 and written back
// into the grads — one rounding — for clipping and the optimizer.

import (
	"fmt"

	"troupe/optim"
	"troupe/torch"
)

// float32Sums are the float32 grad sums of one mini-batch, per parameter.
type float32Sums []*torch.Tensor

// sumsInFloat32 reports whether a mini-batch of micros micro-batches (over
// all ranks) sums its grads in float32.
func (t *Trainer) sumsInFloat32(micros int) bool {
	if len(t.params) == 0 || t.params[0].DType() == torch.Float32 || t.params[0].DType() == torch.Float64 {
		return false
	}
	switch t.cfg.Group.Settings.GradAccumDType {
	case optim.AccumFloat32:
		return true
	case optim.AccumAuto:
		return micros > optim.AutoFloat32MicroBatches
	}
	return false
}

func newFloat32Sums(params []*torch.Tensor) float32Sums {
	s := make(float32Sums, len(params))
	for i, p := range params {
		s[i] = torch.Zeros(p.Shape(), torch.Float32, p.Device()).Untrack()
	}
	return s
}

// add moves the parameters' grads into the sums and zeroes them.
func (s float32Sums) add(params []*torch.Tensor) {
	torch.NoGrad(func() {
		for i, p := range params {
			g := p.Grad()
			if g == nil {
				continue
			}
			sc := torch.NewScope()
			s[i].AddInPlace(g.ToDType(torch.Float32))
			sc.Close()
			g.Fill(0)
		}
	})
}

// store all-reduces the sums across ranks and writes them into the grads
// (defining any grad no micro-batch of this rank produced).
func (t *Trainer) storeSums(s float32Sums) (err error) {
	defer torch.Recover(&err)
	if d := t.cfg.Dist; d != nil {
		if err := d.AllReduceBuckets(s, torch.ReduceSum, t.cfg.Shard.allReduceBucketBytes()); err != nil {
			return fmt.Errorf("data parallel: summing the grads of model %q: %w", t.Model(), err)
		}
	}
	if _, missing := t.grads(); missing {
		if err := t.defineGrads(); err != nil {
			return err
		}
	}
	torch.NoGrad(func() {
		for i, p := range t.params {
			p.Grad().CopyFrom(s[i])
		}
	})
	return nil
}

func (s float32Sums) free() { torch.FreeAll(s...) }
