// Added tokens ("<|im_start|>", "<think>", …): literal strings that are cut
// out of the text before normalisation and pre-tokenization, as Hugging
// Face's AddedVocabulary does. Among the tokens that occur, the leftmost
// match wins, and among matches at the same position the longest (Hugging
// Face's Aho-Corasick automaton runs in leftmost-longest mode).
//
// Tokens marked "normalized": false (all of Qwen's) are matched on the raw
// text; tokens marked "normalized": true are matched on each remaining
// segment after NFC.
//
// What this file is not: it does not implement the lstrip, rstrip and
// single_word options; Load refuses tokens that set them.

package tokenizer

import (
	"sort"
	"strings"
)

type addedToken struct {
	content string
	id      int
}

// addedTokenMatcher finds added tokens in text. Candidates are grouped by
// first byte and sorted longest first, so the first candidate that matches
// at a position is the longest one there.
type addedTokenMatcher struct {
	startsWith [256][]addedToken
	starts     [256]bool
	empty      bool
}

func newAddedTokenMatcher(tokens []addedToken) *addedTokenMatcher {
	m := &addedTokenMatcher{empty: len(tokens) == 0}
	for _, t := range tokens {
		b := t.content[0]
		m.startsWith[b] = append(m.startsWith[b], t)
		m.starts[b] = true
	}
	for b := range m.startsWith {
		group := m.startsWith[b]
		sort.SliceStable(group, func(i, j int) bool { return len(group[i].content) > len(group[j].content) })
	}
	return m
}

// find returns the leftmost-longest added token in s as s[start:end] with its
// id, or start = -1 when none occurs.
func (m *addedTokenMatcher) find(s string) (start, end, id int) {
	if m.empty {
		return -1, -1, -1
	}
	for i := 0; i < len(s); i++ {
		if !m.starts[s[i]] {
			continue
		}
		for _, t := range m.startsWith[s[i]] {
			if strings.HasPrefix(s[i:], t.content) {
				return i, i + len(t.content), t.id
			}
		}
	}
	return -1, -1, -1
}
