// reward.go — the math reward: 1 if the final answer of a response is
// equivalent to a gold answer, else 0 (the Dr. MAS math reward; the
// verifier mode, verifier.go, reads the whole response instead). An answer
// whose comparison runs out of the grader's budget scores 0 and is counted
// (MetricOverBudget).
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
	over := 0.0 // answers whose comparison ran out of the grader's budget (expr.go), graded wrong
	for _, g := range task.Golds() {
		equal, overBudget := Grade(got, GoldAnswer(g))
		if overBudget {
			over = 1
		}
		if equal {
			return rollout.Score{Reward: 1, Success: true, Extracted: got, Metrics: map[string]float64{MetricOverBudget: over}}
		}
	}
	return rollout.Score{Extracted: got, Metrics: map[string]float64{MetricOverBudget: over}}
}

// MetricOverBudget is the per-episode metric (Score.Metrics) that is 1 when
// the answer's comparison ran out of the grader's budget and 0 otherwise;
// the run logs its mean over a step's graded answers, and their count.
const MetricOverBudget = "grader_over_budget"

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
