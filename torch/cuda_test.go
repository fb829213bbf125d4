package torch

// The op tests on CUDA, run when TROUPE_CUDA=1 (scripts/gpu/window-tests.sh
// sets it; the shim must be the CUDA build of scripts/gpu/build-shim.sh) and
// skipped otherwise: each op on cuda:0 against the same op on the CPU, the
// fused attention kernel against explicit math in f32 and bf16, AdamW and
// clipping on device, seeded CUDA generators, and the allocator figures.

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"testing"
)

func cudaOrSkip(t *testing.T) Device {
	t.Helper()
	if os.Getenv("TROUPE_CUDA") != "1" {
		t.Skip("set TROUPE_CUDA=1 on a GPU machine to run the CUDA op tests")
	}
	if !CUDAAvailable() {
		t.Fatal("TROUPE_CUDA=1 but libtorch sees no CUDA device (LD_LIBRARY_PATH must point at a shim built by scripts/gpu/build-shim.sh)")
	}
	return CUDA(0)
}

func TestCUDAOpsMatchCPU(t *testing.T) {
	dev := cudaOrSkip(t)
	noLeaks(t)
	scoped(func() {
		a := FromFloat64(randData(90, 2*8*16), 2, 8, 16).ToDType(Float32)
		b := FromFloat64(randData(91, 2*16*8), 2, 16, 8).ToDType(Float32)
		w := FromFloat64(randData(92, 16), 16).ToDType(Float32)
		tg := FromInt64([]int64{1, 3, 0, 7, 2, 5, 6, 4})
		both := func(name string, f func(dev Device) *Tensor, tol float64) {
			cpu := f(CPU).Float64s()
			gpu := f(dev)
			if gpu.Device() != dev {
				t.Fatalf("%s ran on %v", name, gpu.Device())
			}
			closeTo(t, name, gpu.Float64s(), cpu, tol)
		}
		on := func(x *Tensor, d Device) *Tensor { return x.ToDevice(d) }
		both("matmul", func(d Device) *Tensor { return on(a, d).Matmul(on(b, d)) }, 1e-4)
		both("rmsnorm", func(d Device) *Tensor { return RMSNorm(on(a, d), on(w, d), 1e-6) }, 1e-5)
		both("softmax", func(d Device) *Tensor { return on(a, d).Softmax(-1) }, 1e-5)
		both("silu", func(d Device) *Tensor { return on(a, d).Silu() }, 1e-6)
		both("cumsum", func(d Device) *Tensor { return on(a, d).Cumsum(-1) }, 1e-5)
		both("logsumexp", func(d Device) *Tensor { return on(a, d).LogSumExp(-1, false) }, 1e-5)
		both("token_logprobs", func(d Device) *Tensor {
			lp, _ := TokenLogProbs(on(a.Reshape(16, 16), d).Narrow(0, 0, 8), on(tg, d), false)
			return lp
		}, 1e-5)
		q := FromFloat64(randData(93, 2*4*6*16), 2, 4, 6, 16).ToDType(Float32)
		mask := Ones([]int64{6, 6}, Bool, CPU).Tril(0)
		for _, dt := range []DType{Float32, BFloat16} {
			tol := 1e-4
			if dt == BFloat16 {
				tol = 3e-2
			}
			x := q.ToDType(dt)
			ref := ScaledDotProductAttention(x, x, x, Attention{Causal: true, Explicit: true}).Float64s()
			fused := ScaledDotProductAttention(on(x, dev), on(x, dev), on(x, dev), Attention{Causal: true}).Float64s()
			closeTo(t, "fused causal attention "+dt.String(), fused, ref, tol)
			masked := ScaledDotProductAttention(on(x, dev), on(x, dev), on(x, dev), Attention{Mask: on(mask, dev)}).Float64s()
			closeTo(t, "fused masked attention "+dt.String(), masked, ref, tol)
		}
	})
}

func TestCUDAAdamWClipAndGenerators(t *testing.T) {
	dev := cudaOrSkip(t)
	noLeaks(t)
	run := func(d Device, dt DType) []float64 {
		var out []float64
		scoped(func() {
			p := FromFloat64(randData(94, 64), 8, 8).To(d, dt).SetRequiresGrad(true)
			opt := NewAdamW([]AdamWGroup{{Params: []*Tensor{p}, LR: 1e-2, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.01}}, dt != Float32)
			defer opt.Free()
			for i := 0; i < 3; i++ {
				s := NewScope()
				p.Square().Sum().Backward()
				ClipGradNorm([]*Tensor{p}, 1)
				opt.Step()
				opt.ZeroGrad()
				s.Close()
			}
			out = p.Float64s()
		})
		return out
	}
	t.Logf("fused AdamW kernel on CUDA: %v", FusedAdamW())
	closeTo(t, "adamw f32 on cuda", run(dev, Float32), run(CPU, Float32), 1e-5)
	closeTo(t, "adamw bf16+master on cuda", run(dev, BFloat16), run(CPU, BFloat16), 1e-2)
	draw := func(seed uint64) []int64 {
		var out []int64
		scoped(func() {
			g := NewGenerator(dev, seed)
			defer g.Free()
			out = Multinomial(Full([]int64{4, 100}, 0.01, Float32, dev), 8, true, g).Int64s()
		})
		return out
	}
	x, y := draw(5), draw(5)
	for i := range x {
		if x[i] != y[i] {
			t.Fatal("a seeded CUDA generator must repeat its draws")
		}
	}
	ResetPeakMemory(dev)
	var alive MemoryStats
	scoped(func() {
		big := Zeros([]int64{1 << 20}, Float32, dev)
		Synchronize(dev)
		alive = Memory(dev)
		if alive.Allocated < 4<<20 || alive.PeakAllocated < alive.Allocated || alive.Reserved < alive.Allocated {
			t.Fatalf("allocator figures with a 4 MiB tensor alive: %+v", alive)
		}
		big.Free()
	})
	EmptyCache()
	if after := Memory(dev); after.Allocated > alive.Allocated-(4<<20) {
		t.Fatalf("freeing a 4 MiB tensor left allocated at %d (was %d)", after.Allocated, alive.Allocated)
	}
}

// The bf16 step with float32 masters holds, above the weights, grads and
// state it keeps (2 + 2 + 12 bytes per parameter), at most one chunk of
// float32 grad copies (256 MiB) and a small constant, not a float32 copy of
// every grad at once (4 more bytes per parameter: 1 GiB for the 256 M
// parameters here).
func TestCUDAAdamWStepPeak(t *testing.T) {
	dev := cudaOrSkip(t)
	if !FusedAdamW() {
		t.Skip("this build steps without the fused kernel (one tensor's copy at a time)")
	}
	const tensors, each = 8, 32 << 20 // 256 M parameters: 4 GiB of bf16 weights, grads and state
	var ps []*Tensor
	for range tensors {
		ps = append(ps, Full([]int64{each}, 0.5, BFloat16, dev).Untrack().SetRequiresGrad(true))
	}
	defer FreeAll(ps...)
	opt := NewAdamW([]AdamWGroup{{Params: ps, LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.01}}, true)
	defer opt.Free()
	grads := func() {
		scoped(func() {
			for _, p := range ps {
				p.Sum().Backward()
			}
		})
	}
	grads()
	opt.Step() // makes the moments
	grads()
	Synchronize(dev)
	held := Memory(dev).Allocated
	ResetPeakMemory(dev)
	opt.Step()
	Synchronize(dev)
	extra := Memory(dev).PeakAllocated - held
	n := int64(tensors * each)
	t.Logf("%d parameters: %.2f B/param held (weights, grads, master, moments); the step's peak %.1f MiB above it (%.3f B/param)",
		n, float64(held)/float64(n), float64(extra)/(1<<20), float64(extra)/float64(n))
	if limit := int64(256<<20) + 64<<20; extra > limit {
		t.Fatalf("the step's peak is %d MiB above what it holds: want at most one 256 MiB chunk of float32 grads and 64 MiB more", extra>>20)
	}
	opt.ZeroGrad()
	EmptyCache()
}

// A CUDA optimizer (the fused kernel where the build has it) resumed from
// another's state — step counts, moments and bf16 master copies — continues
// exactly as the original.
func TestCUDAAdamWStateRoundTrip(t *testing.T) {
	dev := cudaOrSkip(t)
	noLeaks(t)
	for _, dt := range []DType{Float32, BFloat16} {
		mk := func() *Tensor {
			var p *Tensor
			scoped(func() { p = FromFloat32([]float32{1, -2, 3, 0.5}).To(dev, dt).Untrack() }) // the CPU source freed
			return p.SetRequiresGrad(true)
		}
		step := func(p *Tensor, o *AdamW, g []float32) {
			scoped(func() {
				p.Mul(FromFloat32(g).To(dev, dt)).Sum().Backward()
				o.Step()
				o.ZeroGrad()
			})
		}
		groups := func(p *Tensor) []AdamWGroup {
			return []AdamWGroup{{Params: []*Tensor{p}, LR: 0.1, Beta1: 0.9, Beta2: 0.99, Eps: 1e-8, WeightDecay: 0.01}}
		}
		a := mk()
		oa := NewAdamW(groups(a), dt != Float32)
		step(a, oa, []float32{1, 1, -1, 2})
		step(a, oa, []float32{-1, 2, 1, 0.5})
		b := mk()
		NoGrad(func() { b.CopyFrom(a) })
		ob := NewAdamW(groups(b), dt != Float32)
		scoped(func() { ob.LoadState(0, oa.State(0)) })
		step(a, oa, []float32{0.5, -1, 3, 1})
		step(b, ob, []float32{0.5, -1, 3, 1})
		scoped(func() {
			closeTo(t, fmt.Sprintf("resumed %v optimizer on cuda", dt), f32to64(b.ToDType(Float32).Float32s()), f32to64(a.ToDType(Float32).Float32s()), 0)
		})
		oa.Free()
		ob.Free()
		a.Free()
		b.Free()
	}
}

// A captured graph replays its kernels on the tensors it captured: inputs
// updated in place give new outputs, and nothing runs during the capture. An
// op that reads back to the host cannot be captured: it panics, the graph is
// freed, and eager work goes on.
func TestCUDAGraphReplay(t *testing.T) {
	dev := cudaOrSkip(t)
	if !GraphsSupported() {
		t.Fatal("this shim was built without CUDA graphs (scripts/gpu/build-shim.sh says why)")
	}
	noLeaks(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var x *Tensor
	scoped(func() { x = FromFloat32([]float32{1, 2, 3}).ToDevice(dev).Untrack() }) // the CPU source freed
	y := Zeros([]int64{3}, Float32, dev).Untrack()
	defer FreeAll(x, y)
	step := func() { scoped(func() { y.CopyFrom(x.MulScalar(2).AddScalar(1).Add(y)) }) }
	g := NewGraph(dev)
	defer g.Free()
	g.Enter()
	step() // warm-up: y = 2x+1 = 3 5 7
	g.Begin(NewGraphPool())
	step() // recorded only
	g.End()
	g.Exit()
	var got []float32
	scoped(func() { got = y.ToDevice(CPU).Float32s() })
	if fmt.Sprint(got) != "[3 5 7]" {
		t.Fatalf("after warm-up and capture y = %v, want [3 5 7] (the capture must not run)", got)
	}
	scoped(func() { x.CopyFrom(FromFloat32([]float32{10, 20, 30}).ToDevice(dev)) })
	g.Replay() // y = 2x+1+y
	g.Replay()
	scoped(func() { got = y.ToDevice(CPU).Float32s() })
	if fmt.Sprint(got) != "[45 87 129]" {
		t.Fatalf("after two replays y = %v, want [45 87 129]", got)
	}

	bad := NewGraph(dev)
	bad.Enter()
	bad.Begin(GraphPool{})
	func() {
		defer func() {
			if recover() == nil {
				t.Error("reading a value back during a capture did not fail")
			}
		}()
		scoped(func() { _ = x.Sum().Item() })
	}()
	bad.Free()
	scoped(func() { got = x.MulScalar(3).ToDevice(CPU).Float32s() })
	if fmt.Sprint(got) != "[30 60 90]" {
		t.Fatalf("eager work after a failed capture: %v", got)
	}
}

// TestCUDAFusedRMSNorm checks ATen's fused RMSNorm (two kernels) against the
// explicit ops (eight in bf16): float32 outputs and gradients agree to
// rounding; in bf16, where both round the normalised value once and then
// the scaled one, an output may differ only where the float32 sums of
// squares, taken in different orders, make the normalised value round to a
// neighbouring bf16 value: by a step or two after the scale, in few elements.
func TestCUDAFusedRMSNorm(t *testing.T) {
	dev := cudaOrSkip(t)
	if !FusedRMSNorm() {
		t.Skip("this build has no fused RMSNorm (scripts/gpu/build-shim.sh says why)")
	}
	noLeaks(t)
	defer SetFusedRMSNorm(SetFusedRMSNorm(true))
	const rows, dim = 64, 896
	both := func(dt DType, grad bool) (fused, explicit, gx, ex, gw, ew []float64, kf, ke OpCount) {
		scoped(func() {
			x := FromFloat64(randData(100, rows*dim), rows, dim).MulScalar(3).ToDType(dt).ToDevice(dev)
			w := FromFloat64(randData(101, dim), dim).ToDType(dt).ToDevice(dev)
			up := FromFloat64(randData(102, rows*dim), rows, dim).ToDType(dt).ToDevice(dev)
			run := func(on bool) (y, dx, dw []float64, n OpCount) {
				SetFusedRMSNorm(on)
				xi, wi := x.Detach().SetRequiresGrad(grad), w.Detach().SetRequiresGrad(grad)
				var out *Tensor
				n = CountOps(func() { out = RMSNorm(xi, wi, 1e-6) })
				if grad {
					out.Mul(up).ToDType(Float32).Sum().Backward()
					dx, dw = xi.Grad().Float64s(), wi.Grad().Float64s()
				}
				return out.Float64s(), dx, dw, n
			}
			fused, gx, gw, kf = run(true)
			explicit, ex, ew, ke = run(false)
		})
		return
	}
	fused, explicit, gx, ex, gw, ew, kf, ke := both(Float32, true)
	closeTo(t, "f32 output", fused, explicit, 1e-5)
	closeTo(t, "f32 grad x", gx, ex, 1e-4)
	closeTo(t, "f32 grad w", gw, ew, 1e-3)
	fused, explicit, _, _, _, _, kf, ke = both(BFloat16, false)
	t.Logf("bf16 kernels: fused %d, explicit %d", kf.Leaves, ke.Leaves)
	if kf.Leaves >= ke.Leaves || kf.Leaves > 3 {
		t.Errorf("bf16: fused RMSNorm made %d kernel calls, explicit %d; want at most 3 and fewer", kf.Leaves, ke.Leaves)
	}
	differ := 0
	for i := range fused {
		if d := math.Abs(fused[i] - explicit[i]); d != 0 {
			differ++
			_, e := math.Frexp(max(math.Abs(fused[i]), math.Abs(explicit[i])))
			if step := math.Ldexp(1, e-8); d > 2*step { // bf16: 8 significant bits
				t.Fatalf("bf16 element %d: fused %g, explicit %g: more than two bf16 steps apart", i, fused[i], explicit[i])
			}
		}
	}
	t.Logf("bf16: %d of %d outputs differ", differ, len(fused))
	if differ > len(fused)/100 {
		t.Errorf("bf16: %d of %d outputs differ; want at most 1%%", differ, len(fused))
	}
}
