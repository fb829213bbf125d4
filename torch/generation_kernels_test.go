package torch

import "testing"

// TestGenerationKernelsMatchATen compares the CPU generation kernels
// (csrc/cpu_fast.cc) with the ATen math they replace, on the layouts the
// engine feeds them: a one-row Linear with and without bias, RoPE over a
// strided view of a fused projection, RMSNorm over a matrix and a 3-d
// tensor; float32 and float64. Off (the default) and with a gradient wanted,
// the ATen math runs and stays differentiable.
func TestGenerationKernelsMatchATen(t *testing.T) {
	noLeaks(t)
	for _, dt := range []DType{Float32, Float64} {
		tol := 2e-6
		if dt == Float64 {
			tol = 1e-13
		}
		scoped(func() {
			x := FromFloat64(randData(1, 1*40), 1, 40).ToDType(dt)
			w := FromFloat64(randData(2, 24*40), 24, 40).ToDType(dt)
			b := FromFloat64(randData(3, 24), 24).ToDType(dt)
			fused := FromFloat64(randData(4, 3*10*16), 3, 10, 16).ToDType(dt)
			q := fused.Narrow(1, 0, 6) // (3,6,16), rows 10·16 apart
			cos := FromFloat64(randData(5, 3*16), 3, 1, 16).ToDType(dt)
			sin := FromFloat64(randData(6, 3*16), 3, 1, 16).ToDType(dt)
			h2 := FromFloat64(randData(7, 5*40), 5, 40).ToDType(dt)
			h3 := FromFloat64(randData(8, 2*3*40), 2, 3, 40).ToDType(dt)
			nw := FromFloat64(randData(9, 40), 40).ToDType(dt)
			run := func() [][]float64 {
				return [][]float64{Linear(x, w, b).Float64s(), Linear(x, w, nil).Float64s(), RoPE(q, cos, sin).Float64s(),
					RMSNorm(h2, nw, 1e-6).Float64s(), RMSNorm(h3, nw, 1e-6).Float64s(), RMSNorm(h2.Narrow(1, 0, 40), nw, 1e-6).Float64s()}
			}
			var want, got [][]float64
			NoGrad(func() { want = run() })
			GenerationKernels(func() { NoGrad(func() { got = run() }) })
			for i := range want {
				closeTo(t, dt.String()+" "+[]string{"linear+bias", "linear", "rope", "rmsnorm 2-d", "rmsnorm 3-d", "rmsnorm view"}[i], got[i], want[i], tol)
			}
			// with a gradient wanted the kernels stand aside
			GenerationKernels(func() {
				xg := x.Detach().SetRequiresGrad(true)
				Linear(xg, w, b).Sum().Backward()
				if xg.Grad() == nil {
					t.Errorf("%v: one-row Linear under GenerationKernels with grad: no gradient", dt)
				}
			})
		})
	}
}
