package coding

// reward.go — the joint coding reward's terms and the static reading of
// the two programs they need: CoMLRL's level-gated aux + main reward
// (LLM_Collab_Code_Generation, rewards/code_rewards.py,
// execution_reward_aux, and rewards/code_utils.py), restated from the
// reference code. What it is not: the test run (harness.go) or the
// environment (coding.go).
//
//	level 1  structure      0.4  aux is defined and holds "return "
//	                      + 0.6  the entry point is defined and holds "return "   (else stop)
//	level 2  syntax         0.5  the joint program compiles                        (else stop)
//	level 3  tests          1.0 × the share of tests passed                        (no tests: stop)
//	bonus    aux_used       0.5  some test passed, aux is defined, and the entry
//	                             point calls aux(…)
//	         not_wrapper    1.0  … and the entry point is more than a wrapper of aux
//	         discarded_aux −0.5  … and the entry point calls aux as a statement,
//	                             throwing its value away
//
// so the reward lies in [0, 4.0]. The reference shifts it by −4 before
// training (reward_processor.shift); a shift changes no MAGRPO advantage
// (every baseline subtracts it, the normalisation too), so troupe leaves
// the reward unshifted and states its early-termination threshold in
// unshifted units (3.8 for the reference's −0.2).
//
// Departures (docs/departures.md, MAGRPO):
//  1. discarded_aux is the reference's intent; its code's pattern
//     (aux\s\([^)]\)) asks for one space before the parenthesis and one
//     character inside it, so `aux(x)` alone on a line is never found there.
//  2. The functions are found in the response's last ```python block (or
//     the whole response without one) and run as written, with the other
//     functions and imports they hold; the reference strips everything but
//     def blocks and keeps only aux and the entry point.
//  3. The tests are the task's: an MBPP assert each, and a HumanEval
//     check(candidate) split into its single-line asserts when its body
//     holds nothing else (else run whole, as one test); the reference takes
//     the single-line asserts that name candidate and drops the rest.

import (
	"regexp"
	"strings"
)

// Term weights.
const (
	AuxDefinedReward   = 0.4
	MainDefinedReward  = 0.6
	SyntaxReward       = 0.5
	TestsReward        = 1.0
	AuxUsedReward      = 0.5
	NotWrapperReward   = 1.0
	DiscardedAuxReward = -0.5
	MaxReward          = AuxDefinedReward + MainDefinedReward + SyntaxReward + TestsReward + AuxUsedReward + NotWrapperReward
)

var (
	returnStmt = regexp.MustCompile(`return\s+`)
	auxCall    = regexp.MustCompile(`\baux\s*\(`)
	importLine = regexp.MustCompile(`^(?:from\s+[\w.]+\s+import\s+.*|import\s+[\w.,\s]+)$`)
)

// function returns the definition of name in code: its def line and the
// lines after it that are blank or indented deeper (a tab counts as
// deeper); "" when code defines no such function.
func function(code, name string) string {
	head := regexp.MustCompile(`^(\s*)def\s+` + regexp.QuoteMeta(name) + `\s*\(`)
	var out []string
	indent := -1
	for _, line := range strings.Split(code, "\n") {
		if m := head.FindStringSubmatch(line); m != nil && indent < 0 {
			indent = len(m[1])
			out = append(out, line)
			continue
		}
		if indent < 0 {
			continue
		}
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, strings.Repeat(" ", indent+1)) || strings.HasPrefix(line, "\t") {
			out = append(out, line)
			continue
		}
		break
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// definedWithReturn: the function exists and holds a return with a value.
func definedWithReturn(fn string) bool { return fn != "" && returnStmt.MatchString(fn) }

// promptImports are the import lines of the task's prompt (HumanEval's
// "from typing import List"), put before the joint program.
func promptImports(prompt string) string {
	var out []string
	seen := map[string]bool{}
	for _, l := range strings.Split(prompt, "\n") {
		l = strings.TrimSpace(l)
		if importLine.MatchString(l) && !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// bodyLines are the statements of a function's text: no blank lines,
// comments, docstrings or def lines.
func bodyLines(fn string) []string {
	var out []string
	inDoc := false
	for _, l := range strings.Split(fn, "\n") {
		s := strings.TrimSpace(l)
		switch {
		case s == "":
		case inDoc:
			if strings.Contains(s, `"""`) || strings.Contains(s, "'''") {
				inDoc = false
			}
		case strings.HasPrefix(s, `"""`) || strings.HasPrefix(s, "'''"):
			q := s[:3]
			if !(strings.HasSuffix(s, q) && len(s) > 3) {
				inDoc = true
			}
		case strings.HasPrefix(s, "#"), strings.HasPrefix(s, "def "):
		default:
			out = append(out, s)
		}
	}
	return out
}

// isWrapper: the entry point only returns aux(…), or assigns aux(…) to a
// variable and returns it (an empty body counts too).
func isWrapper(mainFn string) bool {
	lines := bodyLines(mainFn)
	switch len(lines) {
	case 0:
		return true
	case 1:
		return strings.HasPrefix(lines[0], "return ") && strings.Contains(lines[0], "aux")
	case 2:
		if m := regexp.MustCompile(`(\w+)\s*=\s*aux\s*\(`).FindStringSubmatch(lines[0]); m != nil {
			return lines[1] == "return "+m[1]
		}
	}
	return false
}

// discardsAux: some statement of the entry point is a bare call of aux
// (an optional semicolon after it), its value thrown away.
func discardsAux(mainFn string) bool {
	for _, s := range bodyLines(mainFn) {
		s = strings.TrimSuffix(strings.TrimSpace(s), ";")
		loc := auxCall.FindStringIndex(s)
		if loc == nil || loc[0] != 0 {
			continue
		}
		depth := 0
		for i := loc[1] - 1; i < len(s); i++ {
			switch s[i] {
			case '(':
				depth++
			case ')':
				depth--
				if depth == 0 && strings.TrimSpace(s[i+1:]) == "" {
					return true
				}
			}
			if depth == 0 {
				break
			}
		}
	}
	return false
}
