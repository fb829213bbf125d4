package model

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"troupe/internal/cpulevel"
	"troupe/torch"
)

func newEngine(t *testing.T, m *Model, cfg EngineConfig) *Engine {
	t.Helper()
	e, err := m.NewEngine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Free)
	return e
}

// engineRequests are greedy requests of different prompt and output lengths,
// some with stop ids and some sharing a prompt.
func engineRequests() []EngineRequest {
	prompts := [][]int{{1, 2, 3, 4, 5}, {9}, {30, 31, 32}, {1, 2, 3, 4, 5}, {7, 8}, {40, 41, 42, 43, 44, 45, 46}, {9}, {12, 13, 14}}
	var reqs []EngineRequest
	for i, p := range prompts {
		r := EngineRequest{GenRequest: greedy(p, 3+3*(i%4)), Seed: uint64(i)}
		if i%3 == 2 {
			r.Stop = []int{7, 11, 20}
		}
		reqs = append(reqs, r)
	}
	return reqs
}

// sameOrNearTie checks that the engine's tokens equal the plain path's; at
// the first difference both continuations must share the prefix and the two
// candidate tokens' logits there must agree within 1e-5 (a near tie that
// the different summation order may flip), which the test reports.
func sameOrNearTie(t *testing.T, m *Model, what string, prompt []int, got, want GenResult) {
	t.Helper()
	for j := range min(len(got.Tokens), len(want.Tokens)) {
		if got.Tokens[j] == want.Tokens[j] {
			continue
		}
		seq := append(append([]int(nil), prompt...), want.Tokens[:j]...)
		full := rowLogits(t, m, seq)
		V := m.Config.VocabSize
		row := full[(len(seq)-1)*V : len(seq)*V]
		if d := math.Abs(float64(row[got.Tokens[j]] - row[want.Tokens[j]])); d > 1e-5 {
			t.Fatalf("%s: token %d is %d, the plain path has %d (logits differ by %g: not a near tie)", what, j, got.Tokens[j], want.Tokens[j], d)
		}
		t.Logf("%s: token %d flips between a near tie (%d vs %d); the outputs agree up to it", what, j, got.Tokens[j], want.Tokens[j])
		return
	}
	if len(got.Tokens) != len(want.Tokens) || got.Finish != want.Finish {
		t.Fatalf("%s: %d tokens (%v), the plain path %d (%v)", what, len(got.Tokens), got.Finish, len(want.Tokens), want.Finish)
	}
	for j := range got.LogProbs {
		if d := math.Abs(float64(got.LogProbs[j] - want.LogProbs[j])); d > 1e-5 {
			t.Fatalf("%s: log-prob %d is %g, the plain path %g", what, j, got.LogProbs[j], want.LogProbs[j])
		}
	}
}

// Greedy float32 outputs equal the plain path's, whether the requests are
// admitted together (more than there are slots, so some wait), one by one,
// or in a shuffled order. The norm weights are made distinct, so the
// engine's own arrangement of Qwen3's q and k norms is checked too.
func TestEngineGreedyMatchesGenerate(t *testing.T) {
	cpulevel.Each(t) // also at the lesser CPU levels
	noLeaks(t)
	for _, f := range families {
		m := newTiny(t, f, 31, cpu32)
		distinctNorms(t, m, 32)
		reqs := engineRequests()
		want := make([]GenResult, len(reqs))
		for i, r := range reqs {
			out, err := m.Generate([]GenRequest{r.GenRequest}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			want[i] = out[0]
		}
		check := func(mode string, got []GenResult) {
			for i := range reqs {
				sameOrNearTie(t, m, string(f)+" "+mode+" request "+string(rune('0'+i)), reqs[i].Prompt, got[i], want[i])
			}
		}

		// together, 3 slots, a host read every 4 steps
		e := newEngine(t, m, EngineConfig{SlotLen: 32, MaxSlots: 3, SyncEvery: 4})
		got, err := e.Generate(reqs)
		if err != nil {
			t.Fatal(err)
		}
		check("together", got)
		st := e.Stats()
		if st.MaxBatch != 3 || st.Admitted != len(reqs) || st.HostReads != st.Steps {
			t.Fatalf("%s: stats %+v: want a full batch of 3, every request admitted, one host read per step", f, st)
		}

		// one by one
		e1 := newEngine(t, m, EngineConfig{SlotLen: 32, MaxSlots: 4, SyncEvery: 3})
		for i, r := range reqs {
			out, err := e1.Generate([]EngineRequest{r})
			if err != nil {
				t.Fatal(err)
			}
			sameOrNearTie(t, m, string(f)+" alone", r.Prompt, out[0], want[i])
		}

		// shuffled, submitted while others run
		perm := rand.New(rand.NewPCG(1, 2)).Perm(len(reqs))
		e2 := newEngine(t, m, EngineConfig{SlotLen: 32, MaxSlots: 5, SyncEvery: 2})
		got2 := make([]GenResult, len(reqs))
		ids := map[int]int{}
		for k, i := range perm {
			id, err := e2.Submit(reqs[i])
			if err != nil {
				t.Fatal(err)
			}
			ids[id] = i
			if k%2 == 1 { // step between submissions: rows join a running batch
				done, err := e2.Step()
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range done {
					got2[ids[c.ID]] = c.GenResult
				}
			}
		}
		for e2.Pending() > 0 {
			done, err := e2.Step()
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range done {
				got2[ids[c.ID]] = c.GenResult
			}
		}
		check("shuffled", got2)
	}
}

// The n requests of a group share one prefill: the keys and values copied
// into their slots equal those of separate prefills.
func TestEngineSharedPromptPrefill(t *testing.T) {
	noLeaks(t)
	m := newTiny(t, Qwen3, 32, cpu32)
	prompt := []int{3, 1, 4, 1, 5, 9, 2, 6}
	other := []int{2, 7, 1, 8}
	shared := newEngine(t, m, EngineConfig{SlotLen: 16, MaxSlots: 4, SyncEvery: 1})
	for _, p := range [][]int{prompt, other, prompt, prompt} {
		if _, err := shared.Submit(EngineRequest{GenRequest: greedy(p, 4)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := shared.Step(); err != nil {
		t.Fatal(err)
	}
	if st := shared.Stats(); st.Prefills != 1 || st.SharedPrompts != 2 || st.PrefillTokens != len(prompt)+len(other) {
		t.Fatalf("stats %+v: want one prefill of %d tokens with 2 shared prompts", st, len(prompt)+len(other))
	}
	// the same prompt prefilled alone
	alone := newEngine(t, m, EngineConfig{SlotLen: 16, MaxSlots: 1, SyncEvery: 1})
	if _, err := alone.Submit(EngineRequest{GenRequest: greedy(prompt, 4)}); err != nil {
		t.Fatal(err)
	}
	if _, err := alone.Step(); err != nil {
		t.Fatal(err)
	}
	P := int64(len(prompt))
	for layer := range m.Layers {
		for _, arena := range [][2]*torch.Tensor{{shared.k[layer], alone.k[layer]}, {shared.v[layer], alone.v[layer]}} {
			var ref []float32
			scoped(func() { ref = arena[1].Narrow(0, 0, P).Contiguous().Float32s() })
			for _, slot := range []int64{0, 2, 3} {
				var got []float32
				scoped(func() { got = arena[0].Narrow(0, slot*16, P).Contiguous().Float32s() })
				if d := maxAbs(got, ref); d > 1e-5 {
					t.Fatalf("layer %d slot %d: shared prefill differs from a separate one by %g", layer, slot, d)
				}
			}
		}
	}
}

// Sampled first tokens follow softmax(z/T), with top-k and top-p applied:
// a chi-square test over many seeds (fixed, so the test is deterministic).
func TestEngineSamplingDistribution(t *testing.T) {
	noLeaks(t)
	m := newTiny(t, Qwen2, 33, cpu32)
	prompt := []int{4, 8, 15, 16}
	V := m.Config.VocabSize
	full := rowLogits(t, m, prompt)
	last := full[(len(prompt)-1)*V:]
	for _, c := range []struct {
		name string
		s    Sampling
	}{
		{"T=1", Sampling{Temperature: 1}},
		{"T=0.7 top-k 5", Sampling{Temperature: 0.7, TopK: 5}},
		{"T=1.3 top-p 0.8", Sampling{Temperature: 1.3, TopP: 0.8}},
	} {
		want := filteredProbs(last, c.s)
		const N = 3000
		reqs := make([]EngineRequest, N)
		for i := range reqs {
			reqs[i] = EngineRequest{GenRequest: GenRequest{Prompt: prompt, MaxNewTokens: 1, Sampling: c.s}, Seed: uint64(1000 + i)}
		}
		e := newEngine(t, m, EngineConfig{SlotLen: 8, MaxSlots: 512})
		out, err := e.Generate(reqs)
		if err != nil {
			t.Fatal(err)
		}
		counts := make([]float64, V)
		for _, o := range out {
			tok := o.Tokens[0]
			if want[tok] == 0 {
				t.Fatalf("%s: sampled token %d, which the filters exclude", c.name, tok)
			}
			counts[tok]++
			// the reported log-prob is under the temperature-scaled distribution
			if d := math.Abs(float64(o.LogProbs[0]) - tempLogProb(last, c.s.Temperature, tok)); d > 1e-4 {
				t.Fatalf("%s: log-prob of %d off by %g", c.name, tok, d)
			}
		}
		chi, dof := chiSquare(counts, want, N)
		if crit := chiSquareCritical(dof); chi > crit {
			t.Fatalf("%s: χ² = %.1f over %d degrees of freedom exceeds %.1f (p < 0.001)", c.name, chi, dof, crit)
		}
	}
}

// filteredProbs is sample.go's distribution in float64: temperature, top-k,
// top-p (mass ranked strictly above a token < p), renormalised.
func filteredProbs(logits []float32, s Sampling) []float64 {
	V := len(logits)
	z := make([]float64, V)
	mx := math.Inf(-1)
	for i, l := range logits {
		z[i] = float64(l) / s.Temperature
		mx = math.Max(mx, z[i])
	}
	order := make([]int, V)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case z[a] > z[b]:
			return -1
		case z[a] < z[b]:
			return 1
		}
		return 0
	})
	k := V
	if s.TopK > 0 {
		k = s.TopK
	}
	sum := 0.0
	for _, i := range order[:k] {
		sum += math.Exp(z[i] - mx)
	}
	p := make([]float64, V)
	before, kept := 0.0, 0.0
	for r, i := range order[:k] {
		q := math.Exp(z[i]-mx) / sum
		if r > 0 && s.TopP > 0 && s.TopP < 1 && before >= s.TopP {
			break
		}
		p[i] = q
		kept += q
		before += q
	}
	for i := range p {
		p[i] /= kept
	}
	return p
}

func tempLogProb(logits []float32, temp float64, tok int) float64 {
	mx := math.Inf(-1)
	for _, l := range logits {
		mx = math.Max(mx, float64(l)/temp)
	}
	z := 0.0
	for _, l := range logits {
		z += math.Exp(float64(l)/temp - mx)
	}
	return float64(logits[tok])/temp - mx - math.Log(z)
}

// chiSquare pools the cells with an expected count under 5 into one.
func chiSquare(counts, p []float64, n int) (float64, int) {
	chi, cells := 0.0, 0
	poolO, poolE := 0.0, 0.0
	for i := range counts {
		e := p[i] * float64(n)
		if e < 5 {
			poolO += counts[i]
			poolE += e
			continue
		}
		chi += (counts[i] - e) * (counts[i] - e) / e
		cells++
	}
	if poolE > 0 {
		chi += (poolO - poolE) * (poolO - poolE) / math.Max(poolE, 1)
		cells++
	}
	return chi, cells - 1
}

// chiSquareCritical is the 0.999 quantile by the Wilson–Hilferty
// approximation.
func chiSquareCritical(dof int) float64 {
	k := float64(max(dof, 1))
	const z = 3.0902 // standard normal 0.999 quantile
	a := 2 / (9 * k)
	return k * math.Pow(1-a+z*math.Sqrt(a), 3)
}

// A row's samples depend on its own seed, not on the rows beside it.
func TestEngineSeedsIndependentOfBatch(t *testing.T) {
	noLeaks(t)
	m := newTiny(t, Qwen2, 34, cpu32)
	r := EngineRequest{GenRequest: GenRequest{Prompt: []int{5, 6, 7}, MaxNewTokens: 10, Sampling: Sampling{Temperature: 1.2}}, Seed: 77}
	e := newEngine(t, m, EngineConfig{SlotLen: 24, MaxSlots: 8, SyncEvery: 3})
	alone, err := e.Generate([]EngineRequest{r})
	if err != nil {
		t.Fatal(err)
	}
	others := []EngineRequest{
		{GenRequest: GenRequest{Prompt: []int{1, 2}, MaxNewTokens: 4, Sampling: Sampling{Temperature: 1}}, Seed: 1},
		r,
		{GenRequest: GenRequest{Prompt: []int{9, 9, 9, 9}, MaxNewTokens: 12, Sampling: Sampling{Temperature: 0.5, TopK: 4}}, Seed: 2},
	}
	mixed, err := e.Generate(others)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(alone[0].Tokens, mixed[1].Tokens) {
		t.Fatalf("seed 77 alone gave %v, in a batch %v", alone[0].Tokens, mixed[1].Tokens)
	}
	r.Seed = 78
	other, err := e.Generate([]EngineRequest{r})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(alone[0].Tokens, other[0].Tokens) {
		t.Fatal("seeds 77 and 78 gave the same 10 samples")
	}
}

// TestEngineRowInvariant: a request decodes to the same tokens and
// log-probs whether it runs alone or beside requests of other prompt and
// output lengths (so the batch shrinks as they finish). With the CPU's
// generation kernels on an AVX-512 CPU that is bit for bit: every linear
// layer, prefill included, and attention compute a row the same way
// whatever shares the call. Elsewhere, and with ATen's math, a prefill
// multiplies all the admitted prompts' tokens in one BLAS GEMM, which
// rounds a row differently with the GEMM's size (measured: 5e-7 on a
// log-prob), so there it is up to 1e-5.
func TestEngineRowInvariant(t *testing.T) {
	cpulevel.Each(t) // also at the lesser CPU levels
	noLeaks(t)
	m := newTiny(t, Qwen2, 35, cpu32)
	r := EngineRequest{GenRequest: GenRequest{Prompt: []int{5, 6, 7, 8}, MaxNewTokens: 12, Sampling: Sampling{Temperature: 1.1}}, Seed: 5}
	others := []EngineRequest{
		{GenRequest: GenRequest{Prompt: []int{1, 2}, MaxNewTokens: 3, Sampling: Sampling{Temperature: 1}}, Seed: 1},
		r,
		{GenRequest: GenRequest{Prompt: []int{9, 9, 9, 9, 9, 9, 9, 9, 9}, MaxNewTokens: 14, Sampling: Sampling{Temperature: 0.7}}, Seed: 2},
		{GenRequest: GenRequest{Prompt: []int{3}, MaxNewTokens: 6, Sampling: Sampling{Temperature: 1}}, Seed: 3},
		{GenRequest: GenRequest{Prompt: []int{4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4}, MaxNewTokens: 9, Sampling: Sampling{Temperature: 1}}, Seed: 4},
	}
	for _, kernels := range []bool{true, false} {
		e := newEngine(t, m, EngineConfig{SlotLen: 32, MaxSlots: 8, SyncEvery: 2, CPUKernels: kernels})
		alone, err := e.Generate([]EngineRequest{r})
		if err != nil {
			t.Fatal(err)
		}
		mixed, err := e.Generate(others)
		if err != nil {
			t.Fatal(err)
		}
		a, b := alone[0], mixed[1]
		tol := 1e-5
		if kernels && torch.CPUKernelsVariant() == "avx512" {
			tol = 0
		}
		same := slices.Equal(a.Tokens, b.Tokens) && len(a.LogProbs) == len(b.LogProbs)
		for i := range a.LogProbs {
			same = same && math.Abs(float64(a.LogProbs[i]-b.LogProbs[i])) <= tol
		}
		if !same {
			t.Fatalf("cpu kernels %v (%s): alone %v %v, beside four others %v %v", kernels, torch.CPUKernelsVariant(), a.Tokens, a.LogProbs, b.Tokens, b.LogProbs)
		}
	}
}

// A request that can never fit a slot, and a budget that holds no slot, are
// refused with the sizes named; Release frees the memory and the engine
// works again afterwards.
func TestEngineBudgetAndRelease(t *testing.T) {
	noLeaks(t)
	m := newTiny(t, Qwen2, 35, cpu32)
	per := m.KVBytesPerToken()
	if want := int64(2 * 2 * 2 * 8 * 4); per != want {
		t.Fatalf("KV bytes per token %d, want %d", per, want)
	}
	if _, err := m.NewEngine(EngineConfig{SlotLen: 64, BudgetBytes: 63 * per}); err == nil || !strings.Contains(err.Error(), "holds no slot of 64 tokens") {
		t.Fatalf("tiny budget: %v", err)
	}
	e := newEngine(t, m, EngineConfig{SlotLen: 18, BudgetBytes: 18 * per * 3})
	if e.Slots() != 3 {
		t.Fatalf("%d slots from a budget of 3", e.Slots())
	}
	_, err := e.Submit(EngineRequest{GenRequest: greedy(make([]int, 10), 9)})
	if err == nil || !strings.Contains(err.Error(), "needs 19 tokens (prompt 10 + max_new_tokens 9) but a slot holds 18") {
		t.Fatalf("oversized request: %v", err)
	}
	reqs := engineRequests()[:4]
	a, err := e.Generate(reqs)
	if err != nil {
		t.Fatal(err)
	}
	e.Release()
	if e.k != nil {
		t.Fatal("Release kept the arena")
	}
	b, err := e.Generate(reqs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if !slices.Equal(a[i].Tokens, b[i].Tokens) {
			t.Fatalf("request %d: %v before Release, %v after", i, a[i].Tokens, b[i].Tokens)
		}
	}
	zero, err := e.Generate([]EngineRequest{{GenRequest: greedy([]int{1}, 0)}})
	if err != nil || len(zero[0].Tokens) != 0 || zero[0].Finish != FinishLength {
		t.Fatalf("max_new_tokens 0: %+v %v", zero, err)
	}
}
