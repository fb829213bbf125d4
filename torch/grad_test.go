package torch

import (
	"math"
	"testing"
)

type gradInput struct {
	data  []float64
	shape []int64
}

// gradCheck compares autograd's gradient of the scalar f(inputs) with
// central finite differences, in float64.
func gradCheck(t *testing.T, name string, inputs []gradInput, f func(xs []*Tensor) *Tensor) {
	t.Helper()
	eval := func(vals [][]float64) float64 {
		var out float64
		scoped(func() {
			xs := make([]*Tensor, len(inputs))
			for i, in := range inputs {
				xs[i] = FromFloat64(vals[i], in.shape...)
			}
			out = f(xs).Item()
		})
		return out
	}
	vals := make([][]float64, len(inputs))
	for i, in := range inputs {
		vals[i] = append([]float64(nil), in.data...)
	}
	var grads [][]float64
	scoped(func() {
		xs := make([]*Tensor, len(inputs))
		for i, in := range inputs {
			xs[i] = FromFloat64(in.data, in.shape...).SetRequiresGrad(true)
		}
		f(xs).Backward()
		for _, x := range xs {
			grads = append(grads, x.Grad().Float64s())
		}
	})
	const h = 1e-6
	for i := range inputs {
		for j := range vals[i] {
			orig := vals[i][j]
			vals[i][j] = orig + h
			up := eval(vals)
			vals[i][j] = orig - h
			down := eval(vals)
			vals[i][j] = orig
			num := (up - down) / (2 * h)
			if d := math.Abs(num - grads[i][j]); d > 1e-6*(1+math.Abs(num)) {
				t.Fatalf("%s: d/dinput%d[%d]: autograd %.9g, finite difference %.9g", name, i, j, grads[i][j], num)
			}
		}
	}
}

// weighted turns a tensor into a scalar with fixed random weights, so every
// output element influences the checked gradient differently.
func weighted(y *Tensor, seed uint64) *Tensor {
	w := FromFloat64(randData(seed, int(y.Numel())), y.Shape()...)
	return y.Mul(w).Sum()
}

func TestGradientsOfCompositeOps(t *testing.T) {
	noLeaks(t)
	gradCheck(t, "rmsnorm", []gradInput{{randData(50, 12), []int64{2, 6}}, {randData(51, 6), []int64{6}}},
		func(xs []*Tensor) *Tensor { return weighted(RMSNorm(xs[0], xs[1], 1e-6), 52) })
	gradCheck(t, "softmax", []gradInput{{randData(53, 12), []int64{3, 4}}},
		func(xs []*Tensor) *Tensor { return weighted(xs[0].Softmax(-1), 54) })
	gradCheck(t, "log_softmax+gather", []gradInput{{randData(55, 12), []int64{3, 4}}},
		func(xs []*Tensor) *Tensor {
			return xs[0].LogSoftmax(-1).Gather(1, FromInt64([]int64{1, 3, 0}, 3, 1)).Sum()
		})
	gradCheck(t, "token_logprobs", []gradInput{{randData(56, 12), []int64{3, 4}}},
		func(xs []*Tensor) *Tensor {
			lp, ent := TokenLogProbs(xs[0], FromInt64([]int64{2, 2, 1}), true)
			return weighted(lp, 57).Add(weighted(ent, 58))
		})
	gradCheck(t, "silu", []gradInput{{randData(59, 8), []int64{8}}},
		func(xs []*Tensor) *Tensor { return weighted(xs[0].Silu(), 60) })
	gradCheck(t, "matmul", []gradInput{{randData(61, 6), []int64{2, 3}}, {randData(62, 12), []int64{3, 4}}},
		func(xs []*Tensor) *Tensor { return weighted(xs[0].Matmul(xs[1]), 63) })
	gradCheck(t, "linear", []gradInput{{randData(64, 6), []int64{2, 3}}, {randData(65, 12), []int64{4, 3}}, {randData(66, 4), []int64{4}}},
		func(xs []*Tensor) *Tensor { return weighted(Linear(xs[0], xs[1], xs[2]), 67) })
	gradCheck(t, "rope", []gradInput{{randData(68, 8), []int64{2, 4}}},
		func(xs []*Tensor) *Tensor {
			return weighted(RoPE(xs[0], FromFloat64(randData(69, 4)), FromFloat64(randData(70, 4))), 71)
		})
	for _, explicit := range []bool{true, false} {
		gradCheck(t, "attention", []gradInput{
			{randData(72, 12), []int64{1, 1, 3, 4}}, {randData(73, 12), []int64{1, 1, 3, 4}}, {randData(74, 12), []int64{1, 1, 3, 4}}},
			func(xs []*Tensor) *Tensor {
				return weighted(ScaledDotProductAttention(xs[0], xs[1], xs[2], Attention{Causal: true, Explicit: explicit}), 75)
			})
	}
	gradCheck(t, "embedding", []gradInput{{randData(76, 12), []int64{4, 3}}},
		func(xs []*Tensor) *Tensor { return weighted(Embedding(xs[0], FromInt64([]int64{1, 1, 3})), 77) })
}

func TestAutogradBasics(t *testing.T) {
	noLeaks(t)
	scoped(func() {
		x := FromFloat64([]float64{1, 2, 3}).SetRequiresGrad(true)
		if !x.RequiresGrad() {
			t.Fatal("requires_grad not set")
		}
		if x.Grad() != nil {
			t.Fatal("grad before backward must be nil")
		}
		x.Mul(x).Sum().Backward() // d/dx Σx² = 2x
		closeTo(t, "grad", x.Grad().Float64s(), []float64{2, 4, 6}, 0)
		x.Mul(x).Sum().Backward() // accumulates
		closeTo(t, "accumulated", x.Grad().Float64s(), []float64{4, 8, 12}, 0)
		x.ZeroGrad()
		if x.Grad() != nil {
			t.Fatal("zero_grad leaves the grad undefined")
		}
		y := x.MulScalar(3)
		y.BackwardWith(FromFloat64([]float64{1, 0, 2}))
		closeTo(t, "seeded backward", x.Grad().Float64s(), []float64{3, 0, 6}, 0)
		if x.Detach().RequiresGrad() {
			t.Fatal("detach keeps requires_grad")
		}
		if err := panicsWith(func() { x.MulScalar(2).Backward() }); err == nil {
			t.Fatal("backward of a non-scalar without a seed must fail")
		}
	})
}
