// oracle.go — demonstrations of the math workflows (math-refine, single)
// for `train sft`, registered as the environment's Oracle.
//
// A solving agent answers from the task's gold answer, right with
// probability --p-correct and otherwise with the task's typical mistake
// (a place-value question: the digit one place to the right; else Meta
// "mistake"; else a nearby wrong number). A verifying
// agent (its name contains "verif") approves exactly the right answers.
//
// What it deliberately is not: a reasoner. The working is one line; the
// point is the \boxed{} and <verify> format and the roles.
package math

import (
	"fmt"
	"math/big"
	"regexp"
	"strings"

	"troupe/rollout"
	"troupe/rollout/answer"
)

// Oracle writes one demonstration; see rollout.Oracle. A solver draws
// Right, and a nearby wrong number when the task records no mistake; a
// verifier draws nothing.
func Oracle(agent string, task rollout.Task, prompt string, draw *rollout.Draw) string {
	if strings.Contains(strings.ToLower(agent), "verif") {
		proposed, _ := answer.LastBoxed(prompt)
		if Equivalent(proposed, GoldAnswer(task.Answer)) {
			return "I checked each step and the final answer is correct.\n<verify>approve</verify>"
		}
		return "The final answer does not follow from the problem.\n<verify>reject</verify>"
	}
	ans := GoldAnswer(task.Answer)
	if !draw.Right() {
		if ans = slip(task, ans); ans == "" {
			ans = task.Meta["mistake"]
		}
		if ans == "" {
			ans = wrongAnswer(GoldAnswer(task.Answer), draw.Rand)
		}
	}
	return solverDemo(task, ans)
}

// solverDemo is a Solver's demonstrated answer. An expression question
// shows its working, the expression copied and set equal to the answer,
// before the boxed answer: the model learns to read the question where the
// working starts, and the answer is then next to what it depends on.
func solverDemo(task rollout.Task, ans string) string {
	if m := placeNumber.FindStringSubmatch(task.Question); m != nil && task.Meta["kind"] == "place-value" {
		// the working names every digit's place; a wrong answer picks the
		// digit of another place
		places := []string{"hundreds", "tens", "units"}[3-len(m[1]):]
		parts := make([]string, len(m[1]))
		for i := range m[1] {
			parts[i] = m[1][i:i+1] + " " + places[i]
		}
		return "Reading the number: $" + m[1] + "$ is " + strings.Join(parts, ", ") + ".\nThe answer is \\boxed{" + ans + "}."
	}
	if m := dollarExpr.FindStringSubmatch(task.Question); m != nil {
		return "Working through the problem step by step: $" + m[1] + " = " + ans + "$.\nThe answer is \\boxed{" + ans + "}."
	}
	return "Working through the problem step by step gives the result.\nThe answer is \\boxed{" + ans + "}."
}

// slip is the wrong answer to a place-value question: the digit one place
// to the right of the asked one (the units' slip wraps to the leftmost
// digit), the reader's off-by-one. It depends on the question only through
// the asked place, so a warm-up on such demonstrations learns two ways of
// reading and how often it takes each, not which questions to get wrong.
// "" for any other question.
func slip(task rollout.Task, gold string) string {
	m := placeNumber.FindStringSubmatch(task.Question)
	if m == nil || task.Meta["kind"] != "place-value" {
		return ""
	}
	digits := m[1]
	for i, place := range []string{"hundreds", "tens", "units"}[3-len(digits):] {
		if strings.Contains(task.Question, " "+place+" ") && digits[i:i+1] == gold {
			return digits[(i+1)%len(digits) : (i+1)%len(digits)+1]
		}
	}
	return ""
}

var (
	dollarExpr  = regexp.MustCompile(`\$([^$]+)\$`)
	placeNumber = regexp.MustCompile(`of \$(\d{2,3})\$\?$`)
)

// wrongAnswer is a nearby wrong value of a numeric answer.
func wrongAnswer(gold string, r *rollout.Rand) string {
	q, ok := ParseRational(Normalize(gold))
	if !ok {
		return gold + "1"
	}
	off := int64(r.Range(1, 5))
	if r.IntN(2) == 0 {
		off = -off
	}
	w := new(big.Rat).Add(q, new(big.Rat).SetInt64(off))
	if w.IsInt() {
		return w.Num().String()
	}
	return fmt.Sprintf("\\frac{%s}{%s}", w.Num(), w.Denom())
}
