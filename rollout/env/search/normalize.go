// normalize.go — answer normalisation, exact match and token F1, as the
// open-domain QA benchmarks (SQuAD, NQ, HotpotQA; Search-R1) define them.
//
// Normalisation, in order: lower-case; drop punctuation; drop the articles
// "a", "an", "the" as words; collapse whitespace. Exact match is equality
// of normalised strings against any gold answer; F1 is the harmonic mean of
// token precision and recall (tokens counted with multiplicity), the best
// over the gold answers.
package search

import (
	"regexp"
	"strings"
	"unicode"
)

var articles = regexp.MustCompile(`\b(a|an|the)\b`)

// Normalize is the QA answer normalisation.
func Normalize(s string) string {
	s = strings.ToLower(s)
	s = strings.Map(func(r rune) rune {
		if unicode.IsPunct(r) || unicode.IsSymbol(r) {
			return -1
		}
		return r
	}, s)
	s = articles.ReplaceAllString(s, " ")
	return strings.Join(strings.Fields(s), " ")
}

// ExactMatch reports whether the prediction equals any gold after
// normalisation.
func ExactMatch(pred string, golds []string) bool {
	p := Normalize(pred)
	for _, g := range golds {
		if p == Normalize(g) {
			return true
		}
	}
	return false
}

// F1 is the best token F1 of the prediction over the golds.
func F1(pred string, golds []string) float64 {
	pt := strings.Fields(Normalize(pred))
	best := 0.0
	for _, g := range golds {
		gt := strings.Fields(Normalize(g))
		if len(pt) == 0 || len(gt) == 0 {
			if len(pt) == len(gt) {
				best = max(best, 1)
			}
			continue
		}
		count := map[string]int{}
		for _, t := range gt {
			count[t]++
		}
		common := 0
		for _, t := range pt {
			if count[t] > 0 {
				count[t]--
				common++
			}
		}
		if common == 0 {
			continue
		}
		p, r := float64(common)/float64(len(pt)), float64(common)/float64(len(gt))
		best = max(best, 2*p*r/(p+r))
	}
	return best
}
