// oracle.go — demonstrations of the search orchestra for `train sft`, so a
// small model starts RL knowing the tags and the routing.
//
// Each role acts as an informed teammate would:
//
//	Verifier  "yes" exactly when a gold answer already appears in the
//	          retrieved information, else "no";
//	Search    the next title of the task's lookup chain (Meta "chain" of the
//	          synthetic world), or the question itself when the task has none;
//	Answer    the gold answer, or, when the demonstration is to be wrong,
//	          the task's recorded mistake (Meta "mistake").
//
// What it deliberately is not: a reasoner. The think blocks are one short
// sentence; the point is the format and the routing.
package search

import (
	"fmt"
	"strings"
	"unicode"

	"troupe/rollout"
)

// Oracle writes one demonstration; see rollout.WorkflowSpec.Oracle.
func Oracle(opts any, agent string, task rollout.Task, prompt string, right bool) string {
	o, ok := opts.(Options)
	if !ok {
		o = DefaultOptions()
	}
	// the memory is everything after the section header, up to the
	// Verifier's review (the Searcher's prompt) or the role
	memory := ""
	if _, rest, ok := strings.Cut(prompt, "# Searches So Far\n"); ok {
		memory, _, _ = strings.Cut(rest, "\n# Your Role")
		memory, _, _ = strings.Cut(memory, "\n# The Verifier's Review")
	}
	switch agent {
	case o.Verifier:
		// punctuation becomes a space here, so "Holdings.</information>"
		// still ends with the word "holdings"
		info := Normalize(strings.Map(func(r rune) rune {
			if unicode.IsPunct(r) || unicode.IsSymbol(r) {
				return ' '
			}
			return r
		}, memory))
		for _, g := range task.Golds() {
			if n := Normalize(g); n != "" && strings.Contains(" "+info+" ", " "+n+" ") {
				return "<think>The documents answer the question.</think><verify>yes</verify>"
			}
		}
		return "<think>The documents do not answer the question yet.</think><verify>no</verify>"
	case o.Search:
		query := task.Question
		if chain := task.Meta["chain"]; chain != "" {
			titles := strings.Split(chain, "|")
			done := strings.Count(memory, "<search>")
			query = titles[min(done, len(titles)-1)]
		}
		return fmt.Sprintf("<think>I need to look up %s.</think><search>%s</search>", query, query)
	case o.Answer:
		ans := task.Answer
		if !right && task.Meta["mistake"] != "" {
			ans = task.Meta["mistake"]
		}
		return fmt.Sprintf("<think>The documents say so.</think><answer>%s</answer>", ans)
	}
	return ""
}
