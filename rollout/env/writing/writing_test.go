package writing

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"troupe/rollout"
)

func TestRewardTerms(t *testing.T) {
	summary := "Night trains carry sleeping travellers across borders while cities rest quietly."                  // 11 words, 11 distinct
	expansion := summary + " Each carriage holds narrow bunks, small sinks and windows that frame dark fields, " + // +13
		"sleepy stations and distant lights until morning arrives." // +8: 32 words
	terms, failed := Reward(summary, expansion)
	// ratio 32/11 = 2.9; distinct 31 ≥ 22; every content word of the summary reappears
	want := map[string]float64{"structure": 1, "length_ratio": 1, "unique_words": 0.5, "coherence": 0.5}
	for k, v := range want {
		if terms[k] != v {
			t.Errorf("%s = %g, want %g (failed: %v)", k, terms[k], v, failed)
		}
	}
	// a summary that is too short gates everything
	terms, failed = Reward("Trains run.", expansion)
	if terms["structure"] != 0 || terms["length_ratio"] != 0 || terms["coherence"] != 0 || len(failed) != 1 || !strings.Contains(failed[0], "summary has 2 words") {
		t.Errorf("short summary: %v %v", terms, failed)
	}
	// an expansion that repeats the summary: ratio 1, distinct words equal, coherent
	terms, failed = Reward(summary, summary)
	if terms["structure"] != 1 || terms["length_ratio"] != 0 || terms["unique_words"] != 0 || terms["coherence"] != 0.5 || len(failed) != 2 {
		t.Errorf("repeated summary: %v %v", terms, failed)
	}
	// word salad: a summary of three words repeated fails the repetition gate
	salad := "matter because matter matter because are matter because matter matter"
	if terms, failed = Reward(salad, expansion); terms["structure"] != 0 || len(failed) != 1 || !strings.Contains(failed[0], `repeats "matter" 6 times in 10 words`) {
		t.Errorf("word salad: %v %v", terms, failed)
	}
	// a looped phrase fails too, though no single word dominates
	loop := "trains matter because they shape how people live trains matter because they shape how people live trains matter because they shape how people live"
	if terms, failed = Reward(loop, expansion); terms["structure"] != 0 || len(failed) != 1 || !strings.Contains(failed[0], "repeats its phrases (14 of its 22") {
		t.Errorf("looped phrase: %v %v", terms, failed)
	}
	// byte soup fails the malformed-token gate
	soup := "Kite festivals matter because they shape how people live,dechoolil Ereet far cl\x1c expan Vis\ufffd reefri\ufffd ban de det wit\t Comm\ufffd"
	if terms, failed = Reward(summary, soup); terms["structure"] != 0 || len(failed) != 1 || !strings.Contains(failed[0], "malformed tokens") {
		t.Errorf("byte soup: %v %v", terms, failed)
	}
	// but a short text may use a word twice
	twice := "The trains and the buses carry people between towns at night."
	if terms, failed = Reward(twice, expansion); terms["structure"] != 1 {
		t.Errorf("a word used twice in 11: %v %v", terms, failed)
	}
	// an expansion about something else: not coherent
	other := "Bees collect nectar from meadow flowers, returning to hives where workers turn it into honey for winter months ahead, " +
		"guarding entrances, fanning wings and cleaning cells."
	if terms, _ = Reward(summary, other); terms["coherence"] != 0 {
		t.Errorf("unrelated expansion: %v", terms)
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
		if !r.Success || r.Reward != MaxReward {
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
