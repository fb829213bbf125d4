package torch

import (
	"math"
	"slices"
	"testing"
)

// refAttention is softmax(q·kᵀ·scale + mask)·v in float64 for one head.
func refAttention(q, k, v []float64, T, S, D int, allowed func(i, j int) bool) []float64 {
	out := make([]float64, T*D)
	scale := 1 / math.Sqrt(float64(D))
	for i := 0; i < T; i++ {
		scores := make([]float64, S)
		m := math.Inf(-1)
		for j := 0; j < S; j++ {
			if !allowed(i, j) {
				scores[j] = math.Inf(-1)
				continue
			}
			s := 0.0
			for d := 0; d < D; d++ {
				s += q[i*D+d] * k[j*D+d]
			}
			scores[j] = s * scale
			m = math.Max(m, scores[j])
		}
		z := 0.0
		for j := range scores {
			scores[j] = math.Exp(scores[j] - m)
			z += scores[j]
		}
		for j := range scores {
			for d := 0; d < D; d++ {
				out[i*D+d] += scores[j] / z * v[j*D+d]
			}
		}
	}
	return out
}

func TestAttentionAgainstReference(t *testing.T) {
	noLeaks(t)
	const T, S, D = 4, 4, 8
	q, k, v := randData(10, T*D), randData(11, S*D), randData(12, S*D)
	causal := func(i, j int) bool { return j <= i }
	pad := func(i, j int) bool { return j <= i && (j != 0 || i == 0) } // key 0 padded except for itself
	scoped(func() {
		tq, tk, tv := FromFloat64(q, 1, 1, T, D), FromFloat64(k, 1, 1, S, D), FromFloat64(v, 1, 1, S, D)
		for _, explicit := range []bool{true, false} {
			closeTo(t, "no mask", ScaledDotProductAttention(tq, tk, tv, Attention{Explicit: explicit}).Float64s(),
				refAttention(q, k, v, T, S, D, func(int, int) bool { return true }), 1e-12)
			closeTo(t, "causal", ScaledDotProductAttention(tq, tk, tv, Attention{Causal: true, Explicit: explicit}).Float64s(),
				refAttention(q, k, v, T, S, D, causal), 1e-12)
			m := make([]bool, T*S)
			for i := 0; i < T; i++ {
				for j := 0; j < S; j++ {
					m[i*S+j] = pad(i, j)
				}
			}
			want := refAttention(q, k, v, T, S, D, pad)
			closeTo(t, "bool mask", ScaledDotProductAttention(tq, tk, tv, Attention{Mask: FromBool(m, 1, 1, T, S), Explicit: explicit}).Float64s(), want, 1e-12)
			// the same mask with causal on top changes nothing (it is already causal)
			closeTo(t, "mask+causal", ScaledDotProductAttention(tq, tk, tv, Attention{Mask: FromBool(m, 1, 1, T, S), Causal: true, Explicit: explicit}).Float64s(), want, 1e-12)
			add := FromBool(m, 1, 1, T, S).LogicalNot().ToDType(Float64).MulScalar(-1e9)
			closeTo(t, "additive mask", ScaledDotProductAttention(tq, tk, tv, Attention{Mask: add, Explicit: explicit}).Float64s(), want, 1e-9)
		}
		// the fused path (where the build has it) equals explicit math in f32
		f := func(x *Tensor) *Tensor { return x.ToDType(Float32) }
		a := ScaledDotProductAttention(f(tq), f(tk), f(tv), Attention{Causal: true}).Float64s()
		b := ScaledDotProductAttention(f(tq), f(tk), f(tv), Attention{Causal: true, Explicit: true}).Float64s()
		closeTo(t, "fused vs explicit", a, b, 1e-5)
		// one query against a longer key range (decoding with a cache) needs an explicit mask
		if err := panicsWith(func() {
			ScaledDotProductAttention(tq.Narrow(2, 3, 1), tk, tv, Attention{Causal: true})
		}); err == nil {
			t.Fatal("causal with T != S must be refused")
		}
		last := ScaledDotProductAttention(tq.Narrow(2, 3, 1), tk, tv, Attention{}).Float64s()
		closeTo(t, "decode step", last, refAttention(q, k, v, T, S, D, causal)[3*D:], 1e-12)
	})
}

func TestRMSNormRoPE(t *testing.T) {
	noLeaks(t)
	x := randData(20, 2*6)
	w := randData(21, 6)
	const eps = 1e-6
	want := make([]float64, len(x))
	for r := 0; r < 2; r++ {
		ms := 0.0
		for c := 0; c < 6; c++ {
			ms += x[r*6+c] * x[r*6+c]
		}
		inv := 1 / math.Sqrt(ms/6+eps)
		for c := 0; c < 6; c++ {
			want[r*6+c] = w[c] * x[r*6+c] * inv
		}
	}
	cos, sin := randData(22, 6), randData(23, 6)
	rope := make([]float64, len(x))
	for r := 0; r < 2; r++ {
		for c := 0; c < 6; c++ {
			var rot float64
			if c < 3 {
				rot = -x[r*6+c+3]
			} else {
				rot = x[r*6+c-3]
			}
			rope[r*6+c] = x[r*6+c]*cos[c] + rot*sin[c]
		}
	}
	scoped(func() {
		tx := FromFloat64(x, 2, 6)
		closeTo(t, "rmsnorm f64", RMSNorm(tx, FromFloat64(w), eps).Float64s(), want, 1e-12)
		closeTo(t, "rmsnorm f32", RMSNorm(tx.ToDType(Float32), FromFloat64(w).ToDType(Float32), eps).Float64s(), want, 1e-5)
		bf := RMSNorm(tx.ToDType(BFloat16), FromFloat64(w).ToDType(BFloat16), eps)
		if bf.DType() != BFloat16 {
			t.Fatalf("rmsnorm keeps the input dtype, got %v", bf.DType())
		}
		closeTo(t, "rmsnorm bf16", bf.Float64s(), want, 2e-2)
		signed := slices.Clone(sin)
		for c := range 3 {
			signed[c] = -signed[c]
		}
		closeTo(t, "rope", RoPE(tx, FromFloat64(cos), FromFloat64(signed)).Float64s(), rope, 1e-12)
	})
}

func TestSoftmaxFamilyAndTokenLogProbs(t *testing.T) {
	noLeaks(t)
	const N, V = 3, 5
	z := randData(30, N*V)
	targets := []int64{4, 0, 2}
	var wantSM, wantLP, wantEnt, wantLSM []float64
	for r := 0; r < N; r++ {
		row := z[r*V : r*V+V]
		m := math.Inf(-1)
		for _, v := range row {
			m = math.Max(m, v)
		}
		s := 0.0
		for _, v := range row {
			s += math.Exp(v - m)
		}
		lse := m + math.Log(s)
		ent := 0.0
		for _, v := range row {
			p := math.Exp(v - lse)
			wantSM = append(wantSM, p)
			wantLSM = append(wantLSM, v-lse)
			ent -= p * (v - lse)
		}
		wantLP = append(wantLP, row[targets[r]]-lse)
		wantEnt = append(wantEnt, ent)
	}
	scoped(func() {
		tz := FromFloat64(z, N, V)
		closeTo(t, "softmax", tz.Softmax(-1).Float64s(), wantSM, 1e-12)
		closeTo(t, "log_softmax", tz.LogSoftmax(-1).Float64s(), wantLSM, 1e-12)
		lp, ent := TokenLogProbs(tz, FromInt64(targets), true)
		closeTo(t, "logp", lp.Float64s(), wantLP, 1e-12)
		closeTo(t, "entropy", ent.Float64s(), wantEnt, 1e-12)
		lp32, none := TokenLogProbs(tz.ToDType(BFloat16), FromInt64(targets), false)
		if none != nil || lp32.DType() != Float32 {
			t.Fatalf("bf16 logits: log-probs must come back f32 and no entropy, got %v %v", lp32, none)
		}
		closeTo(t, "logp from bf16", lp32.Float64s(), wantLP, 3e-2)
	})
}

func TestEmbeddingLinear(t *testing.T) {
	noLeaks(t)
	w := randData(40, 4*3) // (out 4, in 3)
	b := randData(41, 4)
	x := randData(42, 2*3)
	want := make([]float64, 8)
	for r := 0; r < 2; r++ {
		for o := 0; o < 4; o++ {
			s := b[o]
			for i := 0; i < 3; i++ {
				s += x[r*3+i] * w[o*3+i]
			}
			want[r*4+o] = s
		}
	}
	scoped(func() {
		closeTo(t, "linear", Linear(FromFloat64(x, 2, 3), FromFloat64(w, 4, 3), FromFloat64(b)).Float64s(), want, 1e-12)
		nob := Linear(FromFloat64(x, 2, 3), FromFloat64(w, 4, 3), nil).Float64s()
		closeTo(t, "linear no bias", nob[:1], []float64{want[0] - b[0]}, 1e-12)
		emb := Embedding(FromFloat64(w, 4, 3), FromInt64([]int64{3, 0, 3}, 1, 3))
		if s := emb.Shape(); s[0] != 1 || s[1] != 3 || s[2] != 3 {
			t.Fatalf("embedding shape %v", s)
		}
		closeTo(t, "embedding", emb.Float64s()[:3], w[9:12], 0)
	})
}

func TestMultinomialIsReproducible(t *testing.T) {
	noLeaks(t)
	draw := func(seed uint64) []int64 {
		var out []int64
		scoped(func() {
			g := NewGenerator(CPU, seed)
			defer g.Free()
			probs := FromFloat32([]float32{0.1, 0.2, 0.3, 0.4, 0.25, 0.25, 0.25, 0.25}, 2, 4)
			for i := 0; i < 20; i++ {
				out = append(out, Multinomial(probs, 1, true, g).Int64s()...)
			}
		})
		return out
	}
	a, b, c := draw(7), draw(7), draw(8)
	same := func(x, y []int64) bool {
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	}
	if !same(a, b) {
		t.Fatal("same seed must give the same draws")
	}
	if same(a, c) {
		t.Fatal("different seeds gave identical 40 draws")
	}
	// state save/restore replays the same draws
	scoped(func() {
		g := NewGenerator(CPU, 3)
		defer g.Free()
		if g.Seed() != 3 {
			t.Fatalf("seed %d", g.Seed())
		}
		probs := FromFloat32([]float32{0.5, 0.5}, 1, 2)
		Multinomial(probs, 1, true, g)
		st := g.State()
		x := Multinomial(probs, 8, true, g).Int64s()
		g.SetState(st)
		y := Multinomial(probs, 8, true, g).Int64s()
		if !same(x, y) {
			t.Fatalf("restored generator drew %v, then %v", x, y)
		}
		r1 := Randn([]int64{4}, Float32, CPU, g).Float64s()
		g.SetState(st)
		Multinomial(probs, 8, true, g)
		r2 := Randn([]int64{4}, Float32, CPU, g).Float64s()
		closeTo(t, "randn after restore", r1, r2, 0)
		u := Rand([]int64{100}, Float64, CPU, g).Float64s()
		for _, v := range u {
			if v < 0 || v >= 1 {
				t.Fatalf("rand outside [0,1): %v", v)
			}
		}
	})
	// the frequencies follow the probabilities
	scoped(func() {
		g := NewGenerator(CPU, 11)
		defer g.Free()
		counts := make([]int, 4)
		for _, i := range Multinomial(FromFloat32([]float32{0.1, 0.2, 0.3, 0.4}, 1, 4), 20000, true, g).Int64s() {
			counts[i]++
		}
		for i, want := range []float64{0.1, 0.2, 0.3, 0.4} {
			if got := float64(counts[i]) / 20000; math.Abs(got-want) > 0.02 {
				t.Fatalf("category %d drawn %.3f of the time, want %.1f", i, got, want)
			}
		}
	})
}

func TestCountOps(t *testing.T) {
	noLeaks(t)
	scoped(func() {
		a, b := FromFloat64(randData(30, 6), 2, 3), FromFloat64(randData(31, 6), 2, 3)
		if n := CountOps(func() { a.Add(b) }); n.Ops < 1 || n.Leaves != 1 {
			t.Errorf("one add: %+v, want 1 leaf", n)
		}
		if n := CountOps(func() { a.Add(b).Mul(a).Neg() }); n.Leaves != 3 {
			t.Errorf("add, mul, neg: %+v, want 3 leaves", n)
		}
		if n := CountOps(func() { a.View(3, 2).Transpose(0, 1) }); n.Ops < 2 || n.Leaves != 0 {
			t.Errorf("views: %+v, want ≥ 2 ops and no leaves", n)
		}
		// A composite op counts its own call and the ones it makes.
		if n := CountOps(func() { Linear(a, b, nil) }); n.Ops <= n.Leaves || n.Leaves < 1 {
			t.Errorf("linear: %+v, want more ops than leaves", n)
		}
		// Varlen attention is one flash kernel on a GPU; the loop that stands
		// in for it here counts as one.
		q := FromFloat64(randData(32, 5*2*4), 5, 2, 4)
		cu := FromInt64([]int64{0, 2, 5})
		va := Varlen{CuQ: cu, CuK: cu, MaxQ: 3, MaxK: 3, Causal: true}
		if n := CountOps(func() { VarlenAttention(q, q, q, va) }); n.Leaves != 1 {
			t.Errorf("varlen attention: %+v, want 1 leaf", n)
		}
		if n := CountOps(func() { VarlenAttention(q, q, q, va).Add(q) }); n.Leaves != 2 {
			t.Errorf("varlen attention and an add: %+v, want 2 leaves", n)
		}
	})
}
