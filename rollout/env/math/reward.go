// reward.go — the math reward: 1 if the final answer of a response is
// equivalent to a gold answer, else 0 (the Dr. MAS math reward; the
// verifier mode, verifier.go, reads the whole response instead).
//
// The final answer is the last \boxed{…} after any </think>, else the last
// "#### answer" line (rollout/answer.Final). A gold answer that is itself a
// full solution — ending in "#### n" (GSM8K) or holding a \boxed{} (MATH
// solutions) — is reduced to that answer first.
package math

import (
	"strings"

	"troupe/rollout"
	"troupe/rollout/answer"
)

// Reward is the math Scorer. The zero value grades boxed answers; it is
// safe for concurrent use.
type Reward struct {
	Grading string // GradingBoxed ("" too) or GradingVerifier
}

// GradesWholeResponse reports whether the reward reads the whole response
// (the verifier mode) rather than its last \boxed{}: a workflow then
// passes the response as it is (rollout/workflow/mathtool).
func (r Reward) GradesWholeResponse() bool { return r.Grading == GradingVerifier }

// Score implements rollout.Scorer.
func (r Reward) Score(task rollout.Task, response string) rollout.Score {
	if r.Grading == GradingVerifier {
		return scoreVerifier(task, response)
	}
	got, src := answer.Final(response)
	if src == answer.SourceNone {
		return rollout.Score{}
	}
	for _, g := range task.Golds() {
		if Equivalent(got, GoldAnswer(g)) {
			return rollout.Score{Reward: 1, Success: true, Extracted: got}
		}
	}
	return rollout.Score{Extracted: got}
}

// GoldAnswer reduces a gold field to its answer: the text after "####" or
// inside the last \boxed{} if it has one, else the field itself.
func GoldAnswer(gold string) string {
	if strings.Contains(gold, "####") {
		if h, ok := answer.HashAnswer(gold); ok {
			return h
		}
	}
	if strings.Contains(gold, `\boxed`) || strings.Contains(gold, `\fbox`) {
		if b, ok := answer.LastBoxed(gold); ok {
			return b
		}
	}
	return strings.TrimSpace(gold)
}
