package bench

import (
	"strings"
	"testing"

	"troupe/model"
	"troupe/torch"
)

// Run on a tiny random model returns, per batch size, a prefill and a
// decode row with the tokens each timed, then the update; every rate is
// the tokens over the seconds. (No timing is asserted.)
func TestRunRows(t *testing.T) {
	cfg, err := ParseShape("hidden=32,layers=1,heads=4,kv-heads=2,intermediate=64,vocab=64")
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.New(cfg, 1, model.Options{DType: torch.Float32, Device: torch.CPU})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	want := []Row{{Phase: "prefill", Batch: 1, Tokens: 5}, {Phase: "decode", Batch: 1, Tokens: 15},
		{Phase: "prefill", Batch: 3, Tokens: 15}, {Phase: "decode", Batch: 3, Tokens: 45}, {Phase: "update", Batch: 2, Tokens: 10}}
	// A decode row is the difference of two best times; on a busy machine it
	// can come out ≤ 0 and is then reported as not measured (0 s, 0 tok/s).
	// At least one of the two must be measured; a run where neither is gets
	// a second try.
	for try := 0; ; try++ {
		rows, err := Run(m, torch.CPU, Options{Batches: []int{1, 3}, PromptLen: 5, NewTokens: 16, UpdateRows: 2, UpdateLen: 6, Reps: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(want) {
			t.Fatalf("%d rows, want %d: %+v", len(rows), len(want), rows)
		}
		decodes := 0
		for i, w := range want {
			r := rows[i]
			if r.Phase != w.Phase || r.Batch != w.Batch || r.Tokens != w.Tokens {
				t.Errorf("row %d: %s batch %d tokens %d, want %s batch %d tokens %d", i, r.Phase, r.Batch, r.Tokens, w.Phase, w.Batch, w.Tokens)
			}
			if r.Phase == "decode" && r.Secs == 0 && r.TokS == 0 {
				continue // not measured
			}
			if r.Phase == "decode" {
				decodes++
			}
			if r.Secs <= 0 || r.TokS <= 0 || r.FLOPsPerToken <= 0 {
				t.Errorf("row %d: seconds %g, tok/s %g, FLOPs/token %g", i, r.Secs, r.TokS, r.FLOPsPerToken)
			}
			if d := r.TokS*r.Secs - float64(r.Tokens); d*d > 1e-6 {
				t.Errorf("row %d: %g tok/s × %g s ≠ %d tokens", i, r.TokS, r.Secs, r.Tokens)
			}
		}
		if decodes > 0 {
			return
		}
		if try == 1 {
			t.Fatalf("no decode row was measured in two runs: %+v", rows)
		}
	}
}

func TestParseShape(t *testing.T) {
	c, err := ParseShape("40m")
	if err != nil || c.HiddenSize != 512 || c.NumLayers != 8 || c.HeadDim != 64 {
		t.Fatalf("40m: %+v, %v", c, err)
	}
	for _, bad := range []string{"hidden=0", "depth=3", "hidden=30,heads=4", "huge"} {
		if _, err := ParseShape(bad); err == nil || !strings.Contains(err.Error(), "--shape") {
			t.Errorf("%q: error %v, want one naming --shape", bad, err)
		}
	}
}
