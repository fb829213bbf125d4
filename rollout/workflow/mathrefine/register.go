package mathrefine

import "troupe/rollout"

func init() {
	rollout.RegisterWorkflow("math-refine", rollout.WorkflowSpec{
		Key:      "math_refine",
		Defaults: func() any { return DefaultOptions() },
		Roles: func(o any) map[string]string {
			m := o.(Options)
			return rollout.RoleKeys("math_refine", map[string]string{"solver": m.Solver, "verifier": m.Verifier})
		},
		Build: func(o any, agents []*rollout.Agent, env rollout.Scorer) (rollout.Workflow, error) {
			opts, err := rollout.OptionsOf("math-refine", o, DefaultOptions)
			if err != nil {
				return nil, err
			}
			return New(opts, agents, env)
		},
		Agents: func() []rollout.AgentConfig {
			return []rollout.AgentConfig{
				{Name: "solver", Model: "policy", Preset: "math-solver", FormatPenalty: 0.1},
				{Name: "verifier", Model: "policy", Preset: "math-verifier", FormatPenalty: 0.1},
			}
		},
		Estimators: rollout.LinearEstimators,
	})
}
