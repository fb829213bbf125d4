package torch

import (
	"fmt"
	"testing"

	"troupe/internal/cpulevel"
)

// TestBFloat16GEMMsSumInFloat32 checks that every GEMM the model runs in
// bfloat16 or float16 on the CPU sums its products in float32 and rounds
// once, whatever kernel ATen would pick on this CPU (csrc/cpu_level.cc:
// libtorch 1.13 without oneDNN — CPUs without AVX-512 — sums in the
// reduced type, and so does any GEMM too small for oneDNN). The inputs
// make the difference exact: a sum 1 + s + s + … (256 terms s) with s below
// half the type's spacing at 1 (2⁻⁹ in bf16, 2⁻¹² in f16) stays at 1 when
// each partial sum is rounded, and is 1 + 256·s in float32 (1.5, 1.0625),
// which the type holds exactly. Checked: Linear's output and both of its
// gradients, attention's weighted sum of values, and the fused log-prob
// head's gradient with respect to the hidden states.
func TestBFloat16GEMMsSumInFloat32(t *testing.T) {
	cpulevel.Each(t) // also at the lesser CPU levels
	noLeaks(t)
	for _, dt := range []DType{BFloat16, Float16} {
		s := 0x1p-9
		if dt == Float16 {
			s = 0x1p-12
		}
		want := 1 + 256*s
		// row [1, s, …, s] of length n, as (1, n)
		ramp := func(n int64) *Tensor {
			r := Full([]int64{1, n}, s, Float32, CPU)
			r.Narrow(1, 0, 1).Fill(1)
			return r.ToDType(dt)
		}
		expect := func(what string, got []float64, want float64) {
			t.Helper()
			for i, v := range got {
				if v != want {
					t.Errorf("%v %s[%d] = %.9g, want %.9g (a float32 sum rounded once; %.9g is what a sum rounded at every step gives)",
						dt, what, i, v, want, 1.0)
					return
				}
			}
		}
		scoped(func() {
			// y = x·Wᵀ: x (2, 257) two ramps, W (3, 257) ones
			x := Cat([]*Tensor{ramp(257), ramp(257)}, 0).SetRequiresGrad(true)
			w := Full([]int64{3, 257}, 1, dt, CPU).SetRequiresGrad(true)
			y := Linear(x, w, nil)
			expect("Linear", y.Float64s(), want)
			// ∂/∂x = g·W and ∂/∂W = gᵀ·x for g = ∂loss/∂y; with y (257, 257)
			// from x = ones and W = ones, g a ramp in each row gives ∂/∂x
			// rows of 1 + 256·s, and g a ramp down each column ∂/∂W the same
			x2 := Full([]int64{257, 257}, 1, dt, CPU).SetRequiresGrad(true)
			w2 := Full([]int64{257, 257}, 1, dt, CPU).SetRequiresGrad(true)
			gRows := ramp(257).Expand(257, 257).Contiguous()
			Linear(x2, w2, nil).BackwardWith(gRows)
			expect("Linear ∂/∂x", x2.Grad().Float64s(), want)
			x2.ZeroGrad()
			w2.ZeroGrad()
			Linear(x2, w2, nil).BackwardWith(gRows.Transpose(0, 1).Contiguous())
			expect("Linear ∂/∂W", w2.Grad().Float64s(), want)

			// attention with q = 0: weights 1/256 over 256 keys; values 256
			// at key 0 and 256·s elsewhere, so the products are 1, s, …, s
			q := Zeros([]int64{1, 2, 1, 4}, dt, CPU)
			k := Zeros([]int64{1, 2, 256, 4}, dt, CPU)
			v := Full([]int64{1, 2, 256, 4}, 256*s, dt, CPU)
			v.Narrow(2, 0, 1).Fill(256)
			for _, explicit := range []bool{true, false} {
				o := ScaledDotProductAttention(q, k, v, Attention{Explicit: explicit})
				expect(fmt.Sprintf("attention (explicit %v)", explicit), o.Float64s(), want)
			}
			qv, kv, vv := q.Reshape(2, 1, 4).Transpose(0, 1), k.Reshape(2, 256, 4).Transpose(0, 1).Contiguous(), v.Reshape(2, 256, 4).Transpose(0, 1).Contiguous()
			ov := VarlenAttention(qv.Contiguous(), kv, vv, Varlen{CuQ: FromInt64([]int64{0, 1}, 2), CuK: FromInt64([]int64{0, 256}, 2), MaxQ: 1, MaxK: 256})
			expect("varlen attention", ov.Float64s(), want)
		})
		scoped(func() {
			// the fused log-prob head at h = 0: every logit 0, p = 1/256 over
			// a vocabulary of 256; ∂logp/∂z = onehot(y) − p, rounded to
			// the type (255/256 and −1/256, both exact), times W, whose rows
			// are 1 at the target and −1/2 elsewhere: 255/256 + 255·2⁻⁹ in
			// float32 for bf16, rounded once to 1.4921875
			if dt != BFloat16 {
				return
			}
			// (hidden 32: 1 × 256 × 32 products, past oneDNN's threshold)
			h := Zeros([]int64{1, 32}, dt, CPU).SetRequiresGrad(true)
			w := Full([]int64{256, 32}, -0.5, dt, CPU)
			w.Narrow(0, 0, 1).Fill(1)
			logp, _ := LinearTokenLogProbs(h, w, FromInt64([]int64{0}, 1), 1, 64, false)
			logp.Sum().Backward()
			expect("log-prob head ∂/∂h", h.Grad().Float64s(), 1.4921875)
		})
	}
}
