package math

import (
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"troupe/rollout"
)

// evalLatex is an independent evaluator for the generated expressions: a
// recursive-descent parser over "+ - \times \div ( )" and integers.
type latexParser struct {
	toks []string
	pos  int
}

var latexToken = regexp.MustCompile(`\\times|\\div|\d+|[-+()]`)

func evalLatex(s string) (*big.Rat, error) {
	p := &latexParser{toks: latexToken.FindAllString(s, -1)}
	v, err := p.sum()
	if err == nil && p.pos != len(p.toks) {
		err = fmt.Errorf("trailing %q", p.toks[p.pos:])
	}
	return v, err
}

func (p *latexParser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *latexParser) sum() (*big.Rat, error) {
	v, err := p.product()
	for err == nil && (p.peek() == "+" || p.peek() == "-") {
		op := p.toks[p.pos]
		p.pos++
		var w *big.Rat
		if w, err = p.product(); err == nil {
			if op == "+" {
				v.Add(v, w)
			} else {
				v.Sub(v, w)
			}
		}
	}
	return v, err
}

func (p *latexParser) product() (*big.Rat, error) {
	v, err := p.atom()
	for err == nil && (p.peek() == `\times` || p.peek() == `\div`) {
		op := p.toks[p.pos]
		p.pos++
		var w *big.Rat
		if w, err = p.atom(); err == nil {
			if op == `\times` {
				v.Mul(v, w)
			} else if w.Sign() == 0 {
				err = fmt.Errorf("division by zero")
			} else {
				v.Quo(v, w)
			}
		}
	}
	return v, err
}

func (p *latexParser) atom() (*big.Rat, error) {
	switch t := p.peek(); {
	case t == "(":
		p.pos++
		v, err := p.sum()
		if err == nil && p.peek() != ")" {
			err = fmt.Errorf("missing )")
		}
		p.pos++
		return v, err
	case t == "-":
		p.pos++
		v, err := p.atom()
		if err == nil {
			v.Neg(v)
		}
		return v, err
	case t != "" && unicode.IsDigit(rune(t[0])):
		p.pos++
		v, _ := new(big.Rat).SetString(t)
		return v, nil
	}
	return nil, fmt.Errorf("unexpected %q at %d", p.peek(), p.pos)
}

var dollarMath = regexp.MustCompile(`\$([^$]*)\$`)

func TestArithmeticAnswersMatchIndependentEvaluator(t *testing.T) {
	for d := 1; d <= 5; d++ {
		cfg := ProceduralConfig{Seed: 3, Difficulty: d, WordFraction: 0, TrainSize: 400, TestSize: 100}
		for _, split := range []string{SplitTrain, SplitTest} {
			src, err := NewProcedural(cfg, split)
			if err != nil {
				t.Fatal(err)
			}
			ops := 0
			for i := 0; i < src.Len(); i++ {
				task := src.Task(i)
				m := dollarMath.FindStringSubmatch(task.Question)
				if m == nil {
					t.Fatalf("no $…$ in %q", task.Question)
				}
				want, err := evalLatex(m[1])
				if err != nil {
					t.Fatalf("d%d %q: %v", d, m[1], err)
				}
				got, ok := ParseRational(Normalize(task.Answer))
				if !ok || got.Cmp(want) != 0 {
					t.Fatalf("d%d %q: gold %q, independent evaluator %s", d, m[1], task.Answer, want.RatString())
				}
				if d < 4 && !want.IsInt() {
					t.Errorf("d%d %q: non-integer answer below difficulty 4", d, m[1])
				}
				ops += strings.Count(m[1], "+") + strings.Count(m[1], " - ") + strings.Count(m[1], `\times`) + strings.Count(m[1], `\div`)
			}
			if wantOps := d * src.Len(); ops != wantOps {
				t.Errorf("d%d %s: %d operators over %d tasks, want exactly difficulty (%d) each", d, split, ops, src.Len(), d)
			}
		}
	}
}

func TestWordProblems(t *testing.T) {
	lengths := make([]float64, 6)
	for d := 1; d <= 5; d++ {
		cfg := ProceduralConfig{Seed: 9, Difficulty: d, WordFraction: 1, TrainSize: 500}
		src, _ := NewProcedural(cfg, SplitTrain)
		for i := 0; i < src.Len(); i++ {
			task := src.Task(i)
			if task.Meta["kind"] != "word" || !strings.HasSuffix(task.Question, "?") {
				t.Fatalf("d%d task %d: %+v", d, i, task)
			}
			v, ok := ParseRational(task.Answer)
			if !ok || !v.IsInt() || v.Sign() < 0 {
				t.Fatalf("d%d %q: answer %q is not a non-negative integer", d, task.Question, task.Answer)
			}
			if strings.Contains(task.Question, " -") {
				t.Fatalf("d%d: a negative quantity in %q", d, task.Question)
			}
			lengths[d] += float64(len(strings.Fields(task.Question))) / float64(src.Len())
		}
	}
	for d := 2; d <= 5; d++ {
		if lengths[d] < lengths[d-1] {
			t.Errorf("mean question length at difficulty %d (%.1f words) < at %d (%.1f): more steps should mean longer problems", d, lengths[d], d-1, lengths[d-1])
		}
	}
}

// TestWordProblemExamples pins a few draws whose answers were checked by
// hand, so a change to the templates or the seeding shows up.
func TestWordProblemExamples(t *testing.T) {
	for _, tc := range []struct {
		template wordTemplate
		d        int
		seed     uint64
		check    func(q string) int // recomputes the answer from the numbers in the text
	}{
		{packsProblem, 3, 1, func(q string) int { n := numbers(q); return n[0]*n[1] - n[2] + n[3] }},
		{savingsProblem, 3, 2, func(q string) int { n := numbers(q); return n[0]*n[1] - n[2] + n[3]*n[4] }},
		{travelProblem, 2, 3, func(q string) int { n := numbers(q); return n[0]*n[1] + n[2]*n[3] }},
		{fencingProblem, 3, 4, func(q string) int { n := numbers(q); return n[2] * 2 * (n[0] + n[1]) }},
		{agesProblem, 1, 5, func(q string) int { n := numbers(q); return n[1] + n[0] + n[2] }},
		{discountProblem, 3, 6, func(q string) int { n := numbers(q); return n[0] * (100 - n[1]) / 100 * n[2] }},
	} {
		q, got := tc.template(newRand(tc.seed), tc.d)
		if want := tc.check(q); got != want {
			t.Errorf("%q: answer %d, recomputed %d", q, got, want)
		}
	}
}

var digits = regexp.MustCompile(`\d+`)

func numbers(s string) []int {
	var out []int
	for _, m := range digits.FindAllString(s, -1) {
		var n int
		fmt.Sscan(m, &n)
		out = append(out, n)
	}
	return out
}

func TestSplitsAreDisjointAndDeterministic(t *testing.T) {
	for d := 1; d <= 2; d++ {
		cfg := ProceduralConfig{Seed: 1, Difficulty: d, WordFraction: 0.3, TrainSize: 3000, TestSize: 1000}
		train, _ := NewProcedural(cfg, SplitTrain)
		test, _ := NewProcedural(cfg, SplitTest)
		inTrain := map[string]bool{}
		for i := 0; i < train.Len(); i++ {
			inTrain[train.Task(i).Question] = true
		}
		for i := 0; i < test.Len(); i++ {
			if q := test.Task(i).Question; inTrain[q] {
				t.Fatalf("difficulty %d: %q is in both splits", d, q)
			}
		}
		again, _ := NewProcedural(cfg, SplitTrain)
		for _, i := range []int{0, 17, 2999} {
			a, b := train.Task(i), again.Task(i)
			if a.Question != b.Question || a.Answer != b.Answer || a.ID != b.ID {
				t.Errorf("task %d differs between two sources with one config", i)
			}
		}
		other := cfg
		other.Seed = 2
		o, _ := NewProcedural(other, SplitTrain)
		same := 0
		for i := 0; i < 50; i++ {
			if o.Task(i).Question == train.Task(i).Question {
				same++
			}
		}
		if same > 10 {
			t.Errorf("difficulty %d: seeds 1 and 2 agree on %d of 50 tasks", d, same)
		}
	}
}

func TestProceduralConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		edit func(*ProceduralConfig)
		want string
	}{
		{func(c *ProceduralConfig) { c.Difficulty = -1 }, "env.math.procedural.difficulty: must be 0…5, got -1"},
		{func(c *ProceduralConfig) { c.Difficulty = 6 }, "env.math.procedural.difficulty: must be 0…5, got 6"},
		{func(c *ProceduralConfig) { c.WordFraction = 1.5 }, "env.math.procedural.word_fraction: must be in [0, 1], got 1.5"},
		{func(c *ProceduralConfig) { c.TestSize = -1 }, "env.math.procedural.test_size: must be >= 0, got -1"},
	} {
		c := DefaultProceduralConfig()
		tc.edit(&c)
		if _, err := NewProcedural(c, SplitTrain); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
	if _, err := NewProcedural(DefaultProceduralConfig(), "validation"); err == nil || !strings.Contains(err.Error(), `use "train" or "test"`) {
		t.Errorf("bad split error: %v", err)
	}
}

func newRand(seed uint64) *rollout.Rand { return rollout.NewRand(seed) }

// Difficulty 0 asks for a digit in a named place; its gold answer is that
// digit and its recorded mistake another of the number's digits.
func TestPlaceValueTasks(t *testing.T) {
	re := regexp.MustCompile(`(hundreds|tens|units) (?:digit|place) of \$(\d+)\$\?$`)
	for _, split := range []string{SplitTrain, SplitTest} {
		src, err := NewProcedural(ProceduralConfig{Seed: 4, Difficulty: 0, WordFraction: 0.5, TrainSize: 300, TestSize: 100}, split)
		if err != nil {
			t.Fatal(err)
		}
		kinds := map[string]int{}
		for i := 0; i < src.Len(); i++ {
			task := src.Task(i)
			m := re.FindStringSubmatch(task.Question)
			if m == nil {
				t.Fatalf("%q is not a place-value question", task.Question)
			}
			digits := m[2]
			pos := map[string]int{"hundreds": len(digits) - 3, "tens": len(digits) - 2, "units": len(digits) - 1}[m[1]]
			if len(digits) < 2 || len(digits) > 3 || pos < 0 {
				t.Fatalf("%q: want a two- or three-digit number and a place it has", task.Question)
			}
			if task.Answer != digits[pos:pos+1] {
				t.Fatalf("%q: gold %q, want %q", task.Question, task.Answer, digits[pos:pos+1])
			}
			if mis := task.Meta["mistake"]; mis == task.Answer || !strings.Contains(digits, mis) || len(mis) != 1 {
				t.Fatalf("%q: mistake %q should be another digit of %s", task.Question, mis, digits)
			}
			kinds[m[1]]++
		}
		if kinds["tens"] == 0 || kinds["units"] == 0 || kinds["hundreds"] == 0 {
			t.Errorf("%s: places asked %v, want all three", split, kinds)
		}
	}
}
