// roles.go — the tool and plan roles every grid game pairs (AT-GRPO): their
// prompt layout and presets, registered as <game>-tool, <game>-tool-program
// (the paper's tool agent: a Python program whose printed action list is
// the proposal; the tree workflow runs it in the sandbox, see
// workflow.tree.programs) and <game>-plan, and the score of a plan line
// played from the start.
package actions

import (
	"fmt"
	"strings"

	"troupe/rollout"
)

// Roles describes a game's two agents.
type Roles struct {
	Game   string // prefix of the preset and parser names (plan-path, sokoban, sudoku)
	System string // the team's system message
	Rules  string // the game's rules, shown before the task
	Tool   string // the tool agent's role text
	Plan   string // the plan agent's role text
}

// UserTemplate lays out a game prompt: the rules and the task, the current
// state (the tree workflow's observation), the teammates' outputs and the
// role.
func (r Roles) UserTemplate() string {
	return "# Task Introduction\n" + r.Rules + "\n{{.Task}}\n\n# Current State\n{{index .Extra \"observation\"}}\n" + rollout.TeamAndRole
}

// ProgramRole is the tool agent's role when it writes a program; the
// program must print the line the tool's answer would end with (the last
// line of Roles.Tool).
const ProgramRole = `You are the Tool agent. Write a short Python 3 program (standard library only) that computes the answer from the current state, for instance with breadth-first search or A*, and prints it. The program runs in a sandbox without input or network, for a few seconds at most; its output is shown to your teammates.
Put the whole program in one ` + "```python" + ` block. The program's last printed line must be `

// ProgramMarker is in every program-writing tool prompt (demonstrations
// look for it).
const ProgramMarker = "Write a short Python 3 program"

// programRole is the tool agent's program-writing role for a game.
func (r Roles) programRole() string {
	lines := strings.Split(strings.TrimSpace(r.Tool), "\n")
	last := strings.TrimPrefix(lines[len(lines)-1], "End with one line: ")
	return ProgramRole + last
}

// Register registers the three parsers and the three presets.
func (r Roles) Register(tool, plan rollout.Parser) {
	user := r.UserTemplate()
	for _, role := range []struct {
		name, text string
		parser     rollout.Parser
	}{{r.Game + "-tool", r.Tool, tool}, {r.Game + "-tool-program", r.programRole(), ProgramParser}, {r.Game + "-plan", r.Plan, plan}} {
		rollout.RegisterParser(role.name, role.parser)
		rollout.RegisterPreset(role.name, rollout.Preset{System: r.System, Role: role.text, User: user, Parser: role.name})
	}
}

// ScorePlan plays the plan line of response from the task's start: reward 1
// when that solves the game (for evaluation outside tree sampling).
func ScorePlan(g rollout.Stepper, plan rollout.Parser, task rollout.Task, response string) rollout.Score {
	s, err := g.Reset(task)
	if err != nil {
		return rollout.Score{}
	}
	v := plan.Parse(response)
	g.Step(s, "plan", v.Value)
	if s.Success() {
		return rollout.Score{Reward: 1, Success: true, Extracted: v.Value}
	}
	return rollout.Score{Extracted: v.Value}
}

// Demo ends a demonstration with its action line: the tool agent's (told by
// its name, or by the tool role text in its prompt) "Actions List: action"
// after the sentence toolWork, else the plan agent's "#### action" after
// planWork.
func Demo(agent, prompt, action, toolWork, planWork string) string {
	if strings.Contains(prompt, ProgramMarker) { // a program that prints the answer found
		return "# " + toolWork + "\n```python\nprint(" + fmt.Sprintf("%q", "Actions List: "+action) + ")\n```"
	}
	if agent == "tool" || strings.Contains(prompt, "You are the Tool agent") {
		return toolWork + "\nActions List: " + action
	}
	return planWork + "\n#### " + action
}

// DemoPath is the move string a demonstration shows: path ("U" when no
// path was found), with its first move turned around when the
// demonstration should be wrong.
func DemoPath(path string, found, right bool) string {
	if !found || path == "" {
		path = "U"
	}
	if !right {
		flip := map[byte]byte{'U': 'D', 'D': 'U', 'L': 'R', 'R': 'L'}
		path = string(flip[path[0]]) + path[1:]
	}
	return path
}
