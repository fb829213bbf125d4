// agents.go — the two roles of Sudoku (tool: proposes fills, scored on a
// copy; plan: commits to fills), their parsers, prompt presets, the
// demonstrations `train sft` trains on, and Score (a plan agent's whole
// answer played from the start).
package sudoku

import (
	"fmt"
	"regexp"
	"strings"

	"troupe/rollout"
	"troupe/rollout/env/internal/actions"
)

// checkAction accepts fills or a grid of either size; the environment
// checks them against the puzzle.
func checkAction(v string) error {
	if _, err := ParseAction(v, 9); err == nil {
		return nil
	}
	_, err := ParseAction(v, 4)
	return err
}

var toolParser, planParser = actions.Parsers(checkAction)

func init() {
	actions.Roles{
		Game:   "sudoku",
		System: "You are one member of a team that solves Sudoku puzzles. Each member has its own role; follow yours exactly.",
		Rules: `Fill the blanks ('.') of the Sudoku so that every row, column and box holds each digit once. Clues cannot change.
Write fills as [row, column, value] with rows and columns counted from 1.`,
		Tool: `You are the Tool agent. Solve the puzzle by elimination and propose the fills for the blank cells.
End with one line: Actions List: [[1, 2, 3], ...]`,
		Plan: `You are the Plan agent. Check the Tool agent's fills against the rules and fix any that break them.
End with one line holding the fills to write: #### [[1, 2, 3], ...]`,
	}.Register(toolParser, planParser)
}

var gridInPrompt = regexp.MustCompile(`Current grid:\n([.0-9\n]+)\nSteps made`)

// Demonstrate writes one demonstration (see rollout.Demonstrator): the
// solution's values for the cells still blank in the prompt's current grid,
// or, when it should be wrong, with the first of them changed.
func (e *Env) Demonstrate(agent string, task rollout.Task, prompt string, right bool) string {
	sol, err := ParseGrid(task.Answer)
	if err != nil {
		return ""
	}
	cur, err := ParseGrid(task.Meta["puzzle"])
	if err != nil {
		return ""
	}
	if m := gridInPrompt.FindAllStringSubmatch(prompt, -1); len(m) > 0 {
		if g, err := ParseGrid(m[len(m)-1][1]); err == nil && g.N == sol.N {
			cur = g
		}
	}
	var fills []string
	for i, v := range cur.Cells {
		if v != 0 {
			continue
		}
		val := sol.Cells[i]
		if !right && len(fills) == 0 {
			val = val%sol.N + 1
		}
		fills = append(fills, fmt.Sprintf("[%d, %d, %d]", i/sol.N+1, i%sol.N+1, val))
	}
	if len(fills) == 0 {
		fills = []string{"[1, 1, 1]"}
	}
	return actions.Demo(agent, prompt, "["+strings.Join(fills, ", ")+"]",
		"Each blank has one value left after elimination.",
		"The fills keep every row, column and box valid.")
}

// Score plays one response's fills on the puzzle: 1 when solved.
func (e *Env) Score(task rollout.Task, response string) rollout.Score {
	return actions.ScorePlan(e, planParser, task, response)
}
