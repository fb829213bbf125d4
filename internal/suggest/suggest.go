// Package suggest names the known name a mistyped one was probably meant
// to be: the one place troupe's messages say "did you mean …?", for
// subcommands, flags, config keys, and the registered workflows,
// environments, presets and estimators.
//
// A name is suggested when it is within a small edit distance of the typed
// one (one edit in a short name, two, or a third of a long name), or when one of the two starts
// with the other (`evaluate` for `eval`). What it is not: a spelling
// corrector; nothing is ever substituted for what the user typed.
package suggest

import (
	"fmt"
	"sort"
	"strings"
)

// Closest returns the known name nearest to name, or "" when none is near
// enough to be a likely typo. Ties go to the first in sorted order, so the
// answer does not depend on the order of known.
func Closest(name string, known []string) string {
	names := append([]string(nil), known...)
	sort.Strings(names)
	lower := strings.ToLower(name)
	best, bestD := "", -1
	for _, k := range names {
		if k == name {
			continue
		}
		d := Distance(lower, strings.ToLower(k))
		if d > limit(name) && !prefixOf(lower, strings.ToLower(k)) {
			continue
		}
		if bestD < 0 || d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// DidYouMean is " (did you mean NAME?)" for the closest known name, or ""
// when there is none: the suffix every "unknown …" message appends.
func DidYouMean(name string, known []string) string {
	if s := Closest(name, known); s != "" {
		return fmt.Sprintf(" (did you mean %s?)", s)
	}
	return ""
}

// limit is the number of edits a typo of name may hold: one in a short
// name (two would turn "ppo" into "grpo"), two, or a third of a long one.
func limit(name string) int {
	if len(name) <= 4 {
		return 1
	}
	return max(2, len(name)/3)
}

// prefixOf: one of a and b starts with the other, and the shorter has at
// least three letters (so that "a" does not suggest everything).
func prefixOf(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	return len(a) >= 3 && strings.HasPrefix(b, a)
}

// Distance is the Levenshtein distance between a and b, in bytes.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
