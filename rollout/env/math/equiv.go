// equiv.go — is an extracted answer the gold answer?
//
// Equivalent(got, gold) is true when, after Normalize:
//  1. the strings are equal; or
//  2. both are numbers and equal as exact rationals — integers, decimals,
//     "a/b", \frac{a}{b} with a sign in front or inside ("0.5" = "\frac{1}{2}"
//     = "1/2" = "\frac{2}{4}"; "-\frac{1}{2}" = "\frac{-1}{2}" = "-0.5"); or
//  3. both are lists with the same brackets and the same number of
//     top-level comma-separated items, equivalent item by item
//     ("(1, \frac{1}{2})" = "(1,0.5)").
//
// What it deliberately is not: approximate. "0.33" is not 1/3; integers
// must match exactly (a rational with denominator 1 equals only itself).
// Anything symbolic beyond these forms (radicals, π, algebra) is compared as
// normalised text.
package math

import (
	"math/big"
	"regexp"
	"strings"

	"troupe/rollout/answer"
)

// Equivalent reports whether got is an acceptable form of gold.
func Equivalent(got, gold string) bool {
	return equivalentNormalized(Normalize(got), Normalize(gold), 0)
}

func equivalentNormalized(a, b string, depth int) bool {
	if a == "" || b == "" {
		return false
	}
	if a == b {
		return true
	}
	if x, ok := ParseRational(a); ok {
		if y, ok := ParseRational(b); ok {
			return x.Cmp(y) == 0
		}
		return false
	}
	if depth > 3 {
		return false
	}
	la, oa, ca, ok1 := splitList(a)
	lb, ob, cb, ok2 := splitList(b)
	if !ok1 || !ok2 || oa != ob || ca != cb || len(la) != len(lb) || len(la) < 2 {
		return false
	}
	for i := range la {
		if !equivalentNormalized(la[i], lb[i], depth+1) {
			return false
		}
	}
	return true
}

var (
	integerOrDecimal = regexp.MustCompile(`^[-+]?(?:\d+\.?\d*|\.\d+)$`)
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
