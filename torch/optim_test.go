package torch

import (
	"math"
	"testing"
)

// One AdamW step checked against the formula written out in float64.
func TestAdamWMatchesFormula(t *testing.T) {
	noLeaks(t)
	p0 := randData(80, 6)
	g1, g2 := randData(81, 6), randData(82, 6)
	const lr, b1, b2, eps, wd = 0.01, 0.9, 0.999, 1e-8, 0.1
	// reference: two steps
	p := append([]float64(nil), p0...)
	m := make([]float64, 6)
	v := make([]float64, 6)
	for step, g := range [][]float64{g1, g2} {
		k := float64(step + 1)
		for i := range p {
			p[i] *= 1 - lr*wd
			m[i] = b1*m[i] + (1-b1)*g[i]
			v[i] = b2*v[i] + (1-b2)*g[i]*g[i]
			mHat := m[i] / (1 - math.Pow(b1, k))
			denom := math.Sqrt(v[i])/math.Sqrt(1-math.Pow(b2, k)) + eps
			p[i] -= lr * mHat / denom
		}
	}
	param := FromFloat64(p0, 2, 3).Untrack().SetRequiresGrad(true)
	defer param.Free()
	frozen := FromFloat64([]float64{5}).Untrack().SetRequiresGrad(true)
	defer frozen.Free()
	opt := NewAdamW([]AdamWGroup{
		{Params: []*Tensor{param}, LR: lr, Beta1: b1, Beta2: b2, Eps: eps, WeightDecay: wd},
		{Params: []*Tensor{frozen}, LR: 1, Beta1: b1, Beta2: b2, Eps: eps, WeightDecay: wd},
	}, false)
	defer opt.Free()
	for _, g := range [][]float64{g1, g2} {
		scoped(func() {
			param.Mul(FromFloat64(g, 2, 3)).Sum().Backward() // grad = g
			opt.Step()
			opt.ZeroGrad()
		})
	}
	scoped(func() {
		closeTo(t, "params after 2 steps", param.Float64s(), p, 1e-12)
		closeTo(t, "a parameter without grad is not touched", frozen.Float64s(), []float64{5}, 0)
		st := opt.State(0)
		if st.Step != 2 || st.Master != nil {
			t.Fatalf("state %+v", st)
		}
		closeTo(t, "exp_avg", st.ExpAvg.Float64s(), m, 1e-6)
		closeTo(t, "exp_avg_sq", st.ExpAvgSq.Float64s(), v, 1e-6)
		if s := opt.State(1); s.Step != 0 || s.ExpAvg != nil {
			t.Fatalf("untouched parameter state %+v", s)
		}
	})
}

// Exporting the state and loading it into a fresh optimizer continues
// bit-identically.
func TestAdamWStateRoundTrip(t *testing.T) {
	noLeaks(t)
	mk := func() *Tensor { return FromFloat32([]float32{1, -2, 3, 0.5}).Untrack().SetRequiresGrad(true) }
	step := func(p *Tensor, o *AdamW, g []float32) {
		scoped(func() {
			p.Mul(FromFloat32(g)).Sum().Backward()
			o.Step()
			o.ZeroGrad()
		})
	}
	groups := func(p *Tensor) []AdamWGroup {
		return []AdamWGroup{{Params: []*Tensor{p}, LR: 0.1, Beta1: 0.9, Beta2: 0.99, Eps: 1e-8, WeightDecay: 0.01}}
	}
	a := mk()
	defer a.Free()
	oa := NewAdamW(groups(a), false)
	defer oa.Free()
	step(a, oa, []float32{1, 1, -1, 2})
	b := mk()
	defer b.Free()
	NoGrad(func() { b.CopyFrom(a) })
	ob := NewAdamW(groups(b), false)
	defer ob.Free()
	scoped(func() { ob.LoadState(0, oa.State(0)) })
	step(a, oa, []float32{0.5, -1, 3, 1})
	step(b, ob, []float32{0.5, -1, 3, 1})
	scoped(func() {
		closeTo(t, "resumed optimizer", f32to64(b.Float32s()), f32to64(a.Float32s()), 0)
		bad := AdamWState{Step: 1, ExpAvg: Zeros([]int64{3}, Float32, CPU), ExpAvgSq: Zeros([]int64{3}, Float32, CPU)}
		if err := panicsWith(func() { ob.LoadState(0, bad) }); err == nil {
			t.Fatal("state of the wrong shape must be refused")
		}
	})
}

// A bf16 parameter with a float32 master copy keeps updates far below bf16
// resolution; without it they vanish.
func TestAdamWMasterWeights(t *testing.T) {
	noLeaks(t)
	run := func(master bool) float64 {
		p := Ones([]int64{4}, BFloat16, CPU).Untrack().SetRequiresGrad(true)
		defer p.Free()
		o := NewAdamW([]AdamWGroup{{Params: []*Tensor{p}, LR: 1e-4, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}}, master)
		defer o.Free()
		for i := 0; i < 20; i++ {
			scoped(func() {
				p.Sum().Backward() // grad 1 → each step moves by ≈ lr
				o.Step()
				o.ZeroGrad()
			})
		}
		var out float64
		scoped(func() {
			if master {
				out = o.State(0).Master.Float64s()[0]
			} else {
				out = p.Float64s()[0]
			}
		})
		return out
	}
	if got := run(false); got != 1 {
		t.Fatalf("without master weights, bf16 should not resolve 1 - 20e-4 steps of 1e-4; got %v", got)
	}
	if got := run(true); math.Abs(got-(1-20e-4)) > 1e-6 {
		t.Fatalf("master weight after 20 steps of 1e-4: %v, want %v", got, 1-20e-4)
	}
}

func TestClipGradNorm(t *testing.T) {
	noLeaks(t)
	scoped(func() {
		a := FromFloat64([]float64{3, 0}).SetRequiresGrad(true)
		b := FromFloat64([]float64{0, 4}).SetRequiresGrad(true)
		c := FromFloat64([]float64{1}).SetRequiresGrad(true) // never gets a grad
		a.Mul(a).MulScalar(0.5).Sum().Add(b.Mul(b).MulScalar(0.5).Sum()).Backward()
		// grads are a and b themselves: total norm √(9+16) = 5
		if n := ClipGradNorm([]*Tensor{a, b, c}, 1); math.Abs(n-5) > 1e-12 {
			t.Fatalf("pre-clip norm %v, want 5", n)
		}
		coef := 1 / (5 + 1e-6)
		closeTo(t, "clipped a", a.Grad().Float64s(), []float64{3 * coef, 0}, 1e-12)
		closeTo(t, "clipped b", b.Grad().Float64s(), []float64{0, 4 * coef}, 1e-12)
		if n := ClipGradNorm([]*Tensor{a, b}, 10); math.Abs(n-5*coef) > 1e-9 {
			t.Fatalf("norm below the limit: %v", n)
		}
		closeTo(t, "below the limit nothing changes", a.Grad().Float64s(), []float64{3 * coef, 0}, 1e-12)
		// a non-finite norm is reported and nothing is scaled
		d := FromFloat64([]float64{1}).SetRequiresGrad(true)
		d.MulScalar(math.Inf(1)).Sum().Backward()
		if n := ClipGradNorm([]*Tensor{d}, 1); !math.IsInf(n, 1) {
			t.Fatalf("want +Inf, got %v", n)
		}
		if g := d.Grad().Float64s()[0]; !math.IsInf(g, 1) {
			t.Fatalf("an infinite grad must be left alone, got %v", g)
		}
	})
}

// The leak test: 1000 forward/backward/step iterations end with
// the live counter where it started.
func TestNoLeakOverTrainingIterations(t *testing.T) {
	noLeaks(t)
	w := Randn([]int64{16, 8}, Float32, CPU, nil).Untrack().SetRequiresGrad(true)
	defer w.Free()
	norm := Ones([]int64{8}, Float32, CPU).Untrack().SetRequiresGrad(true)
	defer norm.Free()
	opt := NewAdamW([]AdamWGroup{{Params: []*Tensor{w, norm}, LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.01}}, false)
	defer opt.Free()
	g := NewGenerator(CPU, 1)
	defer g.Free()
	start := LiveTensors()
	for i := 0; i < 1000; i++ {
		s := NewScope()
		x := Randn([]int64{4, 16}, Float32, CPU, g)
		h := RMSNorm(x.Matmul(w), norm, 1e-6)
		lp, _ := TokenLogProbs(h, FromInt64([]int64{1, 2, 3, 4}), false)
		lp.Mean().Neg().Backward()
		ClipGradNorm(opt.Params(), 1)
		opt.Step()
		opt.ZeroGrad()
		s.Close()
		if i == 0 {
			start = LiveTensors()
		}
	}
	if end := LiveTensors(); end != start {
		t.Fatalf("live tensors grew from %d to %d over 1000 iterations", start, end)
	}
}
