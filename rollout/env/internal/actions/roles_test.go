package actions

import (
	"errors"
	"strings"
	"testing"

	"troupe/rollout"
)

// A game's prompt is its rules and task, the current state, the teammates'
// outputs and the role, in that order: the layout the games had written
// out each on their own.
func TestUserTemplateLayout(t *testing.T) {
	want := "# Task Introduction\nRULES\n{{.Task}}\n\n# Current State\n{{index .Extra \"observation\"}}\n{{- if .TeamContext}}\n\n# Your Teammates' Outputs\n{{.TeamContext}}\n{{- end}}\n\n# Your Role\n{{.Role}}"
	if got := (Roles{Rules: "RULES"}).UserTemplate(); got != want {
		t.Errorf("template:\n%q\nwant\n%q", got, want)
	}
}

// Register names the presets and parsers <game>-tool and <game>-plan, and
// each preset reads with its own parser.
func TestRegisterRoles(t *testing.T) {
	tool, plan := Parsers(func(v string) error {
		if v == `["X"]` {
			return errors.New("no X")
		}
		return nil
	})
	Roles{Game: "roles-test", System: "S", Rules: "R", Tool: "T", Plan: "P"}.Register(tool, plan)
	for role, line := range map[string]string{"tool": `Actions List: ["U"]`, "plan": `#### ["U"]`} {
		p, err := rollout.PresetByName("roles-test-" + role)
		if err != nil || p.System != "S" || p.Role != strings.ToUpper(role[:1]) || p.Parser != "roles-test-"+role {
			t.Fatalf("preset %s: %+v %v", role, p, err)
		}
		parse, err := rollout.ParserByName(p.Parser)
		if err != nil {
			t.Fatal(err)
		}
		if got := parse.Parse("working\n" + line); !got.Valid || got.Value != `["U"]` {
			t.Errorf("%s parser on its own line: %+v", role, got)
		}
	}
	if got := plan.Parse(`#### ["X"]`); got.Valid || got.Problem != "no X" {
		t.Errorf("check: %+v", got)
	}
}

// A demonstration ends with the acting agent's action line; a wrong one
// turns its first move around, and a missing path becomes "U".
func TestDemo(t *testing.T) {
	if got := Demo("tool", "", "[1]", "Found.", "Checked."); got != "Found.\nActions List: [1]" {
		t.Errorf("tool by name: %q", got)
	}
	if got := Demo("a1", "... You are the Tool agent ...", "[1]", "Found.", "Checked."); got != "Found.\nActions List: [1]" {
		t.Errorf("tool by prompt: %q", got)
	}
	if got := Demo("plan", "", "[1]", "Found.", "Checked."); got != "Checked.\n#### [1]" {
		t.Errorf("plan: %q", got)
	}
	for _, c := range []struct {
		path         string
		found, right bool
		want         string
	}{{"RRD", true, true, "RRD"}, {"RRD", true, false, "LRD"}, {"", true, true, "U"}, {"RRD", false, false, "D"}} {
		if got := DemoPath(c.path, c.found, c.right); got != c.want {
			t.Errorf("DemoPath(%q, %v, %v) = %q, want %q", c.path, c.found, c.right, got, c.want)
		}
	}
}

// line is a one-cell game: the plan "R" solves it.
type line struct{ rollout.SliceSource }

type cell struct{ at int }

func (c *cell) Clone() rollout.State { d := *c; return &d }
func (c *cell) Observation() string  { return "" }
func (c *cell) Done() bool           { return c.at == 1 }
func (c *cell) Success() bool        { return c.at == 1 }

func (line) Name() string                              { return "line" }
func (line) Score(rollout.Task, string) rollout.Score  { return rollout.Score{} }
func (line) Reset(rollout.Task) (rollout.State, error) { return &cell{}, nil }
func (line) Step(s rollout.State, _, a string) rollout.StepResult {
	if a == `["R"]` {
		s.(*cell).at = 1
	}
	return rollout.StepResult{}
}

// ScorePlan plays the plan line from the start: 1 when it solves the game,
// with the line's action as the extracted answer either way.
func TestScorePlan(t *testing.T) {
	_, plan := Parsers(func(string) error { return nil })
	for response, want := range map[string]rollout.Score{
		"so:\n#### [\"R\"]": {Reward: 1, Success: true, Extracted: `["R"]`},
		"#### [\"L\"]":      {Extracted: `["L"]`},
		"no action line":    {},
	} {
		if got := ScorePlan(line{}, plan, rollout.Task{}, response); got.Reward != want.Reward || got.Success != want.Success || got.Extracted != want.Extracted {
			t.Errorf("%q: %+v, want %+v", response, got, want)
		}
	}
}

// <game>-tool-program asks for a program that prints the tool's action
// line, its parser reads the last fenced block, and a demonstration for it
// is a program printing the answer.
func TestProgramRole(t *testing.T) {
	tool, plan := Parsers(func(string) error { return nil })
	Roles{Game: "program-test", System: "S", Rules: "R", Tool: "Search.\nEnd with one line: Actions List: [\"R\", ...]", Plan: "P"}.Register(tool, plan)
	p, err := rollout.PresetByName("program-test-tool-program")
	if err != nil || !strings.Contains(p.Role, ProgramMarker) || !strings.HasSuffix(p.Role, `must be Actions List: ["R", ...]`) || p.Parser != "program-test-tool-program" {
		t.Fatalf("preset: %+v %v", p, err)
	}
	got := ProgramParser.Parse("first\n```python\nprint(1)\n```\nthen\n```python\nimport json\nprint(2)\n```\nActions List: [\"U\"]")
	if !got.Valid || got.Value != "import json\nprint(2)\n" {
		t.Errorf("parsed %+v, want the last block", got)
	}
	if got := ProgramParser.Parse(`Actions List: ["U"]`); got.Valid || !strings.Contains(got.Problem, "python") {
		t.Errorf("a response without a program: %+v", got)
	}
	demo := Demo("tool", p.Role, `["R", "D"]`, "BFS finds 2 moves.", "")
	if v := ProgramParser.Parse(demo); !v.Valid || v.Value != `print("Actions List: [\"R\", \"D\"]")`+"\n" {
		t.Errorf("demonstration %q parses as %+v", demo, v)
	}
}
