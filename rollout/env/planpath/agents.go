// agents.go — the two roles of plan-path, as AT-GRPO pairs them: a tool
// agent that proposes a route (the reference has it write BFS code; here it
// writes the move list directly) and a plan agent that reads the proposal
// and commits to a route. Their parsers, prompt presets, the
// demonstrations `train sft` trains on, and Score (a plan agent's whole
// answer played from the start).
package planpath

import (
	"fmt"
	"regexp"

	"troupe/rollout"
	"troupe/rollout/env/internal/actions"
)

func checkMoves(v string) error { _, err := ParseMoves(v); return err }

var toolParser, planParser = actions.Parsers(checkMoves)

func init() {
	actions.Roles{
		Game:   "plan-path",
		System: "You are one member of a team that plans routes on grids. Each member has its own role; follow yours exactly.",
		Rules: `Move from the start to the goal on the grid. '#' is a wall, '.' is free; rows and columns count from 0.
Moves: U (row − 1), D (row + 1), L (column − 1), R (column + 1). A move into a wall or off the grid wastes a step.`,
		Tool: `You are the Tool agent. Search the grid (breadth-first) for a shortest route from the current position to the goal.
End with one line: Actions List: ["R", "D", ...]`,
		Plan: `You are the Plan agent. Check the Tool agent's proposed route against the grid and fix it if it hits a wall.
End with one line holding the route to execute: #### ["R", "D", ...]`,
	}.Register(toolParser, planParser)
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
	path = actions.DemoPath(path, ok, right)
	return actions.Demo(agent, prompt, actions.MoveList(path),
		fmt.Sprintf("Breadth-first search from %v reaches %v in %d moves.", st.Pos, st.grid.Goal, len(path)),
		"The proposed route avoids every wall.")
}

// Score plays a whole response's move list from the start (for evaluation
// outside tree sampling): 1 at the goal, else 0.
func (e *Env) Score(task rollout.Task, response string) rollout.Score {
	s, err := e.Reset(task)
	if err != nil {
		return rollout.Score{}
	}
	v := planParser.Parse(response)
	if !v.Valid {
		return rollout.Score{}
	}
	r := e.Step(s, "plan", v.Value)
	ok := s.Success()
	return rollout.Score{Reward: r.Reward, Success: ok, Extracted: v.Value}
}
