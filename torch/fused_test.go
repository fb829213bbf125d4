package torch

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// The fused op equals the unfused composition (values and both gradients),
// for chunk sizes that do and do not divide N, at temperature 1 and 0.7,
// with the loss using the log-probs, the entropy or both.
func TestLinearTokenLogProbsMatchesUnfused(t *testing.T) {
	noLeaks(t)
	const N, D, V = 7, 5, 11
	targets := []int64{0, 10, 3, 3, 7, 1, 9}
	uses := []struct {
		name         string
		logp, entrop bool
	}{{"both", true, true}, {"logp", true, false}, {"entropy", false, true}}
	for _, dt := range []DType{Float64, Float32} {
		tol := 1e-12
		if dt == Float32 {
			tol = 1e-5
		}
		for _, temp := range []float64{1, 0.7} {
			for _, use := range uses {
				for _, chunk := range []int64{1, 3, 7, 100} {
					run := func(fused bool) (lp, ent, gh, gw []float64) {
						scoped(func() {
							h := FromFloat64(randData(100, N*D), N, D).ToDType(dt).SetRequiresGrad(true)
							w := FromFloat64(randData(101, V*D), V, D).ToDType(dt).SetRequiresGrad(true)
							tg := FromInt64(targets)
							var l, e *Tensor
							if fused {
								l, e = LinearTokenLogProbs(h, w, tg, temp, chunk, true)
							} else {
								l, e = TokenLogProbs(Linear(h, w, nil).DivScalar(temp), tg, true)
							}
							loss := Zeros(nil, dt, CPU)
							if use.logp {
								loss = loss.Add(weighted(l, 102))
							}
							if use.entrop {
								loss = loss.Add(weighted(e, 103))
							}
							loss.Backward()
							lp, ent, gh, gw = l.Float64s(), e.Float64s(), h.Grad().Float64s(), w.Grad().Float64s()
						})
						return
					}
					a1, a2, a3, a4 := run(true)
					b1, b2, b3, b4 := run(false)
					name := fmt.Sprintf("%v T=%g %s chunk %d", dt, temp, use.name, chunk)
					closeTo(t, name+" logp", a1, b1, tol)
					closeTo(t, name+" entropy", a2, b2, tol)
					closeTo(t, name+" grad hidden", a3, b3, tol)
					closeTo(t, name+" grad weight", a4, b4, tol)
				}
			}
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

// The entropy's backward runs only when a loss differentiates the entropy:
// a forward that computed it (for a metric) and a loss of the log-probs
// alone dispatch the very operators of a forward without it, and the
// shim's counter of entropy-grad rows stays put; when the loss uses it,
// the counter grows by N.
func TestLinearTokenLogProbsEntropyBackwardOnlyWhenUsed(t *testing.T) {
	noLeaks(t)
	const N, D, V, chunk = 10, 6, 13, 4 // three chunks
	backward := func(want, use bool) (n OpCount, rows int64) {
		scoped(func() {
			h := FromFloat64(randData(110, N*D), N, D).ToDType(Float32).SetRequiresGrad(true)
			w := FromFloat64(randData(111, V*D), V, D).ToDType(Float32).SetRequiresGrad(true)
			g := FromFloat64(randData(112, N), N).ToDType(Float32)
			lp, ent := LinearTokenLogProbs(h, w, FromInt64([]int64{0, 12, 3, 3, 7, 1, 9, 2, 5, 11}), 1, chunk, want)
			before := EntropyBackwardRows()
			n = CountOps(func() {
				if use {
					Stack([]*Tensor{lp, ent}, 0).BackwardWith(Stack([]*Tensor{g, g}, 0))
				} else {
					lp.BackwardWith(g)
				}
			})
			rows = EntropyBackwardRows() - before
		})
		return n, rows
	}
	without, rows0 := backward(false, false)
	unused, rows1 := backward(true, false)
	used, rows2 := backward(true, true)
	if rows0 != 0 || rows1 != 0 || rows2 != N {
		t.Fatalf("entropy-grad rows: %d without the entropy, %d with it unused, %d with it used; want 0, 0, %d", rows0, rows1, rows2, N)
	}
	if unused != without {
		t.Fatalf("backward with the entropy computed but unused: %+v operator calls, without it %+v: the unused entropy cost backward work", unused, without)
	}
	if used.Leaves <= unused.Leaves {
		t.Fatalf("backward with the entropy used: %d leaf calls, unused %d: the count cannot see the entropy's backward", used.Leaves, unused.Leaves)
	}
	t.Logf("backward leaf calls: %d without the entropy, %d with it unused, %d with it used", without.Leaves, unused.Leaves, used.Leaves)
}

// At temperature 1 (and 0, which means 1) no pass multiplies by 1/T: the
// only multiplies of the forward and backward are each backward chunk's
// −p·g; at 0.7 each pass scales every chunk's logits once more.
func TestLinearTokenLogProbsNoScaleAtTemperatureOne(t *testing.T) {
	noLeaks(t)
	const N, D, V, chunk = 10, 6, 13, 4 // three chunks
	muls := func(temp float64) (calls int) {
		scoped(func() {
			h := FromFloat64(randData(120, N*D), N, D).ToDType(Float32).SetRequiresGrad(true)
			w := FromFloat64(randData(121, V*D), V, D).ToDType(Float32).SetRequiresGrad(true)
			g := FromFloat64(randData(122, N), N).ToDType(Float32)
			tg := FromInt64([]int64{0, 12, 3, 3, 7, 1, 9, 2, 5, 11})
			p := StartOpProfile()
			lp, _ := LinearTokenLogProbs(h, w, tg, temp, chunk, false)
			lp.BackwardWith(g)
			calls = opCalls(t, p.Stop(), "aten::mul", "aten::mul_")
		})
		return calls
	}
	const chunks = (N + chunk - 1) / chunk
	for _, temp := range []float64{1, 0} {
		if got := muls(temp); got != chunks {
			t.Errorf("temperature %g: %d multiplies in the forward and backward, want %d (one −p·g per backward chunk)", temp, got, chunks)
		}
	}
	if got := muls(0.7); got < 3*chunks {
		t.Errorf("temperature 0.7: %d multiplies, want at least %d (the scaling the count at T = 1 leaves out)", got, 3*chunks)
	}
}

// opCalls sums the calls of the named operators in an OpProfile table.
func opCalls(t *testing.T, table string, names ...string) int {
	t.Helper()
	n := 0
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		for _, name := range names {
			if f[0] == name {
				c, err := strconv.Atoi(f[1])
				if err != nil {
					t.Fatalf("op profile line %q: %v", line, err)
				}
				n += c
			}
		}
	}
	return n
}

// The head's memory on the CPU in float32, against the formula docs/gpu.md
// gives for `train plan`: beyond its inputs the backward holds grad_w
// (4·V·D, summed in place), grad_h (4·N·D) and, per chunk of c rows, the
// logits and their softmax (8·c·V); the forward 8·c·V. Measured through the
// CPU allocator's count (TrackCPUMemory) over nine chunks, with the entropy
// for the metric and without, at T 1 and 0.7: within 1 % (the per-row
// tensors) above the formula and not far below it. A float32 copy of all
// N × V logits, or a chunk's tensors kept past their use, fails it.
func TestLinearTokenLogProbsPeakMemoryCPU(t *testing.T) {
	if !TrackCPUMemory() {
		t.Skip("this libtorch's CPU allocator cannot be counted")
	}
	noLeaks(t)
	const N, V, D, chunk = 300, 5000, 64, 34
	want := int64(4*V*D + 8*chunk*V + 4*N*D)
	for _, entropy := range []bool{false, true} {
		for _, temp := range []float64{1, 0.7} {
			scoped(func() {
				h := FromFloat64(randData(140, N*D), N, D).ToDType(Float32).SetRequiresGrad(true)
				w := FromFloat64(randData(141, V*D), V, D).ToDType(Float32).SetRequiresGrad(true)
				tg := FromInt64(make([]int64, N))
				g := Ones([]int64{N}, Float32, CPU)
				base := Memory(CPU).Allocated
				ResetPeakMemory(CPU)
				lp, _ := LinearTokenLogProbs(h, w, tg, temp, chunk, entropy)
				lp.BackwardWith(g)
				peak := Memory(CPU).PeakAllocated - base
				t.Logf("entropy %v, T=%g: peak %d bytes above the inputs, formula %d (%.3f×)", entropy, temp, peak, want, float64(peak)/float64(want))
				if peak > want+want/100 || peak < want*9/10 {
					t.Errorf("entropy %v, T=%g: the head's peak is %d bytes, the formula %d", entropy, temp, peak, want)
				}
			})
		}
	}
}
