package model

import (
	"math"
	"slices"
	"strings"
	"testing"

	"troupe/torch"
)

func greedy(prompt []int, n int) GenRequest {
	return GenRequest{Prompt: prompt, MaxNewTokens: n}
}

// Greedy generation with the cache picks, at every step, the argmax of a
// full forward over the sequence so far, and reports its log-probability.
func TestGreedyGenerationMatchesFullForward(t *testing.T) {
	noLeaks(t)
	for _, f := range families {
		m := newTiny(t, f, 21, cpu32)
		reqs := []GenRequest{greedy([]int{1, 2, 3, 4, 5}, 8), greedy([]int{9}, 6), greedy([]int{30, 31, 32}, 10)}
		out, err := m.Generate(reqs, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		V := m.Config.VocabSize
		for i, r := range reqs {
			if len(out[i].Tokens) != r.MaxNewTokens || out[i].Finish != FinishLength {
				t.Fatalf("%s row %d: %d tokens, finish %v", f, i, len(out[i].Tokens), out[i].Finish)
			}
			seq := append(append([]int(nil), r.Prompt...), out[i].Tokens...)
			full := rowLogits(t, m, seq)
			for j, tok := range out[i].Tokens {
				p := len(r.Prompt) - 1 + j
				row := full[p*V : (p+1)*V]
				best := 0
				for v := range row {
					if row[v] > row[best] {
						best = v
					}
				}
				if tok != best {
					t.Fatalf("%s row %d step %d: generated %d, full forward argmax %d", f, i, j, tok, best)
				}
				mx, z := float64(row[best]), 0.0
				for _, v := range row {
					z += math.Exp(float64(v) - mx)
				}
				if want := -math.Log(z); math.Abs(float64(out[i].LogProbs[j])-want) > 1e-4 {
					t.Fatalf("%s row %d step %d: log-prob %g, want %g", f, i, j, out[i].LogProbs[j], want)
				}
			}
		}
	}
}

// Rows stop at their stop token (kept) or their own length; compaction of
// finished rows does not change what the others generate.
func TestStopTokensLengthsAndCompaction(t *testing.T) {
	noLeaks(t)
	m := newTiny(t, Qwen2, 22, cpu32)
	prompts := [][]int{{1, 2}, {3, 4, 5}, {6}, {7, 8, 9, 10}, {11, 12}, {13}}
	var reqs []GenRequest
	for i, p := range prompts {
		reqs = append(reqs, greedy(p, 3+2*i)) // different lengths: rows finish at different steps
	}
	ref, err := m.Generate(reqs, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range reqs {
		if len(ref[i].Tokens) != reqs[i].MaxNewTokens {
			t.Fatalf("row %d: %d tokens, want %d", i, len(ref[i].Tokens), reqs[i].MaxNewTokens)
		}
		// each row alone gives the same tokens (batching and compaction are invisible)
		alone, err := m.Generate(reqs[i:i+1], nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for j := range alone[0].Tokens {
			if alone[0].Tokens[j] != ref[i].Tokens[j] {
				t.Fatalf("row %d token %d: %d in the batch, %d alone", i, j, ref[i].Tokens[j], alone[0].Tokens[j])
			}
		}
	}
	// stop at the third generated token of row 0
	stop := ref[0].Tokens[2]
	reqs[0].Stop = []int{stop}
	out, err := m.Generate(reqs, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	first := 0
	for first < len(ref[0].Tokens) && ref[0].Tokens[first] != stop {
		first++
	}
	if out[0].Finish != FinishStop || len(out[0].Tokens) != first+1 || out[0].Tokens[first] != stop {
		t.Fatalf("stop token %d: got %v (%v)", stop, out[0].Tokens, out[0].Finish)
	}
	zero, err := m.Generate([]GenRequest{greedy([]int{1}, 0)}, nil, nil)
	if err != nil || len(zero[0].Tokens) != 0 || zero[0].Finish != FinishLength {
		t.Fatalf("max_new_tokens 0: %+v %v", zero, err)
	}
}

// Sampling is reproducible with a seed, top-k keeps to the k best tokens,
// a tiny top-p is greedy, and rows keep their own parameters in one batch.
func TestSamplingParameters(t *testing.T) {
	noLeaks(t)
	m := newTiny(t, Qwen3, 23, cpu32)
	prompt := []int{5, 6, 7}
	run := func(seed uint64, reqs []GenRequest) []GenResult {
		g := torch.NewGenerator(torch.CPU, seed)
		defer g.Free()
		out, err := m.Generate(reqs, nil, g)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	sample := GenRequest{Prompt: prompt, MaxNewTokens: 12, Sampling: Sampling{Temperature: 1.5}}
	a, b, c := run(1, []GenRequest{sample, sample}), run(1, []GenRequest{sample, sample}), run(2, []GenRequest{sample, sample})
	same := slices.Equal[[]int]
	if !same(a[0].Tokens, b[0].Tokens) || !same(a[1].Tokens, b[1].Tokens) {
		t.Fatal("same seed, different tokens")
	}
	if same(a[0].Tokens, c[0].Tokens) && same(a[1].Tokens, c[1].Tokens) {
		t.Fatal("different seeds gave identical samples")
	}
	// top-k = 3: the first sampled token is always among the 3 most likely
	full := rowLogits(t, m, prompt)
	V := m.Config.VocabSize
	last := full[(len(prompt)-1)*V : len(prompt)*V]
	rank := func(tok int) int {
		r := 0
		for _, v := range last {
			if v > last[tok] {
				r++
			}
		}
		return r
	}
	topk := GenRequest{Prompt: prompt, MaxNewTokens: 1, Sampling: Sampling{Temperature: 2, TopK: 3}}
	batch := make([]GenRequest, 64)
	for i := range batch {
		batch[i] = topk
	}
	seen := map[int]bool{}
	for _, o := range run(3, batch) {
		if rank(o.Tokens[0]) >= 3 {
			t.Fatalf("top-k 3 sampled token %d of rank %d", o.Tokens[0], rank(o.Tokens[0]))
		}
		seen[o.Tokens[0]] = true
	}
	if len(seen) < 2 {
		t.Fatal("temperature 2 over the top 3 should give more than one distinct token in 64 draws")
	}
	// mixed rows in one batch: greedy, top-p 1e-6 (greedy in effect), top-k 1, free sampling
	g := greedy(prompt, 8)
	mixed := run(4, []GenRequest{g, {Prompt: prompt, MaxNewTokens: 8, Sampling: Sampling{Temperature: 1, TopP: 1e-6}},
		{Prompt: prompt, MaxNewTokens: 8, Sampling: Sampling{Temperature: 0.8, TopK: 1}}, sample})
	for i := 1; i < 3; i++ {
		if !same(mixed[i].Tokens, mixed[0].Tokens) {
			t.Fatalf("row %d should decode greedily: %v vs %v", i, mixed[i].Tokens, mixed[0].Tokens)
		}
	}
	// the reported log-prob of a sampled token is under the temperature-scaled distribution
	tok := a[0].Tokens[0]
	mx, z := math.Inf(-1), 0.0
	for _, v := range last {
		mx = math.Max(mx, float64(v)/1.5)
	}
	for _, v := range last {
		z += math.Exp(float64(v)/1.5 - mx)
	}
	if want := float64(last[tok])/1.5 - mx - math.Log(z); math.Abs(float64(a[0].LogProbs[0])-want) > 1e-4 {
		t.Fatalf("sampled log-prob %g, want %g", a[0].LogProbs[0], want)
	}
}

// Sampled frequencies follow softmax(logits / T) (a χ²-style bound over
// 4000 draws of the first token).
func TestSamplingFollowsTheDistribution(t *testing.T) {
	noLeaks(t)
	m := newTiny(t, Qwen2, 24, cpu32)
	prompt := []int{2, 4, 6}
	full := rowLogits(t, m, prompt)
	V := m.Config.VocabSize
	last := full[(len(prompt)-1)*V : len(prompt)*V]
	const T, n = 0.9, 4000
	probs := make([]float64, V)
	z := 0.0
	for i, v := range last {
		probs[i] = math.Exp(float64(v) / T)
		z += probs[i]
	}
	batch := make([]GenRequest, n)
	for i := range batch {
		batch[i] = GenRequest{Prompt: prompt, MaxNewTokens: 1, Sampling: Sampling{Temperature: T}}
	}
	g := torch.NewGenerator(torch.CPU, 5)
	defer g.Free()
	out, err := m.Generate(batch, nil, g)
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]float64, V)
	for _, o := range out {
		counts[o.Tokens[0]]++
	}
	for i := range probs {
		p := probs[i] / z
		sd := math.Sqrt(n * p * (1 - p))
		if math.Abs(counts[i]-n*p) > 5*sd+2 {
			t.Fatalf("token %d drawn %v times, expected %.1f ± %.1f", i, counts[i], n*p, sd)
		}
	}
}

func TestGenerateRefusesBadRequests(t *testing.T) {
	noLeaks(t)
	m := newTiny(t, Qwen2, 25, cpu32)
	for name, c := range map[string]struct {
		req  GenRequest
		want string
	}{
		"empty prompt": {GenRequest{MaxNewTokens: 2}, "empty prompt"},
		"bad token":    {GenRequest{Prompt: []int{1, 999}, MaxNewTokens: 2}, "token id 999"},
		"temperature":  {GenRequest{Prompt: []int{1}, MaxNewTokens: 2, Sampling: Sampling{Temperature: -1}}, "temperature"},
		"top_p":        {GenRequest{Prompt: []int{1}, MaxNewTokens: 2, Sampling: Sampling{Temperature: 1, TopP: 1.5}}, "top_p"},
		"positions":    {GenRequest{Prompt: []int{1, 2, 3}, MaxNewTokens: 126}, "prompt 3 + max_new_tokens 126 = 129 tokens exceeds the model's max_position_embeddings 128"},
	} {
		if _, err := m.Generate([]GenRequest{c.req}, nil, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%s: want error mentioning %q, got %v", name, c.want, err)
		}
	}
	small, err := m.NewCache(1, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer small.Free()
	if _, err := m.Generate([]GenRequest{greedy([]int{1, 2, 3}, 5)}, small, nil); err == nil || !strings.Contains(err.Error(), "cache holds") {
		t.Fatalf("too small a cache: %v", err)
	}
	// a cache that fits is reused across calls with the same result
	big, _ := m.NewCache(2, 32)
	defer big.Free()
	r1, _ := m.Generate([]GenRequest{greedy([]int{1, 2, 3}, 5), greedy([]int{4}, 7)}, big, nil)
	r2, _ := m.Generate([]GenRequest{greedy([]int{1, 2, 3}, 5), greedy([]int{4}, 7)}, big, nil)
	r3, _ := m.Generate([]GenRequest{greedy([]int{1, 2, 3}, 5), greedy([]int{4}, 7)}, nil, nil)
	if !slices.Equal(r1[1].Tokens, r2[1].Tokens) || !slices.Equal(r1[1].Tokens, r3[1].Tokens) {
		t.Fatal("a reused cache changed the output")
	}
}
