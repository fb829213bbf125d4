// agents.go — the two roles of Sokoban (tool: proposes moves, scored on a
// copy; plan: commits to moves), their parsers, prompt presets and the
// demonstrations `train sft` trains on.
package sokoban

import (
	"fmt"
	"regexp"
	"strings"

	"troupe/rollout"
	"troupe/rollout/env/internal/actions"
)

func checkMoves(v string) error { _, err := actions.Moves(v); return err }

var (
	toolParser = actions.ToolParser(checkMoves)
	planParser = actions.PlanParser(checkMoves)
)

// UserTemplate lays out a Sokoban prompt.
const UserTemplate = `# Task Introduction
Push the box onto the goal. '#' wall, ' ' floor, '.' goal, '$' box, '@' you, '*' box on the goal, '+' you on the goal.
Moves: U (up), D (down), L (left), R (right); walking into the box pushes it one cell if the cell beyond is free. A box in a corner can never move again.
{{.Task}}

# Current State
{{index .Extra "observation"}}
{{- if .TeamContext}}

# Your Teammates' Outputs
{{.TeamContext}}
{{- end}}

# Your Role
{{.Role}}`

const teamSystem = "You are one member of a team that solves Sokoban puzzles. Each member has its own role; follow yours exactly."

func init() {
	rollout.RegisterParser("sokoban-tool", toolParser)
	rollout.RegisterParser("sokoban-plan", planParser)
	rollout.RegisterPreset("sokoban-tool", rollout.Preset{
		System: teamSystem,
		Role: `You are the Tool agent. Search (breadth-first) for the shortest move sequence that pushes the box onto the goal.
End with one line: Actions List: ["R", "D", ...]`,
		User:   UserTemplate,
		Parser: "sokoban-tool",
	})
	rollout.RegisterPreset("sokoban-plan", rollout.Preset{
		System: teamSystem,
		Role: `You are the Plan agent. Check the Tool agent's moves against the room and fix them if they push the box into a wall or a corner.
End with one line holding the moves to execute: #### ["R", "D", ...]`,
		User:   UserTemplate,
		Parser: "sokoban-plan",
	})
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
	if !ok || path == "" {
		path = "U"
	}
	if !right {
		flip := map[byte]byte{'U': 'D', 'D': 'U', 'L': 'R', 'R': 'L'}
		path = string(flip[path[0]]) + path[1:]
	}
	moves := actions.MoveList(path)
	if agent == "tool" || strings.Contains(prompt, "You are the Tool agent") {
		return fmt.Sprintf("Breadth-first search finds %d moves.\nActions List: %s", len(path), moves)
	}
	return fmt.Sprintf("The moves never push the box into a corner.\n#### %s", moves)
}
