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

// Distance is the edit distance between a and b in bytes, counting an
// insertion, a deletion, a substitution or a swap of two neighbours as one
// edit (the optimal string alignment distance): "stf" is one edit from
// "sft".
func Distance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
