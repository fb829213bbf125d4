package torch

import (
	"fmt"
	"testing"

	"troupe/internal/cpulevel"
)

// TestGenerationKernelsMatchATen compares the CPU generation kernels
// (csrc/cpu_fast.cc, csrc/linear_cpu.cc) with the ATen math they replace,
// on the layouts the engine feeds them: a decode step's Linear of one and
// of several rows, with and without bias, RoPE over a
// strided view of a fused projection, RMSNorm over a matrix and a 3-d
// tensor; float32 and float64. Off (the default) and with a gradient wanted,
// the ATen math runs and stays differentiable.
func TestGenerationKernelsMatchATen(t *testing.T) {
	cpulevel.Each(t) // also at the lesser CPU levels
	noLeaks(t)
	for _, dt := range []DType{Float32, Float64} {
		tol := 2e-6
		if dt == Float64 {
			tol = 1e-13
		}
		scoped(func() {
			x := FromFloat64(randData(1, 1*40), 1, 40).ToDType(dt)
			x5 := FromFloat64(randData(10, 5*3*40), 5, 3, 40).ToDType(dt).Narrow(1, 1, 1).Reshape(5, 40) // rows 120 apart
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
				return [][]float64{Linear(x, w, b).Float64s(), Linear(x, w, nil).Float64s(), Linear(x5, w, b).Float64s(),
					Linear(h3, w, nil).Float64s(), RoPE(q, cos, sin).Float64s(),
					RMSNorm(h2, nw, 1e-6).Float64s(), RMSNorm(h3, nw, 1e-6).Float64s(), RMSNorm(h2.Narrow(1, 0, 40), nw, 1e-6).Float64s()}
			}
			var want, got [][]float64
			NoGrad(func() { want = run() })
			DecodeKernels(func() { NoGrad(func() { got = run() }) })
			for i := range want {
				closeTo(t, dt.String()+" "+[]string{"linear+bias", "linear", "linear 5 rows", "linear 3-d", "rope", "rmsnorm 2-d", "rmsnorm 3-d", "rmsnorm view"}[i], got[i], want[i], tol)
			}
			// with a gradient wanted the kernels stand aside
			DecodeKernels(func() {
				xg := x.Detach().SetRequiresGrad(true)
				Linear(xg, w, b).Sum().Backward()
				if xg.Grad() == nil {
					t.Errorf("%v: one-row Linear under GenerationKernels with grad: no gradient", dt)
				}
			})
		})
	}
}

// TestLinearRowsInvariant checks what lets the CPU kernels run by default:
// under DecodeKernels (and under GenerationKernels where the kernel takes
// prefills too, on AVX-512) a row's output is bit-identical whether it is
// computed alone or beside others, whatever the batch size and wherever the
// row sits in it (tiles of 2 or 4 rows × 4 outputs: sizes around multiples
// of 4; input widths that leave a remainder after the vector lanes), and
// for more rows than one cache-sized chunk. TROUPE_CPU_SIMD=avx2 or baseline
// runs it on a lesser variant.
func TestLinearRowsInvariant(t *testing.T) {
	cpulevel.Each(t) // also at the lesser CPU levels
	noLeaks(t)
	variant := CPUKernelsVariant()
	if variant == "baseline" {
		t.Skip("without AVX2 the CPU kernels leave Linear to ATen's GEMM")
	}
	kinds := map[string]func(func()){"decode": DecodeKernels}
	if variant == "avx512" {
		kinds["prefill"] = GenerationKernels
	}
	for kind, kernels := range kinds {
		for _, dt := range []DType{Float32, Float64} {
			for _, shape := range [][3]int64{{70, 23, 37}, {64, 16, 37}, {5, 3, 37}, {1100, 9, 70}} { // in, out, rows
				K, N, M := shape[0], shape[1], shape[2]
				scoped(func() {
					x := FromFloat64(randData(11, int(M*K)), M, K).ToDType(dt)
					w := FromFloat64(randData(12, int(N*K)), N, K).ToDType(dt)
					b := FromFloat64(randData(13, int(N)), N).ToDType(dt)
					var whole []float64
					kernels(func() { NoGrad(func() { whole = Linear(x, w, b).Float64s() }) })
					closeTo(t, fmt.Sprintf("%s %v %v vs ATen", kind, dt, shape), whole, Linear(x, w, b).Float64s(), 1e-5)
					for _, size := range []int64{1, 2, 3, 4, 5, 8, 13} {
						for start := int64(0); start+size <= M; start += size {
							var part []float64
							kernels(func() { NoGrad(func() { part = Linear(x.Narrow(0, start, size), w, b).Float64s() }) })
							for i, v := range part {
								if v != whole[int(start*N)+i] {
									t.Fatalf("%s %v in %d out %d (%s): row %d computed in a batch of %d gives %v, in the batch of %d %v",
										kind, dt, K, N, variant, start+int64(i)/N, size, v, M, whole[int(start*N)+i])
								}
							}
						}
					}
				})
			}
		}
	}
}
