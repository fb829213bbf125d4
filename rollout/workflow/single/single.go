// Package single is one agent answering once: the single-agent GRPO
// baseline, and the evaluation of a plain model with the same prompts and
// reward. It is registered as the workflow "single" with its options under
// workflow.single.
//
// Files: single.go (the workflow, its options and its registration).
package single

import (
	"fmt"

	"troupe/rollout"
)

// Options configures single.
type Options struct {
	Agent string `yaml:"agent"` // the answering agent; "" = the only agent configured
}

// DefaultOptions answers with the only agent configured.
func DefaultOptions() Options { return Options{} }

// Validate accepts any agent name; New checks that the agent exists.
func (o Options) Validate() error { return nil }

// Workflow is the one-agent, one-turn workflow.
type Workflow struct {
	agent  *rollout.Agent
	scorer rollout.Scorer
}

// New builds the workflow.
func New(opts Options, agents []*rollout.Agent, scorer rollout.Scorer) (*Workflow, error) {
	if opts.Agent == "" {
		if len(agents) != 1 {
			return nil, fmt.Errorf("workflow.single.agent: %d agents are configured; name the one that answers", len(agents))
		}
		return &Workflow{agent: agents[0], scorer: scorer}, nil
	}
	a, err := rollout.AgentByName(agents, opts.Agent, "workflow.single.agent")
	if err != nil {
		return nil, err
	}
	return &Workflow{agent: a, scorer: scorer}, nil
}

func (w *Workflow) Name() string             { return "single" }
func (w *Workflow) Agents() []*rollout.Agent { return []*rollout.Agent{w.agent} }

func (w *Workflow) Begin(ep *rollout.Episode) ([]*rollout.Call, error) {
	return []*rollout.Call{ep.Linear(w.agent, rollout.NewPromptData(ep.Task.Question, nil, 0))}, nil
}

func (w *Workflow) Advance(ep *rollout.Episode, done []*rollout.Call) ([]*rollout.Call, error) {
	if len(done) != 1 {
		return nil, fmt.Errorf("single: episode %d: expected one completed call, got %d", ep.Traj, len(done))
	}
	ep.Remember(done[0])
	ep.Finish(w.scorer.Score(ep.Task, done[0].Response))
	return nil, nil
}

func init() {
	rollout.RegisterWorkflow("single", rollout.WorkflowSpec{
		Key:      "single",
		Defaults: func() any { return DefaultOptions() },
		Build: func(o any, agents []*rollout.Agent, env rollout.Scorer) (rollout.Workflow, error) {
			opts, err := rollout.OptionsOf("single", o, DefaultOptions)
			if err != nil {
				return nil, err
			}
			return New(opts, agents, env)
		},
		Agents: func() []rollout.AgentConfig {
			return []rollout.AgentConfig{{Name: "solver", Model: "policy", Preset: "math-single", FormatPenalty: 0.1}}
		},
		Estimators: rollout.LinearEstimators,
	})
}
