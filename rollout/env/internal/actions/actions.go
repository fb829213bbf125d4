// Package actions is what the grid games' two roles share: reading their
// action lines (a tool agent's "Actions List: [...]" and a plan agent's
// "#### [...]") and the move lists they hold (U, D, L, R), their prompt
// layout and presets, the end of their demonstrations, and the score of a
// plan line played from the start.
//
// Files: actions.go (the parsers and move lists), roles.go (presets,
// demonstrations, ScorePlan).
//
// A program-writing tool agent's parser (ProgramParser) reads the last
// fenced Python block of its response; the tree workflow runs it in the
// sandbox and reads the "Actions List: …" line from what it prints.
package actions

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"troupe/rollout"
)

var (
	toolLine = regexp.MustCompile(`(?i)\**actions list\**\s*:\s*(.*)`)
	planLine = regexp.MustCompile(`(?m)^\s*####\s*(.*)$`)
)

// lastMatch returns the first group of the last match of re in text.
func lastMatch(re *regexp.Regexp, text string) (string, bool) {
	m := re.FindAllStringSubmatch(text, -1)
	if len(m) == 0 {
		return "", false
	}
	return strings.TrimSpace(m[len(m)-1][1]), true
}

// Parser reads the last action line of a response and checks its content
// with check; the value is kept even when check fails, so the environment
// can still act on it (and penalise it).
func parser(re *regexp.Regexp, what string, check func(string) error) rollout.Parser {
	return rollout.ParserFunc(func(response string) rollout.Parsed {
		v, ok := lastMatch(re, response)
		if !ok {
			return rollout.Parsed{Problem: "no " + what + " line"}
		}
		if err := check(v); err != nil {
			return rollout.Parsed{Value: v, Problem: err.Error()}
		}
		return rollout.Parsed{Valid: true, Value: v}
	})
}

// ProgramParser reads the last fenced Python block of a response: the
// program a tool agent wrote.
var ProgramParser = rollout.PythonParser("a program")

// Parsers returns the tool agent's parser, which reads "Actions List: …",
// and the plan agent's, which reads a "#### …" line; check checks the
// action either holds.
func Parsers(check func(string) error) (tool, plan rollout.Parser) {
	return parser(toolLine, "'Actions List: [...]'", check), parser(planLine, "'#### [...]'", check)
}

// Moves reads a move list: a JSON list (["U", "R"]), moves separated by
// spaces or commas, or a compact run ("RRD"); U/D/L/R or
// up/down/left/right, any case. It returns the
// moves as a string of U, D, L and R.
func Moves(action string) (string, error) {
	action = strings.TrimSpace(action)
	var items []string
	if strings.HasPrefix(action, "[") {
		if err := json.Unmarshal([]byte(action), &items); err != nil {
			return "", fmt.Errorf("the move list is not a JSON list of strings: %v", err)
		}
	} else {
		items = strings.FieldsFunc(action, func(r rune) bool { return r == ' ' || r == ',' || r == '\n' })
	}
	if len(items) == 0 {
		return "", fmt.Errorf("the move list is empty")
	}
	var out []byte
	for _, it := range items {
		it = strings.ToUpper(strings.TrimSpace(it))
		if len(it) > 1 && strings.Trim(it, "UDLR") == "" && it != "UP" {
			out = append(out, it...) // the compact form: "RRD"
			continue
		}
		switch it {
		case "U", "UP":
			out = append(out, 'U')
		case "D", "DOWN":
			out = append(out, 'D')
		case "L", "LEFT":
			out = append(out, 'L')
		case "R", "RIGHT":
			out = append(out, 'R')
		default:
			return "", fmt.Errorf("%q is not a move; use U, D, L or R", it)
		}
	}
	return string(out), nil
}

// MoveList renders moves as a JSON list: "UR" → ["U", "R"].
func MoveList(moves string) string {
	list := make([]string, len(moves))
	for i := range moves {
		list[i] = fmt.Sprintf("%q", moves[i:i+1])
	}
	return "[" + strings.Join(list, ", ") + "]"
}
