package torch

import (
	"math"
	"math/rand/v2"
	"testing"
)

// randData returns n reproducible values in [-1, 1).
func randData(seed uint64, n int) []float64 {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]float64, n)
	for i := range out {
		out[i] = 2*r.Float64() - 1
	}
	return out
}

func closeTo(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		d := math.Abs(got[i] - want[i])
		if d > tol*(1+math.Abs(want[i])) || math.IsNaN(got[i]) != math.IsNaN(want[i]) {
			t.Fatalf("%s[%d] = %.9g, want %.9g (tol %g)", what, i, got[i], want[i], tol)
		}
	}
}

func f32to64(xs []float32) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

// noLeaks fails the test if it leaves more live tensors than it found.
func noLeaks(t *testing.T) {
	t.Helper()
	before := LiveTensors()
	t.Cleanup(func() {
		if after := LiveTensors(); after != before {
			t.Errorf("live tensors: %d before, %d after", before, after)
		}
	})
}

// scoped runs fn inside a scope that is closed afterwards.
func scoped(fn func()) {
	s := NewScope()
	defer s.Close()
	fn()
}

// panicsWith reports the *Error fn panics with (nil if none).
func panicsWith(fn func()) (err *Error) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*Error)
			if !ok {
				panic(r)
			}
			err = e
		}
	}()
	fn()
	return nil
}
