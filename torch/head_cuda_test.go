package torch

// The fused log-prob head (LinearTokenLogProbs, csrc/fused.cc) on cuda:0
// (TROUPE_CUDA=1; skipped otherwise): its bf16 path — GEMMs in bf16, the
// weight grad summed over chunks in float32 — against float64 math on the
// same bf16-rounded inputs, its peak memory against the formula docs/gpu.md
// gives for `train plan`, and a benchmark of it alone at the update
// benchmark's shapes (on the CPU, a small float32 shape).

import (
	"fmt"
	"os"
	"testing"
)

// headInputs are bf16-rounded hidden states (N, D) and weight (V, D) on
// dev, in dt, with targets (N), and the same values in float64 on the CPU.
func headInputs(N, V, D int64, dt DType, dev Device) (h, w, tg, h64, w64 *Tensor) {
	h64 = FromFloat64(randData(130, int(N*D)), N, D).ToDType(BFloat16).ToDType(Float64)
	w64 = FromFloat64(randData(131, int(V*D)), V, D).MulScalar(0.5).ToDType(BFloat16).ToDType(Float64)
	ids := make([]int64, N)
	for i := range ids {
		ids[i] = (int64(i)*7919 + 13) % V
	}
	return h64.ToDType(dt).ToDevice(dev), w64.ToDType(dt).ToDevice(dev), FromInt64(ids).ToDevice(dev), h64, w64
}

// The bf16 head on CUDA over 9 chunks (the float32 grad_w sum in place),
// and in one chunk (the GEMM's own output), against the unfused
// composition in float64 on the same bf16 values: log-probs and entropies
// within the bf16 rounding of the logits (2⁻⁸ of their largest, twice for a
// log-prob), grads within 2⁻⁷ of each grad's largest entry (gz rounds to
// bf16 once, the output once).
func TestCUDALinearTokenLogProbsBFloat16(t *testing.T) {
	dev := cudaOrSkip(t)
	noLeaks(t)
	const N, V, D = 300, 5000, 64
	for _, chunk := range []int64{34, N} {
		for _, temp := range []float64{1, 0.7} {
			scoped(func() {
				h, w, tg, h64, w64 := headInputs(N, V, D, BFloat16, dev)
				h.SetRequiresGrad(true)
				w.SetRequiresGrad(true)
				lp, ent := LinearTokenLogProbs(h, w, tg, temp, chunk, true)
				weighted(lp.ToDevice(CPU), 132).Add(weighted(ent.ToDevice(CPU), 133)).Backward()
				h64.SetRequiresGrad(true)
				w64.SetRequiresGrad(true)
				z := Linear(h64, w64, nil)
				rlp, rent := TokenLogProbs(z.DivScalar(temp), tg.ToDevice(CPU), true)
				weighted(rlp, 132).Add(weighted(rent, 133)).Backward()
				scale := z.Abs().Max().Item() / temp
				name := fmt.Sprintf("chunk %d T=%g", chunk, temp)
				closeTo(t, name+" logp", lp.Float64s(), rlp.Float64s(), 2*scale*0x1p-8)
				closeTo(t, name+" entropy", ent.Float64s(), rent.Float64s(), 2*scale*0x1p-8)
				for _, g := range []struct {
					name      string
					got, want *Tensor
				}{{"grad hidden", h.Grad(), h64.Grad()}, {"grad weight", w.Grad(), w64.Grad()}} {
					if g.got.DType() != BFloat16 {
						t.Fatalf("%s %s is %v, want the weights' bf16", name, g.name, g.got.DType())
					}
					closeTo(t, name+" "+g.name, g.got.Float64s(), g.want.Float64s(), g.want.Abs().Max().Item()*0x1p-7)
				}
			})
		}
	}
}

// headPeakBytes is the most the fused head allocates on CUDA for a bf16
// model (b = 2 bytes) beyond its inputs, by the formula of docs/gpu.md:
// the backward's float32 sum of grad_w (4·V·D) with, per chunk of c rows,
// the logits and their float32 softmax ((b + 4)·c·V), or at the end the
// grad rounded to bf16 (b·V·D), and grad_h (b·N·D); the forward's
// (b + 4)·c·V is smaller. One chunk (N ≤ c) needs no float32 sum.
func headPeakBytes(N, V, D, chunk int64) int64 {
	const b = 2
	c := min(chunk, N)
	if N <= chunk {
		return max((b+4)*c*V, b*c*V+b*V*D) + b*N*D
	}
	return 4*V*D + max((b+4)*c*V, b*V*D) + b*N*D
}

// The head's peak on CUDA at the 0.5B update's vocabulary and width, bf16,
// within headPeakBytes (plus 64 MiB for cuBLAS's workspace and the
// allocator's rounding): what `train plan` counts for it.
func TestCUDALinearTokenLogProbsPeakMemory(t *testing.T) {
	dev := cudaOrSkip(t)
	noLeaks(t)
	const V, D, chunk = 151936, 896, 1024
	for _, N := range []int64{6144, 1000} {
		scoped(func() {
			h := Randn([]int64{N, D}, BFloat16, dev, nil).SetRequiresGrad(true)
			w := Randn([]int64{V, D}, BFloat16, dev, nil).MulScalar(0.02).Detach().SetRequiresGrad(true)
			tg := Zeros([]int64{N}, Int64, dev)
			run := func() {
				lp, _ := LinearTokenLogProbs(h, w, tg, 1, chunk, false)
				lp.Sum().Backward()
			}
			run() // cuBLAS workspace, allocator pools
			h.ZeroGrad()
			w.ZeroGrad()
			Synchronize(dev)
			base := Memory(dev).Allocated
			ResetPeakMemory(dev)
			run()
			Synchronize(dev)
			peak := Memory(dev).PeakAllocated - base
			want := headPeakBytes(N, V, D, chunk)
			t.Logf("N %d: peak %.1f MiB above the inputs; formula %.1f MiB (%.2f×)", N, float64(peak)/(1<<20), float64(want)/(1<<20), float64(peak)/float64(want))
			if peak > want+64<<20 {
				t.Errorf("N %d: the head's peak %.1f MiB exceeds the planned %.1f MiB", N, float64(peak)/(1<<20), float64(want)/(1<<20))
			}
		})
	}
}

// BenchmarkLinearTokenLogProbs is the head alone, forward and backward as
// the update runs it: with the entropy not computed ("none"), computed for
// the metric only ("metric"), or in the loss ("loss"), at temperature 1 and
// 0.7. On cuda:0 (TROUPE_CUDA=1) bf16 at the update benchmark's shapes: N =
// 6,144 response positions, V = 151,936, D = 896 (0.5B) or 1,536 (1.5B,
// TROUPE_BENCH_SHAPE=1.5b); on the CPU float32 N = 256, V = 8,192, D = 128.
// Reports the head's FLOP rate (8·N·V·D: the forward's projection, the
// backward's again, grad_h and grad_w) and, on CUDA, the peak above the
// inputs.
func BenchmarkLinearTokenLogProbs(b *testing.B) {
	dev, dt := CPU, Float32
	N, V, D := int64(256), int64(8192), int64(128)
	if os.Getenv("TROUPE_CUDA") == "1" && CUDAAvailable() {
		dev, dt = CUDA(0), BFloat16
		N, V, D = 6144, 151936, 896
		if os.Getenv("TROUPE_BENCH_SHAPE") == "1.5b" {
			D = 1536
		}
	}
	const chunk = 1024
	for _, use := range []string{"none", "metric", "loss"} {
		for _, temp := range []float64{1, 0.7} {
			b.Run(fmt.Sprintf("D=%d/entropy=%s/T=%g", D, use, temp), func(b *testing.B) {
				s := NewScope()
				defer s.Close()
				h := Randn([]int64{N, D}, dt, dev, nil).SetRequiresGrad(true)
				w := Randn([]int64{V, D}, dt, dev, nil).MulScalar(0.02).Detach().SetRequiresGrad(true)
				tg := Zeros([]int64{N}, Int64, dev)
				step := func() {
					is := NewScope()
					defer is.Close()
					lp, ent := LinearTokenLogProbs(h, w, tg, temp, chunk, use != "none")
					loss := lp.Sum()
					if use == "loss" {
						loss = loss.Add(ent.Sum().MulScalar(0.01))
					}
					loss.Backward()
					h.ZeroGrad()
					w.ZeroGrad()
				}
				step()
				Synchronize(dev)
				base := Memory(dev).Allocated
				ResetPeakMemory(dev)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					step()
				}
				Synchronize(dev)
				sec := b.Elapsed().Seconds() / float64(b.N)
				b.ReportMetric(sec*1e3, "ms/op")
				b.ReportMetric(8*float64(N*V*D)/sec/1e12, "TFLOP/s")
				if dev.IsCUDA() {
					b.ReportMetric(float64(Memory(dev).PeakAllocated-base)/(1<<20), "peak_MiB")
					b.ReportMetric(float64(headPeakBytes(N, V, D, chunk))/(1<<20), "planned_MiB")
				}
			})
		}
	}
}
