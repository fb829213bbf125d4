package tree

import "strings"

// Transcript is the observation of a game built on the tree workflow: one
// line per event of the episode, oldest first (math-tool's answers,
// code-test's history). Append with append; a State's Clone copies it with
// Clone, so that candidates stepped on clones never share lines.
type Transcript []string

// Clone is a copy that appending to never changes t.
func (t Transcript) Clone() Transcript { return append(Transcript(nil), t...) }

// Text is the lines joined, or empty before the first.
func (t Transcript) Text(empty string) string {
	if len(t) == 0 {
		return empty
	}
	return strings.Join(t, "\n")
}
