package run

import (
	"io"
	"os"
	"slices"
	"testing"

	"troupe/policy"
)

// With --redraw every pass over the tasks trains on a new draw of the
// demonstrations (so a wrong one is a slip, not a memorised fact), the same
// draw for every source model and whenever it is asked again; without it
// every pass reuses the first. train asks for pass k+1 when pass k is
// used up.
func TestSFTRedraw(t *testing.T) {
	team := tinyTeam(t, 4, "assignment=separate")
	defer team.free()
	tok := team.tokenizers[team.agents[0].Model]
	responses := func(seqs []policy.Sequence) []string {
		var out []string
		for _, s := range seqs {
			out = append(out, s.Agent+":"+tok.Decode(s.Response))
		}
		return out
	}
	for _, redraw := range []bool{false, true} {
		p := &passes{c: &SFT{Tasks: 24, PCorrect: 0.5, Seed: 3, Redraw: redraw}, t: team}
		var got [4][]string
		for _, k := range []int{0, 1, 2, 1} {
			seqs, err := p.of("tiny", k)
			if err != nil {
				t.Fatal(err)
			}
			if len(seqs) < 24 {
				t.Fatalf("redraw %v, pass %d: %d demonstrations for 24 tasks", redraw, k, len(seqs))
			}
			if r := responses(seqs); got[k] == nil {
				got[k] = r
			} else if !slices.Equal(r, got[k]) {
				t.Errorf("redraw %v: pass %d drawn twice differs", redraw, k)
			}
		}
		for k := 1; k <= 2; k++ {
			if same := slices.Equal(got[0], got[k]); same == redraw {
				t.Errorf("redraw %v: pass %d is the same as pass 0: %v", redraw, k, same)
			}
		}
	}
	c := &SFT{Tasks: 24, PCorrect: 0.5, Seed: 3, Redraw: true, Steps: 12, Batch: 8, Lr: 1e-4, LogEvery: 100}
	p := &passes{c: c, t: team}
	var asked []int
	n := 0
	done, err := c.train(io.Discard, team.models[team.trained[0].Name], func(k int) ([]policy.Sequence, error) {
		asked = append(asked, k)
		seqs, err := p.of("tiny", k)
		n = len(seqs)
		return seqs, err
	}, func() os.Signal { return nil })
	if err != nil || done != 12 {
		t.Fatal(done, err)
	}
	if want := (12*8 - 1) / n; len(asked) != want+1 || asked[len(asked)-1] != want {
		t.Errorf("12 steps × 8 of ~%d demonstrations: passes asked for %v, want 0..%d", n, asked, want)
	}
}
