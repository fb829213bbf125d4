package torch

import (
	"math"
	"testing"
)

// bf16 rounds a float32 to the nearest bfloat16 (ties to even), as ATen
// stores the float32 result of each bf16 operation.
func bf16(x float32) float32 {
	b := math.Float32bits(x)
	b += 0x7fff + (b>>16)&1
	return math.Float32frombits(b &^ 0xffff)
}

// bf16Leaf is a bf16 weight holding xs (exact in bf16), owned by the caller.
func bf16Leaf(xs []float32, shape ...int64) *Tensor {
	f := FromFloat32(xs, shape...)
	defer f.Free()
	return f.ToDType(BFloat16).Untrack().SetRequiresGrad(true)
}

// AdamWOwnDType steps a bf16 weight as torch.optim.AdamW's single-tensor
// path does on bf16 parameters (torch/optim/adamw.py, _single_tensor_adamw):
// moments of the weight's dtype, each operation computed in float32 and
// rounded to bf16 — decay, lerp, mul + addcmul, sqrt / √bc2 + ε, addcdiv —
// against that formula emulated here element by element. Then the point of
// the mode: an update below half a bf16 step of the weight is lost every
// step, where float32 masters accumulate it.
func TestAdamWOwnDTypeRoundsAsTorch(t *testing.T) {
	noLeaks(t)
	w0 := []float32{1, -1, 1.5, 2, 0.75, -3}
	grads := [][]float32{{1, -1, 0.5, 0.25, -2, 4}, {0.5, 1, -0.25, 1, 1, -1}, {2, 0.125, 1, -1, 0.5, 3}}
	const lr, b1, b2, eps, wd = 0.05, 0.9, 0.999, 1e-8, 0.01
	// the formula, op by op, in bf16
	w := append([]float32(nil), w0...)
	m := make([]float32, len(w))
	v := make([]float32, len(w))
	for k, g := range grads {
		step := float64(k + 1)
		bc1, bc2 := 1-math.Pow(b1, step), 1-math.Pow(b2, step)
		for i := range w {
			w[i] = bf16(w[i] * float32(1-lr*wd))
			m[i] = bf16(m[i] + float32(1-b1)*(g[i]-m[i])) // lerp, weight < 0.5
			v[i] = bf16(v[i] * float32(b2))
			v[i] = bf16(v[i] + float32(1-b2)*g[i]*g[i])
			d := bf16(float32(math.Sqrt(float64(v[i]))))
			d = bf16(d / float32(math.Sqrt(bc2)))
			d = bf16(d + float32(eps))
			w[i] = bf16(w[i] + float32(-lr/bc1)*(m[i]/d))
		}
	}
	param := bf16Leaf(w0, 2, 3)
	defer param.Free()
	opt := NewAdamWMode([]AdamWGroup{{Params: []*Tensor{param}, LR: lr, Beta1: b1, Beta2: b2, Eps: eps, WeightDecay: wd}}, AdamWOwnDType)
	defer opt.Free()
	for _, g := range grads {
		scoped(func() {
			param.Mul(FromFloat32(g, 2, 3).ToDType(BFloat16)).Sum().Backward() // grad = g, exact in bf16
			opt.Step()
			opt.ZeroGrad()
		})
	}
	scoped(func() {
		st := opt.State(0)
		if st.Master != nil || st.ExpAvg.DType() != BFloat16 || st.ExpAvgSq.DType() != BFloat16 || param.DType() != BFloat16 {
			t.Fatalf("state: master %v, moments %v and %v, weight %v; want no master and bf16 everywhere", st.Master != nil, st.ExpAvg.DType(), st.ExpAvgSq.DType(), param.DType())
		}
		closeTo(t, "exp_avg", f32to64(st.ExpAvg.ToDType(Float32).Float32s()), f32to64(m), 0)
		closeTo(t, "exp_avg_sq", f32to64(st.ExpAvgSq.ToDType(Float32).Float32s()), f32to64(v), 0)
		closeTo(t, "weights after 3 steps", f32to64(param.ToDType(Float32).Float32s()), f32to64(w), 0)
	})

	// lr 1e-3 on weights of magnitude 1–2 moves each by about 1e-3 a step,
	// under half their bf16 step (2⁻⁸ or 2⁻⁷): lost without a master, kept
	// by one (five steps: 1 − 0.005 rounds to 0.99609375)
	lost := func(mode AdamWMode) []float32 {
		p := bf16Leaf([]float32{1, -1, 1.5, 2}, 4)
		defer p.Free()
		o := NewAdamWMode([]AdamWGroup{{Params: []*Tensor{p}, LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}}, mode)
		defer o.Free()
		for range 5 {
			scoped(func() {
				p.Mul(FromFloat32([]float32{1, -1, 1, 1}).ToDType(BFloat16)).Sum().Backward()
				o.Step()
				o.ZeroGrad()
			})
		}
		var out []float32
		scoped(func() { out = p.ToDType(Float32).Float32s() })
		return out
	}
	if got := lost(AdamWOwnDType); got[0] != 1 || got[1] != -1 || got[2] != 1.5 || got[3] != 2 {
		t.Errorf("bf16 state: weights %v after five steps of 1e-3, want them unchanged (each update rounds away)", got)
	}
	if got := lost(AdamWMasters); got[0] != 0.99609375 || got[1] != -0.99609375 {
		t.Errorf("float32 masters: weights %v after five steps of 1e-3, want 1 − 0.005 rounded to 0.99609375 (and −)", got)
	}
}
