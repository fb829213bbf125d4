package rollout_test

import (
	"fmt"

	"troupe/rollout"
	"troupe/rollout/scripted"
	"troupe/rollout/workflow/mathrefine"
)

// Example wires a two-agent math team to a (scripted) model and runs one
// rollout step. With a real model, Binding wraps the tokenizer and its chat
// template, and the generator wraps model.Generate.
func Example() {
	cfgs, _ := rollout.DefaultAgentConfigs("math-refine") // solver + verifier on model "policy"
	agents, err := rollout.NewAgents(cfgs, rollout.AgentDefaults{Sampling: rollout.DefaultSampling, MaxNewTokens: 512},
		func(rollout.AgentConfig) (rollout.Binding, error) { return scripted.Binding(), nil })
	if err != nil {
		panic(err)
	}
	wf, err := rollout.NewWorkflow("math-refine", mathrefine.DefaultOptions(), agents, exactScorer{})
	if err != nil {
		panic(err)
	}
	model := scripted.New(scripted.Match(
		scripted.Rule{Contains: "You are the Solver", Reply: scripted.Fixed(`2 + 2 = 4. \boxed{4}`)},
		scripted.Rule{Contains: "You are the Verifier", Reply: scripted.Fixed(`Correct. <verify>approve</verify>`)},
	))
	s := rollout.Sampler{Generators: map[string]rollout.Generator{"policy": model}, MaxBatchRows: 64}
	out, err := s.Run(wf, []rollout.Task{{ID: "q1", Question: "What is 2 + 2?", Answer: "4"}}, 2, 1)
	if err != nil {
		panic(err)
	}
	for _, r := range out.Samples {
		fmt.Printf("traj %d turn %d %-8s reward %.1f valid %v\n", r.Traj, r.Turn, r.Agent, r.Reward, r.Valid)
	}
	m, _ := rollout.Evaluate(out.Episodes, 1)
	fmt.Printf("accuracy %.2f, pass@1 %.2f, turns/episode %.1f\n", m.Accuracy, m.PassAtK[1], m.MeanTurns)
	// Output:
	// traj 0 turn 0 solver   reward 1.0 valid true
	// traj 0 turn 1 verifier reward 1.0 valid true
	// traj 1 turn 0 solver   reward 1.0 valid true
	// traj 1 turn 1 verifier reward 1.0 valid true
	// accuracy 1.00, pass@1 1.00, turns/episode 2.0
}
