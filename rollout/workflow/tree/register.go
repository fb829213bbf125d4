package tree

import (
	"errors"
	"strings"

	"troupe/rollout"
)

// Estimators are the advantage estimators whose group structure tree rows
// satisfy: atgrpo, and the grouping ablations on the same rows — grpo and
// rloo (prompt groups of trajectories), grpo-step (prompt groups of rows),
// drmas ((prompt, agent): the turn left out of the key).
var Estimators = append([]string{"atgrpo"}, rollout.LinearEstimators...)

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
		Estimators: Estimators,
	})
}

// Team is a two-role game that the tree workflow plays, registered as a
// workflow of its own (math-tool, code-test) by RegisterTeam. O is its
// options type, which has a Validate() error method naming its keys under
// workflow.<Key>.
type Team[O any] struct {
	Key      string                 // the YAML key of its options under workflow
	Defaults func() O               // the default options
	RoleKeys [2]string              // the two options that name an agent ("tool", "reasoner")
	Roles    func(O) [2]string      // the agents those options name, in RoleKeys' order
	Agents   [2]rollout.AgentConfig // the default team, on one model named "policy"
	// New builds the workflow: the tree workflow over the team's game.
	New func(opts O, agents []*rollout.Agent, env rollout.Scorer) (rollout.Workflow, error)
}

// RegisterTeam registers a team's workflow under name with the tree's
// estimators; a plug-in package calls it from init.
func RegisterTeam[O any](name string, t Team[O]) {
	rollout.RegisterWorkflow(name, rollout.WorkflowSpec{
		Key:      t.Key,
		Defaults: func() any { return t.Defaults() },
		Roles: func(o any) map[string]string {
			r := t.Roles(o.(O))
			prefix := "workflow." + t.Key + "."
			return map[string]string{prefix + t.RoleKeys[0]: r[0], prefix + t.RoleKeys[1]: r[1]}
		},
		Build: func(o any, agents []*rollout.Agent, env rollout.Scorer) (rollout.Workflow, error) {
			opts, err := rollout.OptionsOf(name, o, t.Defaults)
			if err != nil {
				return nil, err
			}
			w, err := t.New(opts, agents, env)
			if err != nil && t.Key != "tree" {
				// the tree's errors name its keys; this team's config holds
				// them under its own section (workflow.math_tool.interpreter)
				err = errors.New(strings.ReplaceAll(err.Error(), "workflow.tree.", "workflow."+t.Key+"."))
			}
			return w, err
		},
		Agents:     func() []rollout.AgentConfig { return []rollout.AgentConfig{t.Agents[0], t.Agents[1]} },
		Estimators: Estimators,
	})
}
