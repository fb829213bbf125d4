package torch

import "testing"

// The fused op equals the unfused composition (values and both gradients),
// for chunk sizes that do and do not divide N, with temperature and entropy.
func TestLinearTokenLogProbsMatchesUnfused(t *testing.T) {
	noLeaks(t)
	const N, D, V = 7, 5, 11
	targets := []int64{0, 10, 3, 3, 7, 1, 9}
	for _, dt := range []DType{Float64, Float32} {
		tol := 1e-12
		if dt == Float32 {
			tol = 1e-5
		}
		for _, chunk := range []int64{1, 3, 7, 100} {
			run := func(fused bool) (lp, ent, gh, gw []float64) {
				scoped(func() {
					h := FromFloat64(randData(100, N*D), N, D).ToDType(dt).SetRequiresGrad(true)
					w := FromFloat64(randData(101, V*D), V, D).ToDType(dt).SetRequiresGrad(true)
					tg := FromInt64(targets)
					var l, e *Tensor
					if fused {
						l, e = LinearTokenLogProbs(h, w, tg, 0.7, chunk, true)
					} else {
						l, e = TokenLogProbs(Linear(h, w, nil).DivScalar(0.7), tg, true)
					}
					weighted(l, 102).Add(weighted(e, 103)).Backward()
					lp, ent, gh, gw = l.Float64s(), e.Float64s(), h.Grad().Float64s(), w.Grad().Float64s()
				})
				return
			}
			a1, a2, a3, a4 := run(true)
			b1, b2, b3, b4 := run(false)
			name := dt.String()
			closeTo(t, name+" logp", a1, b1, tol)
			closeTo(t, name+" entropy", a2, b2, tol)
			closeTo(t, name+" grad hidden", a3, b3, tol)
			closeTo(t, name+" grad weight", a4, b4, tol)
		}
	}
	// finite differences on the fused op itself, log-probs only (no entropy)
	gradCheck(t, "linear_token_logprobs", []gradInput{{randData(104, 4*3), []int64{4, 3}}, {randData(105, 6*3), []int64{6, 3}}},
		func(xs []*Tensor) *Tensor {
			lp, ent := LinearTokenLogProbs(xs[0], xs[1], FromInt64([]int64{5, 0, 2, 2}), 1, 3, false)
			if ent != nil {
				t.Fatal("entropy returned without being asked for")
			}
			return weighted(lp, 106)
		})
	scoped(func() {
		if err := panicsWith(func() {
			LinearTokenLogProbs(Ones([]int64{2, 3}, Float32, CPU), Ones([]int64{5, 4}, Float32, CPU), FromInt64([]int64{0, 1}), 1, 4, false)
		}); err == nil {
			t.Fatal("mismatched hidden and weight sizes must be refused")
		}
	})
}
