// agents.go — the two roles of plan-path, as AT-GRPO pairs them: a tool
// agent that proposes a route (the reference has it write BFS code; here it
// writes the move list directly) and a plan agent that reads the proposal
// and commits to a route. Their parsers, prompt presets and the
// demonstrations `train sft` trains on.
package planpath

import (
	"fmt"
	"regexp"
	"strings"

	"troupe/rollout"
	"troupe/rollout/env/internal/actions"
)

func checkMoves(v string) error { _, err := ParseMoves(v); return err }

var (
	toolParser = actions.ToolParser(checkMoves)
	planParser = actions.PlanParser(checkMoves)
)

// UserTemplate lays out a plan-path prompt.
const UserTemplate = `# Task Introduction
Move from the start to the goal on the grid. '#' is a wall, '.' is free; rows and columns count from 0.
Moves: U (row − 1), D (row + 1), L (column − 1), R (column + 1). A move into a wall or off the grid wastes a step.
{{.Task}}

# Current State
{{index .Extra "observation"}}
{{- if .TeamContext}}

# Your Teammates' Outputs
{{.TeamContext}}
{{- end}}

# Your Role
{{.Role}}`

const teamSystem = "You are one member of a team that plans routes on grids. Each member has its own role; follow yours exactly."

func init() {
	rollout.RegisterParser("plan-path-tool", toolParser)
	rollout.RegisterParser("plan-path-plan", planParser)
	rollout.RegisterPreset("plan-path-tool", rollout.Preset{
		System: teamSystem,
		Role: `You are the Tool agent. Search the grid (breadth-first) for a shortest route from the current position to the goal.
End with one line: Actions List: ["R", "D", ...]`,
		User:   UserTemplate,
		Parser: "plan-path-tool",
	})
	rollout.RegisterPreset("plan-path-plan", rollout.Preset{
		System: teamSystem,
		Role: `You are the Plan agent. Check the Tool agent's proposed route against the grid and fix it if it hits a wall.
End with one line holding the route to execute: #### ["R", "D", ...]`,
		User:   UserTemplate,
		Parser: "plan-path-plan",
	})
}

var currentCell = regexp.MustCompile(`Current: \((\d+),(\d+)\)`)

// Demonstrate writes one demonstration (see rollout.Demonstrator): the
// shortest route from the current position, or, when it should be wrong,
// the route with its first move turned around.
func (e *Env) Demonstrate(agent string, task rollout.Task, prompt string, right bool) string {
	s, err := e.Reset(task)
	if err != nil {
		return ""
	}
	st := s.(*State)
	if m := currentCell.FindAllStringSubmatch(prompt, -1); len(m) > 0 {
		last := m[len(m)-1]
		fmt.Sscan(last[1], &st.Pos.R)
		fmt.Sscan(last[2], &st.Pos.C)
	}
	path, ok := st.grid.ShortestPath(st.Pos, st.grid.Goal)
	if !ok || path == "" {
		path = "U"
	}
	if !right {
		flip := map[byte]byte{'U': 'D', 'D': 'U', 'L': 'R', 'R': 'L'}
		path = string(flip[path[0]]) + path[1:]
	}
	moves := actions.MoveList(path)
	if agent == "tool" || strings.Contains(prompt, "You are the Tool agent") {
		return fmt.Sprintf("Breadth-first search from %v reaches %v in %d moves.\nActions List: %s", st.Pos, st.grid.Goal, len(path), moves)
	}
	return fmt.Sprintf("The proposed route avoids every wall.\n#### %s", moves)
}
