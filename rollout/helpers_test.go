package rollout_test

import (
	"strings"
	"testing"

	"troupe/rollout"
	"troupe/rollout/answer"
	"troupe/rollout/scripted"
)

// exactScorer gives 1 when the final answer equals the gold answer as a
// string: enough for orchestration tests (the math reward has its own).
type exactScorer struct{}

func (exactScorer) Score(t rollout.Task, response string) rollout.Score {
	got, _ := answer.Final(response)
	if got != "" && got == t.Answer {
		return rollout.Score{Reward: 1, Success: true, Extracted: got}
	}
	return rollout.Score{Extracted: got}
}

var defaults = rollout.AgentDefaults{Sampling: rollout.DefaultSampling, MaxNewTokens: 200}

// team builds a solver and a verifier on the given models.
func team(t *testing.T, solverModel, verifierModel string) []*rollout.Agent {
	t.Helper()
	cfgs, err := rollout.DefaultAgentConfigs("math-refine")
	if err != nil {
		t.Fatal(err)
	}
	cfgs[0].Model, cfgs[1].Model = solverModel, verifierModel
	return compileAgents(t, cfgs)
}

// compileAgents compiles agent configs with the scripted binding.
func compileAgents(t *testing.T, cfgs []rollout.AgentConfig) []*rollout.Agent {
	t.Helper()
	var agents []*rollout.Agent
	for i, c := range cfgs {
		a, err := rollout.NewAgent("agents["+string(rune('0'+i))+"]", c, defaults, scripted.Binding())
		if err != nil {
			t.Fatal(err)
		}
		agents = append(agents, a)
	}
	return agents
}

func mathRefine(t *testing.T, opts rollout.MathRefineOptions, agents []*rollout.Agent) rollout.Workflow {
	t.Helper()
	o := rollout.DefaultWorkflowOptions()
	o.MathRefine = opts
	wf, err := rollout.NewWorkflow("math-refine", o, agents, exactScorer{})
	if err != nil {
		t.Fatal(err)
	}
	return wf
}

// role tells which preset wrote a prompt.
func isSolver(prompt string) bool   { return strings.Contains(prompt, "You are the Solver") }
func isVerifier(prompt string) bool { return strings.Contains(prompt, "You are the Verifier") }

// solverVerifier answers solver prompts with solve and verifier prompts with verify.
func solverVerifier(solve, verify scripted.Responder) scripted.Responder {
	return scripted.Match(
		scripted.Rule{Contains: "You are the Solver", Reply: solve},
		scripted.Rule{Contains: "You are the Verifier", Reply: verify},
	)
}

var tasks = []rollout.Task{
	{ID: "t0", Question: "What is 2 + 2?", Answer: "4"},
	{ID: "t1", Question: "What is 3 * 3?", Answer: "9"},
	{ID: "t2", Question: "What is 10 - 7?", Answer: "3"},
}

func agentsOf(rows []rollout.Sample) string {
	var s []string
	for _, r := range rows {
		s = append(s, r.Agent)
	}
	return strings.Join(s, ",")
}

func rowsOfTraj(rows []rollout.Sample, traj int) []rollout.Sample {
	var out []rollout.Sample
	for _, r := range rows {
		if r.Traj == traj {
			out = append(out, r)
		}
	}
	return out
}
