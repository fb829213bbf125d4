package mathtool_test

import (
	"math"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"troupe/rollout"
	mathenv "troupe/rollout/env/math"
	"troupe/rollout/scripted"
	"troupe/rollout/workflow/mathtool"
)

func needSandbox(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil && os.Getenv("TROUPE_SANDBOX_REQUIRED") == "" {
		t.Skip("bwrap not installed (scripts/setup.sh installs it); set TROUPE_SANDBOX_REQUIRED=1 to fail instead")
	}
}

// scorer is the math reward over one task list.
type scorer struct{ mathenv.Reward }

// A hand-built episode, K = 3: the tool's programs print 41, 6·7 and
// nothing (they fail), the reasoner boxes 41, 42 and no answer. The tool
// candidates earn 0, 1, −1 by what their programs printed (not by text in
// the response); the reasoner's 0, 1, 0; the best program (42) is what the
// reasoner is shown, its best answer (42) agrees with it, so the episode
// ends after one turn, solved.
func TestMathToolTurn(t *testing.T) {
	needSandbox(t)
	tools := []string{"print(40 + 1)", "print('working')\nprint(6 * 7)", "raise ValueError('stuck')"}
	reasons := []string{`\boxed{41}`, `So \boxed{42}.`, "I cannot tell."}
	var mu sync.Mutex
	seen := map[string]int{}
	var reasonerPrompt string
	respond := func(prompt string, _ uint64) string {
		mu.Lock()
		defer mu.Unlock()
		if strings.Contains(prompt, "You are the Reasoner") {
			reasonerPrompt = prompt
			k := seen["r"]
			seen["r"]++
			return reasons[k%3]
		}
		k := seen["t"]
		seen["t"]++
		return "Compute it.\n```python\n" + tools[k%3] + "\n```\nThe answer is 7."
	}
	var agents []*rollout.Agent
	for i, ac := range []rollout.AgentConfig{{Name: "tool", Model: "policy", Preset: "mathtool-program"}, {Name: "reasoner", Model: "policy", Preset: "mathtool-reasoner"}} {
		a, err := rollout.NewAgent("agents["+string(rune('0'+i))+"]", ac, rollout.AgentDefaults{Sampling: rollout.DefaultSampling, MaxNewTokens: 64}, scripted.Binding())
		if err != nil {
			t.Fatal(err)
		}
		agents = append(agents, a)
	}
	o := mathtool.DefaultOptions()
	o.Candidates, o.ProgramSeconds = 3, 2
	wf, err := rollout.NewWorkflow("math-tool", o, agents, scorer{})
	if err != nil {
		t.Fatal(err)
	}
	s := rollout.Sampler{Generators: map[string]rollout.Generator{"policy": scripted.New(respond)}}
	out, err := s.Run(wf, []rollout.Task{{ID: "t", Question: "What is 6 times 7?", Answer: "42"}}, 1, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Samples) != 6 {
		t.Fatalf("%d rows, want one turn of 3 tool and 3 reasoner candidates", len(out.Samples))
	}
	want := map[string][]float64{"tool": {0, 1, -1}, "reasoner": {0, 1, 0}}
	for _, r := range out.Samples {
		if w := want[r.Agent][r.Candidate]; math.Abs(r.TeamReward-w) > 1e-12 || r.Turn != 0 {
			t.Errorf("%s candidate %d (turn %d): team reward %g, want %g", r.Agent, r.Candidate, r.Turn, r.TeamReward, w)
		}
	}
	if !strings.Contains(reasonerPrompt, "turn 1, the program: 42") || !strings.Contains(reasonerPrompt, "its answer: 42") {
		t.Errorf("the reasoner is not shown the chosen program's answer:\n%s", reasonerPrompt)
	}
	if ep := out.Episodes[0]; !ep.Done || !ep.Success || ep.Metrics["agreed"] != 1 || ep.Metrics["game_turns"] != 1 {
		t.Errorf("episode: done %v success %v metrics %v; want solved by agreement after one turn", ep.Done, ep.Success, ep.Metrics)
	}
}

func TestMathToolOptions(t *testing.T) {
	o := mathtool.DefaultOptions()
	o.Reasoner = o.Tool
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "two different agents") {
		t.Errorf("one agent twice: %v", err)
	}
	o = mathtool.DefaultOptions()
	o.Mode = "no-tree"
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "workflow.math_tool.candidates") {
		t.Errorf("no-tree with 4 candidates: %v", err)
	}
	o.Candidates = 1
	if err := o.Validate(); err != nil || !o.PooledGroups() {
		t.Errorf("no-tree with one candidate: %v, pooled %v", err, o.PooledGroups())
	}
}

// With env.math.grading: verifier the team is graded as PettingLLMs grades
// it: the reasoner's whole response (no \boxed{} needed) and the program's
// printed line as it is; boxed grading finds no answer in either. K = 2:
// the programs print "Result: 42" and 41, the reasoner writes "The answer
// is 42." and \boxed{41}.
func TestMathToolVerifierGrading(t *testing.T) {
	needSandbox(t)
	tools := []string{"print('Result: 42')", "print(41)"}
	reasons := []string{"Six sevens: the answer is 42.", `\boxed{41}`}
	for _, tc := range []struct {
		grading            string
		tool, reasoner     []float64
		agreedAfterOneTurn bool
	}{
		{mathenv.GradingVerifier, []float64{1, 0}, []float64{1, 0}, true},
		{mathenv.GradingBoxed, []float64{0, 0}, []float64{0, 0}, false},
	} {
		var mu sync.Mutex
		seen := map[string]int{}
		respond := func(prompt string, _ uint64) string {
			mu.Lock()
			defer mu.Unlock()
			if strings.Contains(prompt, "You are the Reasoner") {
				seen["r"]++
				return reasons[(seen["r"]-1)%2]
			}
			seen["t"]++
			return "```python\n" + tools[(seen["t"]-1)%2] + "\n```"
		}
		var agents []*rollout.Agent
		for i, ac := range []rollout.AgentConfig{{Name: "tool", Model: "policy", Preset: "mathtool-program"}, {Name: "reasoner", Model: "policy", Preset: "mathtool-reasoner"}} {
			a, err := rollout.NewAgent("agents["+string(rune('0'+i))+"]", ac, rollout.AgentDefaults{Sampling: rollout.DefaultSampling, MaxNewTokens: 64}, scripted.Binding())
			if err != nil {
				t.Fatal(err)
			}
			agents = append(agents, a)
		}
		o := mathtool.DefaultOptions()
		o.Candidates, o.ProgramSeconds, o.MaxTurns = 2, 2, 1
		wf, err := rollout.NewWorkflow("math-tool", o, agents, scorer{mathenv.Reward{Grading: tc.grading}})
		if err != nil {
			t.Fatal(err)
		}
		s := rollout.Sampler{Generators: map[string]rollout.Generator{"policy": scripted.New(respond)}}
		out, err := s.Run(wf, []rollout.Task{{ID: "t", Question: "What is 6 times 7?", Answer: "42"}}, 1, 5)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string][]float64{"tool": tc.tool, "reasoner": tc.reasoner}
		for _, r := range out.Samples {
			if w := want[r.Agent][r.Candidate]; math.Abs(r.TeamReward-w) > 1e-12 {
				t.Errorf("grading %s: %s candidate %d: reward %g, want %g", tc.grading, r.Agent, r.Candidate, r.TeamReward, w)
			}
		}
		if ep := out.Episodes[0]; ep.Success != tc.agreedAfterOneTurn || (ep.Metrics["agreed"] == 1) != tc.agreedAfterOneTurn {
			t.Errorf("grading %s: success %v, agreed %v; want %v", tc.grading, ep.Success, ep.Metrics["agreed"], tc.agreedAfterOneTurn)
		}
	}
}
