package torch

import (
	"math"
	"strings"
	"sync"
	"testing"
)

func TestCreationAndCopies(t *testing.T) {
	noLeaks(t)
	scoped(func() {
		x := FromFloat32([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
		if got := x.Shape(); len(got) != 2 || got[0] != 2 || got[1] != 3 {
			t.Fatalf("shape %v", got)
		}
		if x.DType() != Float32 || x.Device() != CPU || x.Numel() != 6 || x.Dim() != 2 {
			t.Fatalf("metadata %v", x)
		}
		closeTo(t, "f64", x.Float64s(), []float64{1, 2, 3, 4, 5, 6}, 0)
		if got := x.To(CPU, Int64).Int64s(); got[5] != 6 {
			t.Fatalf("int64 copy %v", got)
		}
		i := FromInt64([]int64{-3, 7})
		if got := i.AddScalar(2); got.DType() != Int64 || got.Int64s()[0] != -1 {
			t.Fatalf("integer tensor + integral scalar must stay integer: %v %v", got, got.Int64s())
		}
		if got := i.MulScalar(0.5); got.DType() != Float32 {
			t.Fatalf("integer tensor * 0.5 should promote to float, got %v", got.DType())
		}
		b := FromBool([]bool{true, false, true})
		if got := b.Bools(); !got[0] || got[1] || !got[2] {
			t.Fatalf("bools %v", got)
		}
		z := Zeros([]int64{2, 2}, Float64, CPU)
		o := Ones([]int64{2, 2}, Float64, CPU)
		f := Full([]int64{3}, 2.5, Float32, CPU)
		closeTo(t, "zeros+ones", z.Add(o).Float64s(), []float64{1, 1, 1, 1}, 0)
		closeTo(t, "full", f.Float64s(), []float64{2.5, 2.5, 2.5}, 0)
		closeTo(t, "arange", Arange(0, 5, 2, Float32, CPU).Float64s(), []float64{0, 2, 4}, 0)
		if got := Arange(0, 4, 1, Int64, CPU); got.DType() != Int64 || got.Numel() != 4 {
			t.Fatalf("int arange %v", got)
		}
		s := Scalar(3, Float32, CPU)
		if s.Dim() != 0 || s.Item() != 3 {
			t.Fatalf("scalar %v %v", s, s.Item())
		}
		e := Empty([]int64{0, 4}, Float32, CPU)
		if e.Numel() != 0 || len(e.Float32s()) != 0 {
			t.Fatalf("empty tensor %v", e)
		}
	})
}

func TestFromBytesLayout(t *testing.T) {
	noLeaks(t)
	scoped(func() {
		// 1.0 and -2.0 as little-endian float32
		raw := []byte{0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0}
		x := FromBytes(raw, Float32, 2)
		closeTo(t, "values", x.Float64s(), []float64{1, -2}, 0)
		if got := x.Bytes(); string(got) != string(raw) {
			t.Fatalf("bytes round trip %x", got)
		}
		// bf16 1.0 = 0x3f80, -2.0 = 0xc000
		bf := FromBytes([]byte{0x80, 0x3f, 0x00, 0xc0}, BFloat16, 2)
		closeTo(t, "bf16", bf.Float64s(), []float64{1, -2}, 0)
		if err := panicsWith(func() { FromBytes(raw, Float32, 3) }); err == nil {
			t.Fatal("size mismatch must panic with *Error")
		}
	})
}

func TestBFloat16RoundTrip(t *testing.T) {
	noLeaks(t)
	scoped(func() {
		vals := []float32{0, 1, -1, 0.5, 3.140625, 65280, -1e-3, 1e30}
		x := FromFloat32(vals)
		back := x.ToDType(BFloat16).ToDType(Float32).Float32s()
		for i, v := range vals {
			// bf16 keeps 8 significant bits: relative error ≤ 2^-8
			if d := math.Abs(float64(back[i] - v)); d > math.Abs(float64(v))/256 {
				t.Fatalf("bf16 round trip of %g gave %g", v, back[i])
			}
		}
		// values exactly representable in bf16 survive bit for bit
		for _, i := range []int{0, 1, 2, 3, 4, 5} {
			if back[i] != vals[i] {
				t.Fatalf("exact bf16 value %g became %g", vals[i], back[i])
			}
		}
		// round to nearest even: 1 + 2^-8 lies halfway between 1 and 1 + 2^-7
		h := FromFloat32([]float32{1 + 1.0/256, 1 + 3.0/256}).ToDType(BFloat16).Float32s()
		if h[0] != 1 || h[1] != 1+4.0/256 {
			t.Fatalf("ties to even: got %v", h)
		}
		f16 := FromFloat32([]float32{1.5, -0.25}).ToDType(Float16).Float64s()
		closeTo(t, "f16", f16, []float64{1.5, -0.25}, 0)
	})
}

func TestScopeFreesAndKeeps(t *testing.T) {
	noLeaks(t)
	start := LiveTensors()
	var kept *Tensor
	func() {
		outer := NewScope()
		defer outer.Close()
		func() {
			inner := NewScope()
			defer inner.Close()
			a := Ones([]int64{3}, Float32, CPU)
			b := a.MulScalar(2)
			kept = inner.Keep(b.AddScalar(1))
			if LiveTensors()-start != 3 {
				t.Fatalf("want 3 live tensors, got %d", LiveTensors()-start)
			}
		}()
		if kept.Freed() || LiveTensors()-start != 1 {
			t.Fatalf("inner scope must free a, b but keep the result (live %d)", LiveTensors()-start)
		}
		closeTo(t, "kept", kept.Float64s(), []float64{3, 3, 3}, 0)
		if outer.Len() != 1 {
			t.Fatalf("kept tensor should now belong to the outer scope, outer owns %d", outer.Len())
		}
	}()
	if !kept.Freed() {
		t.Fatal("outer scope must free the tensor kept into it")
	}
	// Free is idempotent, and use after free is a clean *Error
	kept.Free()
	if err := panicsWith(func() { kept.AddScalar(1) }); err == nil || !strings.Contains(err.Msg, "freed") {
		t.Fatalf("use after free: %v", err)
	}
}

func TestScopeClosesForgottenInnerScopes(t *testing.T) {
	noLeaks(t)
	outer := NewScope()
	Ones([]int64{2}, Float32, CPU)
	NewScope() // never closed by its opener, as when a panic unwinds past it
	Ones([]int64{2}, Float32, CPU)
	outer.Close()
	outer.Close() // idempotent
	if s := NewScope(); s.parent != nil {
		t.Fatal("closing the outer scope must also pop the inner one")
	} else {
		s.Close()
	}
}

func TestErrorPathSurvives(t *testing.T) {
	noLeaks(t)
	scoped(func() {
		a := Ones([]int64{2, 3}, Float32, CPU)
		b := Ones([]int64{4, 5}, Float32, CPU)
		err := panicsWith(func() { a.Matmul(b) })
		if err == nil {
			t.Fatal("a (2,3) x (4,5) matmul must fail")
		}
		if err.Op != "matmul" || !strings.Contains(err.Msg, "2x3") {
			t.Fatalf("error should carry the op and libtorch's message, got %q", err.Error())
		}
		// the process and the tensors are fine afterwards
		closeTo(t, "after error", a.Sum().Float64s(), []float64{6}, 0)
	})
	var err error
	func() {
		defer Recover(&err)
		scoped(func() { Ones([]int64{2}, Float32, CPU).View(3) })
	}()
	if err == nil || !strings.HasPrefix(err.Error(), "torch: view:") {
		t.Fatalf("Recover should turn the panic into an error, got %v", err)
	}
}

func TestRecoverLetsOtherPanicsThrough(t *testing.T) {
	defer func() {
		if r := recover(); r != "boom" {
			t.Fatalf("want the original panic, got %v", r)
		}
	}()
	var err error
	func() {
		defer Recover(&err)
		panic("boom")
	}()
}

// The thread-local grad mode stays correct from Go: inside NoGrad results
// never require grad, however often the goroutine yields; outside it,
// goroutines on other threads are unaffected.
func TestGradModeIsThreadSafeFromGo(t *testing.T) {
	noLeaks(t)
	w := Ones([]int64{4}, Float32, CPU).SetRequiresGrad(true)
	defer w.Free()
	NoGrad(func() {
		for i := 0; i < 200; i++ {
			scoped(func() {
				if w.MulScalar(2).RequiresGrad() {
					t.Fatalf("iteration %d: op inside NoGrad recorded grad", i)
				}
			})
			if i%10 == 0 {
				// let the scheduler run other goroutines; a locked goroutine keeps its thread
				var wg sync.WaitGroup
				wg.Add(1)
				go func() { defer wg.Done() }()
				wg.Wait()
			}
		}
	})
	// every other thread still has grad on
	var wg sync.WaitGroup
	bad := make(chan int, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			if !GradEnabled() {
				bad <- g
			}
		}(g)
	}
	wg.Wait()
	close(bad)
	for g := range bad {
		t.Fatalf("goroutine %d saw grad mode off outside NoGrad", g)
	}
	scoped(func() {
		if !w.MulScalar(2).RequiresGrad() {
			t.Fatal("after NoGrad, ops must record grad again")
		}
	})
	// a panic inside NoGrad restores the mode too
	func() {
		defer func() { recover() }()
		NoGrad(func() { panic("inside") })
	}()
	if !GradEnabled() {
		t.Fatal("grad mode not restored after a panic inside NoGrad")
	}
}

func TestRuntime(t *testing.T) {
	major, minor, _ := Version()
	if major < 1 || (major == 1 && minor < 13) {
		t.Fatalf("libtorch %d.%d: troupe needs 1.13 or newer", major, minor)
	}
	if NumThreads() < 1 {
		t.Fatal("thread count must be positive")
	}
	if !CUDAAvailable() {
		if CUDADeviceCount() != 0 {
			t.Fatal("no CUDA but a device count")
		}
		if m := Memory(CUDA(0)); m != (MemoryStats{}) {
			t.Fatalf("CPU build must report zero CUDA memory, got %+v", m)
		}
	}
	// the CPU's: zeros until TrackCPUMemory (TestCPUMemoryStatistics), then
	// what the CPU allocator holds, its peak at least that
	if m := Memory(CPU); m.Allocated < 0 || m.Reserved != m.Allocated || m.PeakAllocated < m.Allocated {
		t.Fatalf("CPU memory stats: %+v", m)
	}
	Synchronize(CPU)
	EmptyCache()
	if FusedSDPAAvailable() != (major >= 2 && (major > 2 || minor >= 1)) {
		t.Fatalf("fused SDPA availability wrong for libtorch %d.%d", major, minor)
	}
}

func TestParseDTypeAndDevice(t *testing.T) {
	for s, want := range map[string]DType{"bf16": BFloat16, "float32": Float32, "FP16": Float16} {
		if got, err := ParseDType(s); err != nil || got != want {
			t.Fatalf("ParseDType(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := ParseDType("int4"); err == nil || !strings.Contains(err.Error(), "int4") {
		t.Fatalf("bad dtype error: %v", err)
	}
	for s, want := range map[string]Device{"cpu": CPU, "cuda": CUDA(0), "cuda:3": CUDA(3)} {
		if got, err := ParseDevice(s); err != nil || got != want {
			t.Fatalf("ParseDevice(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := ParseDevice("tpu"); err == nil {
		t.Fatal("tpu must be refused")
	}
}
