// Package rollouttest is the scripted team the tests of rollout and of its
// workflow packages share: an exact-match scorer, agents compiled with the
// scripted binding, the math-refine team and workflow (reached by name, so
// the test imports the workflow package), and row helpers.
//
// Files: rollouttest.go (all of it).
//
// What it is not: a fake of anything the run uses. Generators stay
// rollout/scripted's; these are only the fixtures around them.
package rollouttest

import (
	"strings"
	"testing"

	"troupe/rollout"
	"troupe/rollout/answer"
	"troupe/rollout/scripted"
)

// ExactScorer gives 1 when the final answer equals the gold answer as a
// string: enough for orchestration tests (the math reward has its own).
type ExactScorer struct{}

func (ExactScorer) Score(t rollout.Task, response string) rollout.Score {
	got, _ := answer.Final(response)
	if got != "" && got == t.Answer {
		return rollout.Score{Reward: 1, Success: true, Extracted: got}
	}
	return rollout.Score{Extracted: got}
}

// Defaults are the agents' sampling and length defaults.
var Defaults = rollout.AgentDefaults{Sampling: rollout.DefaultSampling, MaxNewTokens: 200}

// Team builds math-refine's solver and verifier on the given models.
func Team(t *testing.T, solverModel, verifierModel string) []*rollout.Agent {
	t.Helper()
	cfgs, err := rollout.DefaultAgentConfigs("math-refine")
	if err != nil {
		t.Fatal(err)
	}
	cfgs[0].Model, cfgs[1].Model = solverModel, verifierModel
	return Compile(t, cfgs)
}

// Compile compiles agent configs with the scripted binding.
func Compile(t *testing.T, cfgs []rollout.AgentConfig) []*rollout.Agent {
	t.Helper()
	var agents []*rollout.Agent
	for i, c := range cfgs {
		a, err := rollout.NewAgent("agents["+string(rune('0'+i))+"]", c, Defaults, scripted.Binding())
		if err != nil {
			t.Fatal(err)
		}
		agents = append(agents, a)
	}
	return agents
}

// MathRefine builds math-refine with opts (its options value) over
// ExactScorer.
func MathRefine(t *testing.T, opts any, agents []*rollout.Agent) rollout.Workflow {
	t.Helper()
	wf, err := rollout.NewWorkflow("math-refine", opts, agents, ExactScorer{})
	if err != nil {
		t.Fatal(err)
	}
	return wf
}

// Run samples n episodes of the first of Tasks with gen as model "policy".
func Run(t *testing.T, wf rollout.Workflow, gen rollout.Generator, n int, seed uint64) *rollout.Rollout {
	t.Helper()
	s := rollout.Sampler{Generators: map[string]rollout.Generator{"policy": gen}}
	out, err := s.Run(wf, Tasks[:1], n, seed)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// IsSolver and IsVerifier tell which preset wrote a prompt.
func IsSolver(prompt string) bool   { return strings.Contains(prompt, "You are the Solver") }
func IsVerifier(prompt string) bool { return strings.Contains(prompt, "You are the Verifier") }

// SolverVerifier answers solver prompts with solve and verifier prompts
// with verify.
func SolverVerifier(solve, verify scripted.Responder) scripted.Responder {
	return scripted.Match(
		scripted.Rule{Contains: "You are the Solver", Reply: solve},
		scripted.Rule{Contains: "You are the Verifier", Reply: verify},
	)
}

// Tasks are three arithmetic questions.
var Tasks = []rollout.Task{
	{ID: "t0", Question: "What is 2 + 2?", Answer: "4"},
	{ID: "t1", Question: "What is 3 * 3?", Answer: "9"},
	{ID: "t2", Question: "What is 10 - 7?", Answer: "3"},
}

// AgentsOf lists the rows' agents, comma-separated.
func AgentsOf(rows []rollout.Sample) string {
	var s []string
	for _, r := range rows {
		s = append(s, r.Agent)
	}
	return strings.Join(s, ",")
}

// RowsOfTraj keeps the rows of one trajectory.
func RowsOfTraj(rows []rollout.Sample, traj int) []rollout.Sample {
	var out []rollout.Sample
	for _, r := range rows {
		if r.Traj == traj {
			out = append(out, r)
		}
	}
	return out
}
