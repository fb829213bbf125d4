package math

import (
	"strings"
	"testing"

	"troupe/rollout"
)

// TestOracle checks the math demonstrations: a verifier approves exactly
// the answers equivalent to the gold one; a solver boxes the gold answer
// when right, else the recorded mistake, else a nearby wrong number; and
// train sft reaches the oracle through the registry.
func TestOracle(t *testing.T) {
	draw := func(p float64) *rollout.Draw { return &rollout.Draw{Rand: rollout.NewRand(5), PCorrect: p} }
	task := rollout.Task{Question: "What is $3 + 4$?", Answer: "7"}
	for prompt, verdict := range map[string]string{
		`The Solver wrote: \boxed{7}.`:           "<verify>approve</verify>",
		`The Solver wrote: \boxed{7.0}`:          "<verify>approve</verify>",
		`The Solver wrote: \boxed{\frac{14}{2}}`: "<verify>reject</verify>", // an integer written as a fraction scores 0
		`The Solver wrote: \boxed{8}.`:           "<verify>reject</verify>",
		`The Solver wrote nothing boxed.`:        "<verify>reject</verify>",
	} {
		if got := Oracle("Verifier", task, prompt, draw(0)); !strings.HasSuffix(got, verdict) {
			t.Errorf("verifier on %q: got %q, want it to end with %s", prompt, got, verdict)
		}
	}
	if got, want := Oracle("solver", task, "", draw(1)), "$3 + 4 = 7$.\nThe answer is \\boxed{7}."; !strings.HasSuffix(got, want) {
		t.Errorf("right solver: got %q, want it to end with %q", got, want)
	}
	mistaken := task
	mistaken.Meta = map[string]string{"mistake": "12"}
	if got := Oracle("solver", mistaken, "", draw(0)); !strings.HasSuffix(got, `\boxed{12}.`) {
		t.Errorf("wrong solver with a recorded mistake: got %q, want \\boxed{12}", got)
	}
	for seed := uint64(0); seed < 20; seed++ {
		got := Oracle("solver", task, "", &rollout.Draw{Rand: rollout.NewRand(seed), PCorrect: 0})
		ok := false
		for _, w := range []string{"2", "3", "4", "5", "6", "8", "9", "10", "11", "12"} {
			ok = ok || strings.HasSuffix(got, `\boxed{`+w+`}.`)
		}
		if !ok {
			t.Errorf("wrong solver, seed %d: got %q, want a number within 5 of 7 but not 7", seed, got)
		}
	}
	// a wrong place-value demonstration reads one place to the right (the
	// units wrap to the leftmost digit), whatever mistake the task records
	for q, want := range map[[2]string]string{
		{"What is the hundreds digit of $472$?", "4"}:        "7",
		{"What is the tens digit of $472$?", "7"}:            "2",
		{"Which digit is in the units place of $472$?", "2"}: "4",
		{"What is the tens digit of $47$?", "4"}:             "7",
		{"What is the units digit of $47$?", "7"}:            "4",
	} {
		place := rollout.Task{Question: q[0], Answer: q[1], Meta: map[string]string{"kind": "place-value", "mistake": "9"}}
		if got := Oracle("solver", place, "", draw(0)); !strings.HasSuffix(got, `\boxed{`+want+`}.`) {
			t.Errorf("wrong solver on %q: got %q, want \\boxed{%s}", q[0], got, want)
		}
		if got := Oracle("solver", place, "", draw(1)); !strings.HasSuffix(got, `\boxed{`+q[1]+`}.`) {
			t.Errorf("right solver on %q: got %q, want \\boxed{%s}", q[0], got, q[1])
		}
	}
	o, err := rollout.OracleFor("math-refine", nil, "math", &Env{})
	if err != nil {
		t.Fatal(err)
	}
	if got := o("solver", task, "", draw(1)); got != Oracle("solver", task, "", draw(1)) {
		t.Errorf("OracleFor(math-refine, math): got %q, want the math oracle's demonstration", got)
	}
}
