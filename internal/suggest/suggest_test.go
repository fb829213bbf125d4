package suggest

import "testing"

func TestClosest(t *testing.T) {
	commands := []string{"grpo", "bench", "check", "compare", "eval", "export", "generate", "init", "plot", "sft"}
	for typed, want := range map[string]string{
		"evaluate":   "eval",     // the typed name starts with a known one
		"chek":       "check",    // one letter missing
		"genrate":    "generate", // one letter missing from a long name
		"exprot":     "export",   // two letters swapped
		"Eval":       "eval",     // case
		"frobnicate": "",         // nothing near
		"x":          "",         // too short to be a prefix of anything
		"plot":       "",         // a known name is not a typo of another
	} {
		if got := Closest(typed, commands); got != want {
			t.Errorf("Closest(%q) = %q, want %q", typed, got, want)
		}
	}
	// ties: the first in sorted order, whatever order the names come in
	if a, b := Closest("lr", []string{"lm", "la"}), Closest("lr", []string{"la", "lm"}); a != "la" || b != "la" {
		t.Errorf("ties: %q and %q, want la", a, b)
	}
	if got := DidYouMean("stesp", []string{"steps", "seed"}); got != " (did you mean steps?)" {
		t.Errorf("DidYouMean: %q", got)
	}
	if got := DidYouMean("zzzzzz", []string{"steps"}); got != "" {
		t.Errorf("DidYouMean of nothing near: %q", got)
	}
}

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"flaw", "lawn", 2}, {"steps", "stesp", 1}, {"stf", "sft", 1}, {"ab", "ba", 1}} {
		if got := Distance(c.a, c.b); got != c.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}
