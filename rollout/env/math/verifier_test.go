package math

// verifier_test.go — the verifier grading mode against the reference's
// verdicts: testdata/verifier_vectors.json holds (response, gold, verdict)
// cases graded by Math-Verify 0.8.0 itself as PettingLLMs calls it
// (testdata/verifier_vectors.py made them and says how to rerun it).
// troupe gives the same verdict on every case but those listed in
// verifierDepartures, where it gives the other one for the reason given
// (docs/departures.md, AT-GRPO departure 19).

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"troupe/rollout"
)

type verifierCase struct {
	Name       string   `json:"name"`
	Response   string   `json:"response"`
	Gold       string   `json:"gold"`
	Verdict    bool     `json:"verdict"`
	Parsed     []string `json:"parsed"`
	GoldParsed []string `json:"gold_parsed"`
}

func verifierVectors(t *testing.T) []verifierCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "verifier_vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []verifierCase `json:"cases"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) < 100 {
		t.Fatalf("%d cases in verifier_vectors.json; the generator writes 186", len(f.Cases))
	}
	return f.Cases
}

// verifierDepartures are the cases where troupe's verdict is not the
// reference's, by name, with the reason.
var verifierDepartures = map[string]string{
	"decimal pi": "a decimal against an irrational value is compared by the grader's evaluation (within 1e-12), not rounded to 6 places as sympy rounds a Float",
}

func TestVerifierMatchesReference(t *testing.T) {
	cases := verifierVectors(t)
	agree := 0
	for _, c := range cases {
		got := VerifierEqual(c.Response, c.Gold)
		reason, departs := verifierDepartures[c.Name]
		switch {
		case departs && got == c.Verdict:
			t.Errorf("%s: listed as a departure (%s) but troupe agrees with the reference (%v)", c.Name, reason, got)
		case !departs && got != c.Verdict:
			a := parseVerifier(c.Response)
			g := parseVerifier(c.Gold)
			t.Errorf("%s: %q against %q: troupe %v, reference %v\n  reference parsed %q and %q\n  troupe parsed %q (value %v) and %q (value %v)",
				c.Name, c.Response, c.Gold, got, c.Verdict, c.Parsed, c.GoldParsed, a.text, a.value != nil, g.text, g.value != nil)
		default:
			agree++
		}
	}
	for name := range verifierDepartures {
		found := false
		for _, c := range cases {
			found = found || c.Name == name
		}
		if !found {
			t.Errorf("departure %q names no case", name)
		}
	}
	t.Logf("%d of %d cases as the reference; %d departures", agree-len(verifierDepartures), len(cases), len(verifierDepartures))
}

// The verifier mode is what env.math.grading selects: the same response is
// right with no box under the verifier and wrong under the boxed grader.
func TestGradingModeSelectsTheVerifier(t *testing.T) {
	task := rollout.Task{Answer: "42"}
	response := "Adding them up, the answer is 42."
	if s := (Reward{}).Score(task, response); s.Success {
		t.Errorf("boxed grading: %+v, want no answer without a box", s)
	}
	s := (Reward{Grading: GradingVerifier}).Score(task, response)
	if !s.Success || s.Reward != 1 || s.Extracted != "42" {
		t.Errorf("verifier grading: %+v, want 42 graded right", s)
	}
	cfg := DefaultConfig()
	cfg.Grading = GradingVerifier
	env, err := New(cfg, SplitTrain)
	if err != nil {
		t.Fatal(err)
	}
	if !env.GradesWholeResponse() {
		t.Error("env.math.grading: verifier did not reach the environment's reward")
	}
	cfg.Grading = "sympy"
	if err := cfg.Validate(); err == nil {
		t.Error("env.math.grading: sympy accepted")
	}
}

// The pattern search stops at its time limit and the response then has no
// answer, as the reference's parse returns nothing on its timeout.
func TestVerifierParseTimeLimit(t *testing.T) {
	response := `So the total is \boxed{42}.`
	if a := parseVerifier(response); a.shown() != "42" {
		t.Fatalf("parsed %q, want 42", a.shown())
	}
	defer func(d time.Duration) { maxParseTime = d }(maxParseTime)
	maxParseTime = time.Nanosecond
	if a := parseVerifier(response); !a.empty() {
		t.Errorf("past the time limit: parsed %q, want no answer", a.shown())
	}
}

func BenchmarkVerifierLongResponse(b *testing.B) {
	response := strings.Repeat("Let $x = 3$ and $y = 4$, so $x + y = 7$. ", 600) + `\boxed{7}`
	for i := 0; i < b.N; i++ {
		if !VerifierEqual(response, "7") {
			b.Fatal("not graded right")
		}
	}
}

// Reading is bounded: an answer nested past maxReadDepth levels is one
// leaf, its text, and is not taken apart level by level.
func TestVerifierReadingDepth(t *testing.T) {
	shallow := strings.Repeat("(", 3) + "7" + strings.Repeat(")", 3)
	if v := readLatex(shallow); v == nil || v.text != "7" {
		t.Fatalf("%s read as %+v, want 7", shallow, v)
	}
	deep := strings.Repeat("(", 5000) + "7" + strings.Repeat(")", 5000)
	if v := readLatex(deep); v == nil || v.kind != leafValue || len(v.text) < 5000 {
		t.Errorf("5000 levels read as %+v, want one leaf holding the nested text", v)
	}
	if VerifierEqual(`\boxed{`+deep+`}`, "7") {
		t.Error("5000 levels graded equal to 7")
	}
}
