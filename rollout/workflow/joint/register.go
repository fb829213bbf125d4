package joint

import "troupe/rollout"

func init() {
	rollout.RegisterWorkflow("joint", rollout.WorkflowSpec{
		Key:      "joint",
		Defaults: func() any { return DefaultOptions() },
		Roles:    func(o any) map[string]string { return rollout.ListRoles("joint", o.(Options).Agents) },
		Build: func(o any, agents []*rollout.Agent, env rollout.Scorer) (rollout.Workflow, error) {
			opts, err := rollout.OptionsOf("joint", o, DefaultOptions)
			if err != nil {
				return nil, err
			}
			return New(opts, agents, env)
		},
		Agents: func() []rollout.AgentConfig {
			return []rollout.AgentConfig{
				{Name: "first", Model: "policy", Preset: "writing-summary"},
				{Name: "second", Model: "policy", Preset: "writing-expansion"},
			}
		},
		Estimators: []string{"magrpo"},
		OwnGroups:  true,
	})
}
