package tree_test

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"troupe/rollout"
	_ "troupe/rollout/env/planpath" // the plan-path-tool-program parser
	"troupe/rollout/scripted"
	"troupe/rollout/workflow/tree"
)

// needSandbox skips without bubblewrap unless TROUPE_SANDBOX_REQUIRED is set.
func needSandbox(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil && os.Getenv("TROUPE_SANDBOX_REQUIRED") == "" {
		t.Skip("bwrap not installed (scripts/setup.sh installs it); set TROUPE_SANDBOX_REQUIRED=1 to fail instead")
	}
}

// programEnv steps "r=<reward>"; anything else (no action) scores −2.
type programEnv struct{ toyEnv }

func (programEnv) Step(s rollout.State, agent, action string) rollout.StepResult {
	r, err := strconv.ParseFloat(strings.TrimPrefix(strings.TrimSpace(action), "r="), 64)
	if err != nil || !strings.HasPrefix(strings.TrimSpace(action), "r=") {
		return rollout.StepResult{Reward: -2, Message: agent + " proposed nothing"}
	}
	st := s.(*toyState)
	st.kept = append(st.kept, agent+":"+action)
	return rollout.StepResult{Reward: r, Message: fmt.Sprintf("%s did r=%g", agent, r)}
}

// The tool agent's K candidates are programs: each runs in the sandbox and
// the action it prints (not a line of the response) is what the
// environment steps; a program that fails, loops or prints no action line
// proposes nothing; the plan agent is shown the chosen program's run.
func TestToolProgramsRunInTheSandbox(t *testing.T) {
	needSandbox(t)
	programs := []string{
		"print('thinking')\nprint('Actions List: r=' + str(0.5 * 3))",   // computes 1.5
		"import sys\nsys.exit('no route')",                              // fails
		"while True:\n    pass",                                         // runs out of time
		"print('Actions List: r=' + str(sum(range(3))))\nprint('done')", // 3, then another line
		"x = 1", // prints nothing
	}
	var mu sync.Mutex
	seen := 0
	var planPrompt string
	respond := func(prompt string, _ uint64) string {
		mu.Lock()
		defer mu.Unlock()
		if strings.Contains(prompt, "You are the planner.") {
			planPrompt = prompt
			return "r=0.25 plan"
		}
		p := programs[seen%len(programs)]
		seen++
		return "Here is my search.\n```python\n" + p + "\n```\nActions List: r=100"
	}
	user := "{{.Task}}\n{{index .Extra \"observation\"}}\n{{.TeamContext}}\n{{.Role}}"
	agents := compileAgents(t, []rollout.AgentConfig{
		{Name: "tool", Model: "policy", Role: "You are the tool.", User: user, Parser: "plan-path-tool-program"},
		{Name: "plan", Model: "policy", Role: "You are the planner.", User: user},
	})
	o := tree.DefaultOptions()
	o.Candidates, o.MaxTurns, o.Programs, o.ProgramSeconds = len(programs), 1, []string{"tool"}, 1
	wf, err := rollout.NewWorkflow("tree", o, agents, programEnv{})
	if err != nil {
		t.Fatal(err)
	}
	s := rollout.Sampler{Generators: map[string]rollout.Generator{"policy": scripted.New(respond)}}
	out, err := s.Run(wf, []rollout.Task{toyEnv{}.Task(0)}, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"1.5": 1.5, "no route": -2, "while True": -2, "sum(range(3))": 3, "x = 1": -2}
	for _, r := range out.Samples {
		if r.Agent != "tool" {
			continue
		}
		for key, w := range want {
			if strings.Contains(r.ResponseText, key) && math.Abs(r.TeamReward-w) > 1e-12 {
				t.Errorf("program with %q: team reward %g, want %g", key, r.TeamReward, w)
			}
		}
	}
	// the best program (3) is the one the planner is shown, with its run
	if !strings.Contains(planPrompt, "tool's program") || !strings.Contains(planPrompt, "its action: r=3") || !strings.Contains(planPrompt, "if executed: tool did r=3") {
		t.Errorf("the planner's prompt does not show the chosen program's run:\n%s", planPrompt)
	}
	ep := out.Episodes[0]
	if ep.Metrics["program_passed"] != 3 || ep.Metrics["program_failed"] != 1 || ep.Metrics["program_timed_out"] != 1 {
		t.Errorf("program outcomes %v, want 3 passed, 1 failed, 1 timed out", ep.Metrics)
	}
}

func TestProgramOptionsAreChecked(t *testing.T) {
	o := tree.DefaultOptions()
	o.Programs = []string{"coder"}
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), `workflow.tree.programs: "coder" is not one of`) {
		t.Errorf("an unknown program agent: %v", err)
	}
	o.Programs, o.Interpreter = []string{"tool"}, "python3"
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "absolute path") {
		t.Errorf("a relative interpreter: %v", err)
	}
}
