package tree

import "troupe/rollout"

func init() {
	rollout.RegisterWorkflow("tree", rollout.WorkflowSpec{
		Key:      "tree",
		Defaults: func() any { return DefaultOptions() },
		Roles:    func(o any) map[string]string { return rollout.ListRoles("tree", o.(Options).Agents) },
		Build: func(o any, agents []*rollout.Agent, env rollout.Scorer) (rollout.Workflow, error) {
			opts, err := rollout.OptionsOf("tree", o, DefaultOptions)
			if err != nil {
				return nil, err
			}
			return New(opts, agents, env)
		},
		Agents: func() []rollout.AgentConfig {
			return []rollout.AgentConfig{
				{Name: "tool", Model: "policy", Preset: "plan-path-tool", FormatPenalty: 0.1},
				{Name: "plan", Model: "policy", Preset: "plan-path-plan", FormatPenalty: 0.1, RewardScale: 2},
			}
		},
		// atgrpo, and the grouping ablations on the same rows: grpo and
		// rloo (prompt groups of trajectories), grpo-step (prompt groups
		// of rows), drmas ((prompt, agent): the turn left out of the key)
		Estimators: append([]string{"atgrpo"}, rollout.LinearEstimators...),
	})
}
