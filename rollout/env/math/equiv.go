// equiv.go — is an extracted answer the gold answer? The reference grader's
// decisions (Dr. MAS grades with the Hendrycks MATH normaliser, then with
// sympy), made in troupe's own code.
//
// Equivalent(got, gold) is true when, after Normalize:
//  1. the texts are equal, or equal but for letter case ("B" = "b");
//  2. both are lists with the same brackets and the same number of
//     top-level comma-separated items, equivalent item by item
//     ("(1, \frac{1}{2})" = "(1,0.5)"); a single item is compared as below;
//  3. an item pair is equivalent when
//     a. both are fractions of integers, written "a/b" or \frac{a}{b}: only
//     if they are the same fraction as written ("\frac{2}{4}" is not
//     "\frac{1}{2}": an unreduced fraction is not the answer, as in the
//     reference);
//     b. else, when one is an integer literal ("42", "42.0", "1e3") the
//     other must be one too, of the same value ("\frac{84}{2}" and
//     "\sqrt{4}" are not 2);
//     c. else both parse as expressions (expr.go) and agree at every
//     evaluation point: "\frac{1}{2}" = "0.5", "2\sqrt{2}" = "\sqrt{8}",
//     "x^2-1" = "(x+1)(x-1)", "\frac{\pi}{2}" = "\frac{1}{2}\pi".
//
// What it deliberately is not: approximate. "0.33" is not 1/3; decimals are
// exact rationals and only an answer that involves π or an irrational root
// is compared in floating point (relative 1e-12). Answers with more than two
// variables, functions, infinities and sets compare as normalised text.
package math

import (
	"math/big"
	"regexp"
	"strings"

	"troupe/rollout/answer"
)

// Equivalent reports whether got is an acceptable form of gold.
func Equivalent(got, gold string) bool {
	equal, _ := Grade(got, gold)
	return equal
}

// Grade is Equivalent, and says whether the comparison ran out of its
// budget (expr.go: exact values past maxExactBits bits, or maxGradeTime),
// in which case the answer is not equal.
func Grade(got, gold string) (equal, overBudget bool) {
	b := newBudget()
	equal = equivalentNormalized(Normalize(got), Normalize(gold), 0, b)
	return equal && !b.over, b.over
}

func equivalentNormalized(a, b string, depth int, bud *budget) bool {
	if a == "" || b == "" {
		return false
	}
	if strings.EqualFold(a, b) {
		return true
	}
	la, oa, ca, ok1 := splitList(a)
	lb, ob, cb, ok2 := splitList(b)
	if !ok1 || !ok2 || len(la) < 2 && len(lb) < 2 {
		return itemEquivalent(a, b, bud)
	}
	if depth > 3 || oa != ob || ca != cb || len(la) != len(lb) {
		return false
	}
	for i := range la {
		if !equivalentNormalized(la[i], lb[i], depth+1, bud) {
			return false
		}
	}
	return true
}

// itemEquivalent compares two normalised answers that are not lists,
// within the budget bud.
func itemEquivalent(a, b string, bud *budget) bool {
	if a == "" || b == "" {
		return false
	}
	if strings.EqualFold(a, b) {
		return true
	}
	if fa, ok := integerFraction(a); ok {
		if fb, ok := integerFraction(b); ok {
			return fa == fb
		}
	}
	ia, ib := integerLiteral.MatchString(a), integerLiteral.MatchString(b)
	if ia != ib {
		return false
	}
	if x, ok := ParseRational(a); ok {
		if y, ok := ParseRational(b); ok {
			return x.Cmp(y) == 0 && (!ia || x.IsInt())
		}
	}
	if ia {
		return false // "2.5" written where an integer is wanted, or not a number
	}
	x, err := parseExpr(strings.ToLower(a))
	if err != nil {
		return false
	}
	y, err := parseExpr(strings.ToLower(b))
	if err != nil {
		return false
	}
	return sameValue(x, y, bud)
}

var (
	// an integer literal: a number whose value is whole ("42.0", "1e3"
	// match the pattern; the value check is in itemEquivalent).
	integerLiteral = regexp.MustCompile(`^[-+]?(?:\d+\.?0*|\d+(?:\.\d*)?[eE]\+?\d{1,3})$`)
	slashIntegers  = regexp.MustCompile(`^([-+]?)(\d+)/(\d+)$`)
	fracIntegers   = regexp.MustCompile(`^([-+]?)\\frac\{([-+]?)(\d+)\}\{(\d+)\}$`)
)

// integerFraction returns "a/b" (with its sign folded in front) for a
// fraction of two integer literals, written "a/b" or \frac{a}{b}.
func integerFraction(s string) (string, bool) {
	if m := slashIntegers.FindStringSubmatch(s); m != nil {
		return sign(m[1]) + m[2] + "/" + m[3], true
	}
	if m := fracIntegers.FindStringSubmatch(s); m != nil {
		if (m[1] == "-") != (m[2] == "-") {
			return "-" + m[3] + "/" + m[4], true
		}
		return m[3] + "/" + m[4], true
	}
	return "", false
}

func sign(s string) string {
	if s == "-" {
		return "-"
	}
	return ""
}

var (
	integerOrDecimal = regexp.MustCompile(`^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d{1,3})?$`)
	slashFraction    = regexp.MustCompile(`^([-+]?(?:\d+\.?\d*|\.\d+))/([-+]?(?:\d+\.?\d*|\.\d+))$`)
)

// maxNumberLen keeps big.Rat parsing cheap on adversarial input.
const maxNumberLen = 200

// ParseRational reads a normalised number: an integer, a decimal, "a/b", or
// a sign followed by \frac{A}{B} whose parts are themselves numbers.
func ParseRational(s string) (*big.Rat, bool) {
	if len(s) == 0 || len(s) > maxNumberLen {
		return nil, false
	}
	if integerOrDecimal.MatchString(s) {
		return new(big.Rat).SetString(s)
	}
	if m := slashFraction.FindStringSubmatch(s); m != nil {
		return divide(m[1], m[2])
	}
	neg := false
	for len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg = neg != (s[0] == '-')
		s = s[1:]
	}
	if !strings.HasPrefix(s, `\frac{`) {
		return nil, false
	}
	num, ok := answer.BalancedGroup(s[len(`\frac`):])
	if !ok {
		return nil, false
	}
	rest := s[len(`\frac`)+len(num)+2:]
	den, ok := answer.BalancedGroup(rest)
	if !ok || len(rest) != len(den)+2 {
		return nil, false
	}
	r, ok := divideParsed(num, den)
	if ok && neg {
		r.Neg(r)
	}
	return r, ok
}

func divide(a, b string) (*big.Rat, bool) {
	x, ok1 := new(big.Rat).SetString(a)
	y, ok2 := new(big.Rat).SetString(b)
	if !ok1 || !ok2 || y.Sign() == 0 {
		return nil, false
	}
	return x.Quo(x, y), true
}

func divideParsed(a, b string) (*big.Rat, bool) {
	x, ok1 := ParseRational(a)
	y, ok2 := ParseRational(b)
	if !ok1 || !ok2 || y.Sign() == 0 {
		return nil, false
	}
	return new(big.Rat).Quo(x, y), true
}

// splitList splits "(a,b,c)", "[a,b]", "\{a,b\}" or a bare "a,b" into its
// top-level items.
func splitList(s string) (items []string, open, close string, ok bool) {
	for _, p := range [][2]string{{`\{`, `\}`}, {"(", ")"}, {"[", "]"}, {"(", "]"}, {"[", ")"}} {
		if strings.HasPrefix(s, p[0]) && strings.HasSuffix(s, p[1]) && len(s) >= len(p[0])+len(p[1]) {
			open, close = p[0], p[1]
			s = s[len(p[0]) : len(s)-len(p[1])]
			break
		}
	}
	depth := 0
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++ // skip the escaped character (\{, \}, \,)
		case '{', '(', '[':
			depth++
		case '}', ')', ']':
			depth--
			if depth < 0 {
				return nil, "", "", false
			}
		case ',':
			if depth == 0 {
				items = append(items, s[start:i])
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, "", "", false
	}
	return append(items, s[start:]), open, close, true
}
