package model

import (
	"encoding/json"
	"math"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"troupe/internal/pyref"
	"troupe/torch"
)

// penaltyCase is one row of logits with its tokens so far and its penalty.
type penaltyCase struct {
	Logits  []float32 `json:"logits"`
	Ids     []int     `json:"ids"`
	Penalty float64   `json:"penalty"`
}

// penaltyCases cover positive, negative and zero logits, repeated ids, a
// penalty below 1 and one that is off.
var penaltyCases = []penaltyCase{
	{Logits: []float32{2.5, -1.25, 0, 3.75, -0.5, 1, 0.125, -4}, Ids: []int{0, 1, 2, 2, 6, 7}, Penalty: 1.2},
	{Logits: []float32{-2, 1.5, 0.75, 0, 4, -3.5, 2, 0.25}, Ids: []int{4, 5, 1}, Penalty: 0.7},
	{Logits: []float32{1, 2, 3, 4, 5, 6, 7, 8}, Ids: []int{7, 6}, Penalty: 1},
}

// penaliseRows applies the sampler's repetition penalty to the cases.
func penaliseRows(t *testing.T, cases []penaltyCase) [][]float32 {
	t.Helper()
	s := torch.NewScope()
	defer s.Close()
	V := int64(len(cases[0].Logits))
	var flat []float32
	var ids [][]int
	var ss []Sampling
	for _, c := range cases {
		flat = append(flat, c.Logits...)
		ids = append(ids, c.Ids)
		ss = append(ss, Sampling{Temperature: 1, RepetitionPenalty: c.Penalty})
	}
	p := newRowParams(ss, V, torch.CPU)
	p.seen = seenTokens(ids, V, torch.CPU)
	got := penalise(torch.FromFloat32(flat, int64(len(cases)), V), p).Float32s()
	out := make([][]float32, len(cases))
	for i := range cases {
		out[i] = got[int64(i)*V : int64(i+1)*V]
	}
	return out
}

// The sampler's repetition penalty is transformers'
// RepetitionPenaltyLogitsProcessor: the same float32 numbers on the same
// rows (tokens seen twice penalised once, zero logits unchanged).
func TestRepetitionPenaltyMatchesTransformers(t *testing.T) {
	python := pyref.Python(t)
	got := penaliseRows(t, penaltyCases)
	in, _ := json.Marshal(penaltyCases)
	script := `
import json, sys, torch
from transformers.generation.logits_process import RepetitionPenaltyLogitsProcessor
out = []
for c in json.loads(sys.argv[1]):
    scores = torch.tensor([c["logits"]], dtype=torch.float32)
    ids = torch.tensor([c["ids"]], dtype=torch.long)
    out.append(RepetitionPenaltyLogitsProcessor(penalty=float(c["penalty"]))(ids, scores)[0].tolist())
print(json.dumps(out))
`
	raw, err := exec.Command(python, "-c", script, string(in)).CombinedOutput()
	if err != nil {
		t.Fatalf("transformers: %v\n%s", err, raw)
	}
	var want [][]float64
	if err := json.Unmarshal(raw[strings.LastIndexByte(strings.TrimSpace(string(raw)), '\n')+1:], &want); err != nil {
		t.Fatalf("transformers output: %v\n%s", err, raw)
	}
	for i := range penaltyCases {
		for v := range got[i] {
			if float64(got[i][v]) != float64(float32(want[i][v])) {
				t.Errorf("case %d token %d: %g, transformers %g", i, v, got[i][v], want[i][v])
			}
		}
	}
}

// The same cases by the rule itself, so the arithmetic is checked where the
// reference environment is absent.
func TestRepetitionPenaltyRule(t *testing.T) {
	got := penaliseRows(t, penaltyCases)
	for i, c := range penaltyCases {
		for v, z := range c.Logits {
			want := z
			if slices.Contains(c.Ids, v) && c.Penalty != 1 {
				if z > 0 {
					want = z / float32(c.Penalty)
				} else {
					want = z * float32(c.Penalty)
				}
			}
			if got[i][v] != want {
				t.Errorf("case %d token %d: %g, want %g", i, v, got[i][v], want)
			}
		}
	}
}

// Greedy generation with a repetition penalty picks, at every step, the
// argmax of a full forward's logits penalised over the prompt and the
// tokens generated so far; rows of different lengths finish and are
// compacted away without disturbing the others, and the reported log-prob
// is the unpenalised one (what the update recomputes).
func TestGreedyGenerationAppliesTheRepetitionPenalty(t *testing.T) {
	noLeaks(t)
	m := newTiny(t, Qwen2, 23, cpu32)
	pen := Sampling{RepetitionPenalty: 3}
	reqs := []GenRequest{
		{Prompt: []int{1, 2, 3, 4, 5}, MaxNewTokens: 12, Sampling: pen},
		{Prompt: []int{9}, MaxNewTokens: 4, Sampling: pen},
		{Prompt: []int{30, 31, 32}, MaxNewTokens: 12},
		{Prompt: []int{40, 41}, MaxNewTokens: 3, Sampling: pen},
	}
	out, err := m.Generate(reqs, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := m.Generate([]GenRequest{{Prompt: reqs[0].Prompt, MaxNewTokens: 12}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(plain[0].Tokens, out[0].Tokens) {
		t.Fatalf("the penalty changed nothing: %v", out[0].Tokens)
	}
	V := m.Config.VocabSize
	for i, r := range reqs {
		seq := append(append([]int(nil), r.Prompt...), out[i].Tokens...)
		full := rowLogits(t, m, seq)
		for j, tok := range out[i].Tokens {
			p := len(r.Prompt) - 1 + j
			row := slices.Clone(full[p*V : (p+1)*V])
			raw := slices.Clone(row)
			if r.Sampling.Penalised() {
				for _, id := range seq[:p+1] {
					if raw[id] > 0 {
						row[id] = raw[id] / 3
					} else {
						row[id] = raw[id] * 3
					}
				}
			}
			best := 0
			for v := range row {
				if row[v] > row[best] {
					best = v
				}
			}
			if tok != best {
				t.Fatalf("row %d step %d: generated %d, penalised argmax %d (tokens %v)", i, j, tok, best, out[i].Tokens)
			}
			mx, z := float64(slices.Max(raw)), 0.0
			for _, v := range raw {
				z += math.Exp(float64(v) - mx)
			}
			if want := float64(raw[tok]) - mx - math.Log(z); math.Abs(float64(out[i].LogProbs[j])-want) > 1e-4 {
				t.Fatalf("row %d step %d: log-prob %g, want the unpenalised %g", i, j, out[i].LogProbs[j], want)
			}
		}
	}
}

// The engine applies the repetition penalty as batched Generate does (whose
// steps TestGreedyGenerationAppliesTheRepetitionPenalty checks against full
// forwards): penalised and plain greedy rows mixed, fewer slots than
// requests so slots are reused, a host read every 4 steps. Static batches
// refuse a penalised request by name.
func TestEngineAppliesTheRepetitionPenalty(t *testing.T) {
	noLeaks(t)
	m := newTiny(t, Qwen2, 23, cpu32)
	var reqs []EngineRequest
	for i, p := range [][]int{{1, 2, 3, 4, 5}, {9}, {30, 31, 32}, {40, 41}, {1, 2, 3, 4, 5}, {7, 7, 7}} {
		r := EngineRequest{GenRequest: GenRequest{Prompt: p, MaxNewTokens: 6 + 2*i}, Seed: uint64(i)}
		if i != 2 {
			r.Sampling.RepetitionPenalty = 3
		}
		reqs = append(reqs, r)
	}
	e := newEngine(t, m, EngineConfig{SlotLen: 32, MaxSlots: 3, SyncEvery: 4})
	got, err := e.Generate(reqs)
	if err != nil {
		t.Fatal(err)
	}
	penalised := 0
	for i, r := range reqs {
		want, err := m.Generate([]GenRequest{r.GenRequest}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		sameOrNearTie(t, m, "request "+string(rune('0'+i)), r.Prompt, got[i], want[0])
		plain, _ := m.Generate([]GenRequest{{Prompt: r.Prompt, MaxNewTokens: r.MaxNewTokens}}, nil, nil)
		if r.Sampling.Penalised() && !slices.Equal(plain[0].Tokens, got[i].Tokens) {
			penalised++
		}
	}
	if penalised == 0 {
		t.Fatalf("the penalty changed no engine row")
	}
	static := newEngine(t, m, EngineConfig{SlotLen: 32, MaxSlots: 3, StaticBatches: true})
	if _, err := static.Submit(reqs[0]); err == nil || !strings.Contains(err.Error(), "static batches (CUDA graphs) do not apply a repetition penalty") {
		t.Errorf("a penalised request on static batches: %v", err)
	}
}
