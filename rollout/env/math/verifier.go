// verifier.go — the math environment's verifier grading mode
// (env.math.grading: verifier): AT-GRPO's math reward as PettingLLMs
// computes it at 244467e (reasoning_agent.py:99,110, tool_agent.py:112,121),
// Math-Verify's parse of the whole response, no \boxed{} needed, and its
// verify against the parsed gold.
//
// A response's answer is what the extraction grammar finds first
// (verifier_grammar.go: "final answer is … I hope", then "final answer …
// is" and boxes, then "answer:", "answer", then any LaTeX or plain number,
// each group from the right), read as a value (verifier_value.go), with the
// first matched text beside it. The gold field is parsed the same way, as
// it is: a gold "\sqrt{2}" written without $…$ has no answer there, so no
// response is graded right against it (the reference's own behaviour,
// kept). The response is right when its value equals the gold's, or its
// text is the gold's text.
//
// What it is not: the boxed mode's reading (reward.go, the Dr. MAS reward)
// or the reference's sympy. Where the two graders part is listed in
// docs/departures.md (AT-GRPO, departure 19) and in the test vectors
// (testdata/verifier_vectors.tsv, made with Math-Verify itself).
package math

import (
	"math/big"
	"strings"

	"troupe/rollout"
)

// Grading modes of the math environment (env.math.grading).
const (
	GradingBoxed    = "boxed"    // the last \boxed{} after </think>, troupe's grader (the default)
	GradingVerifier = "verifier" // Math-Verify's parse of the whole response, and its verify
)

// verifierAnswer is what the reference's parse returns: a value when some
// match read as math, and the first matched text (its fallback string).
type verifierAnswer struct {
	value *mathValue
	text  string
}

func parseVerifier(s string) verifierAnswer {
	v, text := extractAnswer(s)
	return verifierAnswer{value: v, text: text}
}

func (a verifierAnswer) empty() bool { return a.value == nil && strings.TrimSpace(a.text) == "" }

// shown is the answer as logs show it.
func (a verifierAnswer) shown() string {
	if a.text != "" {
		return a.text
	}
	if a.value != nil {
		return a.value.text
	}
	return ""
}

// VerifierEqual reports whether the verifier mode grades response right
// against gold: both parsed as above, then compared.
func VerifierEqual(response, gold string) bool {
	return verifyAnswers(parseVerifier(response), parseVerifier(gold))
}

// verifyAnswers is the reference's verify over the two parse results: any
// pair of values equal, or of texts equal (a value never equals a text).
func verifyAnswers(answer, gold verifierAnswer) bool {
	if answer.value != nil && gold.value != nil && verifiedSame(answer.value, gold.value) {
		return true
	}
	a, g := strings.TrimSpace(answer.text), strings.TrimSpace(gold.text)
	return a != "" && a == g
}

// scoreVerifier is Reward.Score in the verifier mode.
func scoreVerifier(task rollout.Task, response string) rollout.Score {
	got := parseVerifier(response)
	if got.empty() {
		return rollout.Score{}
	}
	for _, g := range task.Golds() {
		if verifyAnswers(got, parseVerifier(g)) {
			return rollout.Score{Reward: 1, Success: true, Extracted: got.shown()}
		}
	}
	return rollout.Score{Extracted: got.shown()}
}

// verifiedSame compares the model's answer a with the gold b.
func verifiedSame(a, b *mathValue) bool {
	switch {
	case b.kind == equationValue && a.kind != equationValue:
		b = b.items[len(b.items)-1]
	case a.kind == equationValue && a.assignment && b.kind != equationValue:
		a = a.items[len(a.items)-1]
	}
	if a.kind == equationValue || b.kind == equationValue {
		if a.kind != b.kind {
			return false
		}
		return leafEqual(difference(a), difference(b))
	}
	if a.kind == leafValue && b.kind == leafValue {
		return leafEqual(a, b)
	}
	if a.kind == intervalValue && b.kind == intervalValue {
		return a.leftOpen == b.leftOpen && a.rightOpen == b.rightOpen &&
			verifiedSame(a.items[0], b.items[0]) && verifiedSame(a.items[1], b.items[1])
	}
	// a value against a set is a one-element set; an open interval against
	// a set or tuple is its pair of ends
	as, bs := a.asList(b), b.asList(a)
	if as == nil || bs == nil || len(as) != len(bs) {
		return false
	}
	if a.kind == setValue {
		return sameElements(as, bs)
	}
	for i := range as {
		if !verifiedSame(as[i], bs[i]) {
			return false
		}
	}
	return true
}

// asList is v's elements when compared with other: nil for an interval
// that is not open or compared with another shape than a set or tuple.
func (v *mathValue) asList(other *mathValue) []*mathValue {
	switch v.kind {
	case setValue, tupleValue:
		return v.items
	case intervalValue:
		if v.leftOpen && v.rightOpen && (other.kind == setValue || other.kind == tupleValue) {
			return v.items
		}
		return nil
	}
	return []*mathValue{v}
}

// sameElements matches each element of a to a distinct equal one of b.
func sameElements(a, b []*mathValue) bool {
	used := make([]bool, len(b))
	for _, x := range a {
		found := false
		for j, y := range b {
			if !used[j] && verifiedSame(x, y) {
				used[j], found = true, true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// difference is an equation's first side minus its last, as one leaf.
func difference(e *mathValue) *mathValue {
	l, r := e.items[0], e.items[len(e.items)-1]
	if l.kind != leafValue || r.kind != leafValue {
		return leaf("")
	}
	return leaf("(" + canonical(l) + ")-(" + canonical(r) + ")")
}

// leafEqual compares two leaves: numbers exactly or to 6 places, else by
// the grader's Equivalent.
func leafEqual(a, b *mathValue) bool {
	if a.text == "" || b.text == "" {
		return false
	}
	if a.num != nil && b.num != nil {
		if a.decimal || b.decimal {
			return roundSix(a.num).Cmp(roundSix(b.num)) == 0
		}
		return a.num.Cmp(b.num) == 0
	}
	return Equivalent(canonical(a), canonical(b))
}

// canonical writes a number as \frac{p}{q}, so that Equivalent compares it
// by value with an expression (sympy's numbers have no written form).
func canonical(v *mathValue) string {
	if v.num == nil {
		return v.text
	}
	n := v.num
	sign := ""
	if n.Sign() < 0 {
		sign, n = "-", new(big.Rat).Neg(n)
	}
	return sign + `\frac{` + n.Num().String() + `}{` + n.Denom().String() + `}`
}

var million = big.NewRat(1_000_000, 1)

// roundSix rounds to 6 decimal places, halves away from zero.
func roundSix(r *big.Rat) *big.Rat {
	x := new(big.Rat).Mul(r, million)
	q, m := new(big.Int).QuoRem(x.Num(), x.Denom(), new(big.Int))
	twice := new(big.Int).Mul(new(big.Int).Abs(m), big.NewInt(2))
	if twice.Cmp(x.Denom()) >= 0 {
		if x.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return new(big.Rat).SetFrac(q, big.NewInt(1_000_000))
}
