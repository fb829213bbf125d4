package torch

import (
	"math"
	"strings"
	"testing"
)

// TestThreadScopesAreItsOwn interleaves two stacks step by step: the
// torch goroutine's scope and a Thread's scope are open at once, each
// makes a tensor, and the one opened first closes first. With one
// process-wide stack the Thread's tensor would land in the Thread's scope
// on top, the first Close would close that scope too and free it.
func TestThreadScopesAreItsOwn(t *testing.T) {
	noLeaks(t)
	th := NewThread()
	defer th.Close()

	outer := NewScope() // the torch goroutine's
	var inner *Scope
	var onThread *Tensor
	if err := th.Run(func() error {
		inner = NewScope()
		onThread = FromFloat32([]float32{1, 2}, 2)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	here := FromFloat32([]float32{3}, 1) // after the Thread's scope opened
	if here.owner != outer {
		t.Errorf("the torch goroutine's tensor went to %p, not its own scope %p", here.owner, outer)
	}
	outer.Close()
	if !here.Freed() {
		t.Error("the torch goroutine's tensor outlived its scope")
	}
	if onThread.Freed() || inner.Len() != 1 {
		t.Fatalf("closing the torch goroutine's scope freed the Thread's tensor (freed %v, its scope holds %d)", onThread.Freed(), inner.Len())
	}
	if err := th.Run(func() error {
		if got := onThread.Float64s(); got[1] != 2 {
			t.Errorf("the Thread's tensor reads %v", got)
		}
		inner.Close()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !onThread.Freed() {
		t.Error("the Thread's scope did not free its tensor")
	}
}

// TestThreadCloseFreesOpenScopes: a Thread whose work left a scope open
// frees that scope's tensors when it closes; the process-wide stack is
// untouched.
func TestThreadCloseFreesOpenScopes(t *testing.T) {
	noLeaks(t)
	s := NewScope()
	defer s.Close()
	th := NewThread()
	var left *Tensor
	if err := th.Run(func() error {
		NewScope()
		NewScope()
		left = Ones([]int64{4}, Float32, CPU)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	th.Close()
	th.Close() // idempotent
	if !left.Freed() {
		t.Error("a tensor of a scope left open on the Thread outlived it")
	}
	if x := Ones([]int64{1}, Float32, CPU); x.owner != s {
		t.Error("after the Thread closed, a tensor here is not in this goroutine's scope")
	}
}

// TestThreadErrors: a libtorch failure on the Thread comes back as its
// *Error, another panic as an error naming it, and the Thread still works.
func TestThreadErrors(t *testing.T) {
	noLeaks(t)
	th := NewThread()
	defer th.Close()
	err := th.Run(func() error {
		scoped(func() { FromFloat32([]float32{1, 2}, 2).Add(FromFloat32([]float32{1, 2, 3}, 3)) })
		return nil
	})
	if _, ok := err.(*Error); !ok {
		t.Fatalf("a shape mismatch on the Thread returned %v, want a *Error", err)
	}
	err = th.Run(func() error { panic("boom") })
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("a panic on the Thread returned %v", err)
	}
	if err := th.Run(func() error { return nil }); err != nil {
		t.Fatal(err)
	}
}

// fit runs a few steps of gradient descent on a small two-layer net and
// returns its final weights; every op runs on the calling thread.
func fit(seed uint64) []float64 {
	s := NewScope()
	defer s.Close()
	g := NewGenerator(CPU, seed)
	defer g.Free()
	w1 := Randn([]int64{16, 32}, Float32, CPU, g).SetRequiresGrad(true)
	w2 := Randn([]int64{32, 1}, Float32, CPU, g).SetRequiresGrad(true)
	x := Randn([]int64{64, 16}, Float32, CPU, g)
	y := Randn([]int64{64, 1}, Float32, CPU, g)
	for range 20 {
		step := NewScope()
		loss := x.Matmul(w1).Silu().Matmul(w2).Sub(y).PowScalar(2).Mean()
		loss.Backward()
		NoGrad(func() {
			for _, w := range []*Tensor{w1, w2} {
				w.CopyFrom(w.Sub(w.Grad().MulScalar(0.01)))
				w.ZeroGrad()
			}
		})
		step.Close()
	}
	return append(w1.Float64s(), w2.Float64s()...)
}

// TestThreadsTrainLikeOneThread: two Threads fitting two nets at the same
// time end with the very bits the torch goroutine gets fitting them one
// after the other.
func TestThreadsTrainLikeOneThread(t *testing.T) {
	noLeaks(t)
	want := [][]float64{fit(1), fit(2)}
	a, b := NewThread(), NewThread()
	defer a.Close()
	defer b.Close()
	var got [2][]float64
	ea := a.Go(func() error { got[0] = fit(1); return nil })
	eb := b.Go(func() error { got[1] = fit(2); return nil })
	if err := <-ea; err != nil {
		t.Fatal(err)
	}
	if err := <-eb; err != nil {
		t.Fatal(err)
	}
	for i := range want {
		for j := range want[i] {
			if math.Float64bits(got[i][j]) != math.Float64bits(want[i][j]) {
				t.Fatalf("net %d weight %d: %v on a Thread beside another, %v alone", i, j, got[i][j], want[i][j])
			}
		}
	}
}

// BenchmarkScopedOp is one small op and its free, made on the torch
// goroutine with no Thread (the process-wide stack alone), with an idle
// Thread (every op then looks up its thread's stack), and on two Threads at
// once (the scopes' lock shared): what the per-thread stacks cost an op.
func BenchmarkScopedOp(b *testing.B) {
	op := func(n int) {
		s := NewScope()
		x := Ones([]int64{4}, Float32, CPU)
		for range n {
			x.AddScalar(1).Free()
		}
		s.Close()
	}
	b.Run("no-thread", func(b *testing.B) { op(b.N) })
	b.Run("idle-thread", func(b *testing.B) {
		th := NewThread()
		defer th.Close()
		op(b.N)
	})
	b.Run("two-threads", func(b *testing.B) {
		a, c := NewThread(), NewThread()
		defer a.Close()
		defer c.Close()
		ea := a.Go(func() error { op(b.N / 2); return nil })
		ec := c.Go(func() error { op(b.N - b.N/2); return nil })
		<-ea
		<-ec
	})
}
