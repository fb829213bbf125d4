package math_test

import (
	"reflect"
	"strings"
	"testing"

	"troupe/rollout"
	mathenv "troupe/rollout/env/math"
	"troupe/rollout/scripted"
	"troupe/rollout/workflow/mathrefine"
)

// TestMathRefineOnProceduralTasks drives the real reward through the
// sampler: a scripted Solver that knows the gold answers but writes them in
// a different form (or gets them wrong, by seed), and a Verifier that
// rejects at random.
func TestMathRefineOnProceduralTasks(t *testing.T) {
	env, err := mathenv.New(mathenv.DefaultConfig(), mathenv.SplitTrain)
	if err != nil {
		t.Fatal(err)
	}
	it, _ := rollout.NewTaskIterator(env, 11, true)
	tasks := it.Next(16)
	gold := map[string]string{}
	for _, tk := range tasks {
		gold[tk.Question] = tk.Answer
	}
	solve := func(prompt string, seed uint64) string {
		for q, a := range gold {
			if strings.Contains(prompt, q) {
				if seed%4 == 0 {
					return `I think it is \boxed{` + a + `1}.`
				}
				return `Step by step … so the answer is $\boxed{` + a + `.0}$` // decimal form of an integer
			}
		}
		return "?"
	}
	verify := func(_ string, seed uint64) string {
		return map[bool]string{true: "<verify>approve</verify>", false: "<verify>reject</verify>"}[seed%3 != 0]
	}
	respond := scripted.Match(scripted.Rule{Contains: "You are the Solver", Reply: solve}, scripted.Rule{Contains: "You are the Verifier", Reply: verify})

	cfgs, _ := rollout.DefaultAgentConfigs("math-refine")
	var agents []*rollout.Agent
	for i, c := range cfgs {
		a, err := rollout.NewAgent("agents["+string(rune('0'+i))+"]", c, rollout.AgentDefaults{Sampling: rollout.DefaultSampling, MaxNewTokens: 256}, scripted.Binding())
		if err != nil {
			t.Fatal(err)
		}
		agents = append(agents, a)
	}
	wf, err := rollout.NewWorkflow("math-refine", mathrefine.DefaultOptions(), agents, env)
	if err != nil {
		t.Fatal(err)
	}
	runOnce := func() *rollout.Rollout {
		s := rollout.Sampler{Generators: map[string]rollout.Generator{"policy": scripted.New(respond)}, MaxBatchRows: 20}
		out, err := s.Run(wf, tasks, 4, 2024)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	out := runOnce()
	right := 0
	for _, ep := range out.Episodes {
		last := ep.Calls[len(ep.Calls)-1]
		if last.Agent.Name != "solver" && !(len(ep.Calls) == 2 && ep.Calls[1].Parsed.Value == "approve") {
			t.Fatalf("episode %d ends with %s", ep.Traj, last.Agent.Name)
		}
		var lastSolver *rollout.Call
		for _, c := range ep.Calls {
			if c.Agent.Name == "solver" {
				lastSolver = c
			}
		}
		wantOK := strings.Contains(lastSolver.Response, ".0}")
		if ep.Success != wantOK || (ep.Reward == 1) != wantOK {
			t.Errorf("episode %d: response %q scored %g", ep.Traj, lastSolver.Response, ep.Reward)
		}
		if wantOK {
			right++
		}
	}
	if right == 0 || right == len(out.Episodes) {
		t.Fatalf("%d of %d right: the script should mix right and wrong", right, len(out.Episodes))
	}
	m, err := rollout.Evaluate(out.Episodes, 1, 4)
	if err != nil {
		t.Fatal(err)
	}
	if m.Accuracy != float64(right)/float64(len(out.Episodes)) || m.ValidRatio["solver"] != 1 || m.ValidRatio["verifier"] != 1 {
		t.Errorf("metrics %+v", m)
	}
	if m.MeanTurns < 2 || m.MeanTurns > 3 {
		t.Errorf("mean turns %g, want between 2 (S,V) and 3 (S,V,S)", m.MeanTurns)
	}
	if again := runOnce(); !reflect.DeepEqual(again.Samples, out.Samples) {
		t.Error("rerun with the same seed gave different rows")
	}
}
