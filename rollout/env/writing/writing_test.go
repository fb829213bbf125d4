package writing

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"troupe/rollout"
)

// Vectors: each pair's total was computed by running the reference
// (LLM_Collab_Writing rewards/tldr_rewards.py, tldr_combined_reward) on it;
// the terms were worked out by hand from the levels in reward.go.
func TestRewardMatchesReference(t *testing.T) {
	s := "Night trains carry sleeping travellers across borders while cities rest quietly."
	b := "Trains carry people at night across many borders."
	for _, c := range []struct {
		name, summary, expansion string
		want                     float64
		terms                    map[string]float64
	}{
		// chars 234/82 = 2.85, distinct 34/11 = 3.09; categories: elaboration
		// ("also" no; "as well as" no…) — the total is the reference's
		{"full", s, s + " For example, each carriage holds narrow bunks, small sinks and windows that frame dark fields, sleepy stations and distant lights until morning arrives.", 2.82,
			map[string]float64{"structure": 0.5, "length_ratio": 1, "unique_words": 0.5, "overlap": 0.6}},
		{"short summary", "Trains run.", s, 0, map[string]float64{"structure": 0}},
		// ratio 1: outside [1.1, 5], stop after level 1
		{"same text", s, s, 0.5, map[string]float64{"structure": 0.5, "length_ratio": 0}},
		// ratio 105/80 = 1.3125: (1.305 − 1.1)/0.5 of level 2; distinct 16/11 = 1.4545: 0.5·(1.4545 − 1.3)/0.7
		{"ramp below the window", s, s + " Bunks fold down at dusk.", 1.8353896103896103,
			map[string]float64{"structure": 0.5, "length_ratio": (105.0/80 - 1.1) / 0.5, "unique_words": 0.5 * (16.0/11 - 1.3) / 0.7}},
		// ratio 174/49 = 3.551: 1 − (3.551 − 3.2)/1.8
		{"ramp above the window", b, b + " Each carriage holds narrow bunks, small sinks, reading lamps and windows that frame dark fields, sleepy stations and rivers.", 2.4049886621315193,
			map[string]float64{"structure": 0.5, "length_ratio": 1 - (174.0/49-3.2)/1.8, "unique_words": 0.5}},
		// distinct 13/11 = 1.18 < 1.3: stop after level 2
		{"too few distinct words", s, s + " Night trains carry sleeping travellers across borders while cities rest quietly and trains carry travellers.", 1.5,
			map[string]float64{"structure": 0.5, "length_ratio": 1, "unique_words": 0}},
		// no shared content word: the overlap pays nothing
		{"unrelated expansion", s, "Bees collect nectar from meadow flowers, returning to hives where workers turn it into honey for winter months ahead, guarding entrances, fanning wings and cleaning cells.", 2.0,
			map[string]float64{"structure": 0.5, "length_ratio": 1, "unique_words": 0.5, "overlap": 0}},
		{"tokens but no words", "!!! ??? ... ,,, --- ;;; ::: ***", "Bees collect nectar from meadow flowers, returning to hives where workers turn it into honey for winter months ahead.", 1.1810035842293907,
			map[string]float64{"structure": 0.5, "unique_words": 0}},
	} {
		r := Reward(c.summary, c.expansion, false)
		if math.Abs(r.Reward-c.want) > 1e-9 {
			t.Errorf("%s: reward %.12g, the reference gives %.12g (terms %v, failed %v)", c.name, r.Reward, c.want, r.Terms, r.Failed)
		}
		for k, v := range c.terms {
			if math.Abs(r.Terms[k]-v) > 1e-9 {
				t.Errorf("%s: %s = %.12g, want %.12g", c.name, k, r.Terms[k], v)
			}
		}
	}
}

// The transition term: 0.4 × (0.4 + 0.05 per category after the first),
// found as substrings; twelve categories give 0.4 × 0.95.
func TestTransitionsAndSuccess(t *testing.T) {
	for _, c := range []struct {
		text string
		k    int
	}{
		{"Plain words only here.", 0},
		{"Trains also run.", 2}, // "also" (elaboration) and "so" inside it (cause and effect)
		{"furthermore for example that is therefore however first indeed in summary similarly although if when", 12},
	} {
		if k := transitionCategories(c.text); k != c.k {
			t.Errorf("%q: %d categories, want %d", c.text, k, c.k)
		}
	}
	if MaxReward != 0.5+1+0.5+0.4*0.95+0.6 {
		t.Errorf("MaxReward %g", MaxReward)
	}
	s := "Night trains carry sleeping travellers across borders while cities rest quietly."
	full := Reward(s, s+" For example, each carriage holds narrow bunks, small sinks and windows that frame dark fields, sleepy stations and distant lights until morning arrives.", false)
	if !full.Success || full.Terms["transitions"] < 0.22 {
		t.Errorf("every level but the transitions in full: %+v", full)
	}
	if r := Reward(s, "Bees collect nectar from meadow flowers, returning to hives where workers turn it into honey for winter months ahead, guarding entrances, fanning wings and cleaning cells.", false); r.Success {
		t.Errorf("no overlap, yet success: %+v", r)
	}
}

// troupe's guards (env.writing.guards) fail level 1 for degenerate text
// that the reference pays.
func TestGuards(t *testing.T) {
	s := "Night trains carry sleeping travellers across borders while cities rest quietly."
	expansion := s + " For example, each carriage holds narrow bunks, small sinks and windows that frame dark fields, sleepy stations and distant lights until morning arrives."
	for _, c := range []struct{ name, summary, expansion, why string }{
		{"word salad", "matter because matter matter because are matter because matter matter", expansion, `repeats "matter" 6 times in 10 words`},
		{"looped phrase", "trains matter because they shape how people live trains matter because they shape how people live trains matter because they shape how people live", expansion, "repeats its phrases (14 of its 22"},
		{"byte soup", s, "Kite festivals matter because they shape how people live,dechoolil Ereet far cl\x1c expan Vis\ufffd reefri\ufffd ban de det wit\t Comm\ufffd", "malformed tokens"},
	} {
		r := Reward(c.summary, c.expansion, true)
		if r.Reward != 0 || len(r.Failed) != 1 || !strings.Contains(r.Failed[0], c.why) {
			t.Errorf("%s with guards: %+v", c.name, r)
		}
		if Reward(c.summary, c.expansion, false).Reward == 0 {
			t.Errorf("%s without guards: the reference pays level 1", c.name)
		}
	}
	twice := "The trains and the buses carry people between towns at night."
	if r := Reward(twice, expansion, true); r.Terms["structure"] != 0.5 {
		t.Errorf("a word used twice in 11 words: %+v", r)
	}
}

// The single-agent baseline splits one response at the marker line.
func TestSingleAgentSplit(t *testing.T) {
	s, x := Split("A summary here.\n ---\nAn expansion\nof two lines.")
	if s != "A summary here." || x != "An expansion\nof two lines." {
		t.Errorf("split: %q %q", s, x)
	}
	if s, x = Split("no marker"); s != "" || x != "no marker" {
		t.Errorf("no marker: %q %q", s, x)
	}
	e, err := New(DefaultConfig(), "train")
	if err != nil {
		t.Fatal(err)
	}
	task := e.Task(0)
	resp := e.Demonstrate("solo", task, "then a line holding only ---", true)
	sc := e.Score(task, resp)
	js := e.JointScore(task, 0, []string{e.Demonstrate("first", task, "", true), e.Demonstrate("second", task, "", true)})
	if sc.Reward != js.Reward || sc.Reward < 2.5 {
		t.Errorf("single %v, joint %v: the same texts score the same", sc.Reward, js.Reward)
	}
	// the terms are named as the joint workflow logs them: reward/<term>
	for k, v := range js.Terms {
		if got, ok := sc.Metrics["reward/"+k]; !ok || got != v {
			t.Errorf("single agent's metric reward/%s = %v (present %v), joint term %v", k, got, ok, v)
		}
	}
	if len(sc.Metrics) != len(js.Terms) {
		t.Errorf("single agent's metrics %v, joint terms %v", sc.Metrics, js.Terms)
	}
}

func TestProceduralSplitsAndDemonstrations(t *testing.T) {
	train, err := New(DefaultConfig(), "train")
	if err != nil {
		t.Fatal(err)
	}
	test, _ := New(DefaultConfig(), "test")
	seen := map[string]bool{}
	for i := 0; i < train.Len(); i++ {
		seen[train.Task(i).Meta["topic"]] = true
	}
	for i := 0; i < test.Len(); i++ {
		if seen[test.Task(i).Meta["topic"]] {
			t.Fatalf("topic %q is in both splits", test.Task(i).Meta["topic"])
		}
	}
	if train.Len() != 32*3 || test.Len() != 8*3 {
		t.Errorf("%d train, %d test tasks", train.Len(), test.Len())
	}
	for i := 0; i < train.Len(); i++ {
		tk := train.Task(i)
		r := train.JointScore(tk, 0, []string{train.Demonstrate("first", tk, "", true), train.Demonstrate("second", tk, "", true)})
		if !r.Success {
			t.Fatalf("%s: the demonstration pair scores %g: %s", tk.ID, r.Reward, r.Feedback)
		}
		if w := train.JointScore(tk, 0, []string{train.Demonstrate("first", tk, "", true), train.Demonstrate("second", tk, "", false)}); w.Success {
			t.Fatalf("%s: the wrong demonstration succeeds", tk.ID)
		}
	}
}

func TestFileDatasets(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "tldr.jsonl")
	os.WriteFile(p, []byte(`{"post": "My cat learned to open doors.", "id": 7}`+"\n\n"+`{"post": "Our town voted on a new park."}`+"\n"), 0o644)
	cfg := DefaultConfig()
	cfg.Source, cfg.Train, cfg.PromptField, cfg.IDField = "file", p, "post", "id"
	e, err := New(cfg, "train")
	if err != nil {
		t.Fatal(err)
	}
	if e.Len() != 2 || e.Task(0).ID != "7" || e.Task(1).Question != "Our town voted on a new park." {
		t.Errorf("tasks %+v %+v", e.Task(0), e.Task(1))
	}
	if te, err := New(cfg, "test"); te != nil || err != nil {
		t.Errorf("no test file: %v %v", te, err)
	}
	cfg.PromptField = "text"
	if _, err := New(cfg, "train"); err == nil || !strings.Contains(err.Error(), `no text field "text"`) {
		t.Errorf("wrong field: %v", err)
	}
	var _ rollout.JointScorer = e
}
