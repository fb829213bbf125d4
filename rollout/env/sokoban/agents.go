// agents.go — the two roles of Sokoban (tool: proposes moves, scored on a
// copy; plan: commits to moves), their parsers, prompt presets, the
// demonstrations `train sft` trains on, and Score (a plan agent's whole
// answer played from the start).
package sokoban

import (
	"fmt"
	"regexp"

	"troupe/rollout"
	"troupe/rollout/env/internal/actions"
)

func checkMoves(v string) error { _, err := actions.Moves(v); return err }

var toolParser, planParser = actions.Parsers(checkMoves)

func init() {
	actions.Roles{
		Game:   "sokoban",
		System: "You are one member of a team that solves Sokoban puzzles. Each member has its own role; follow yours exactly.",
		Rules: `Push the box onto the goal. '#' wall, ' ' floor, '.' goal, '$' box, '@' you, '*' box on the goal, '+' you on the goal.
Moves: U (up), D (down), L (left), R (right); walking into the box pushes it one cell if the cell beyond is free. A box in a corner can never move again.`,
		Tool: `You are the Tool agent. Search (breadth-first) for the shortest move sequence that pushes the box onto the goal.
End with one line: Actions List: ["R", "D", ...]`,
		Plan: `You are the Plan agent. Check the Tool agent's moves against the room and fix them if they push the box into a wall or a corner.
End with one line holding the moves to execute: #### ["R", "D", ...]`,
	}.Register(toolParser, planParser)
}

var roomInPrompt = regexp.MustCompile(`Current room:\n([# .$@*+\n]+)\nMoves made`)

// Demonstrate writes one demonstration (see rollout.Demonstrator): the
// solver's shortest solution from the prompt's current room, or, when it
// should be wrong, with its first move turned around.
func (e *Env) Demonstrate(agent string, task rollout.Task, prompt string, right bool) string {
	room, err := ParseRoom(task.Meta["room"])
	if err != nil {
		return ""
	}
	if m := roomInPrompt.FindAllStringSubmatch(prompt, -1); len(m) > 0 {
		if r, err := ParseRoom(m[len(m)-1][1]); err == nil {
			room = r
		}
	}
	path, ok := room.Solve()
	path = actions.DemoPath(path, ok, right)
	return actions.Demo(agent, prompt, actions.MoveList(path),
		fmt.Sprintf("Breadth-first search finds %d moves.", len(path)),
		"The moves never push the box into a corner.")
}

// Score plays one response's moves from the start: 1 when solved.
func (e *Env) Score(task rollout.Task, response string) rollout.Score {
	return actions.ScorePlan(e, planParser, task, response)
}
