// single.go — one agent answers once: the single-agent GRPO baseline, and
// the evaluation of a plain model with the same prompts and reward.
package rollout

import "fmt"

// SingleOptions configures single.
type SingleOptions struct {
	Agent string `yaml:"agent"` // the answering agent; "" = the only agent configured
}

// Single is the one-agent, one-turn workflow.
type Single struct {
	agent  *Agent
	scorer Scorer
}

// NewSingle builds the workflow.
func NewSingle(opts SingleOptions, agents []*Agent, scorer Scorer) (*Single, error) {
	if opts.Agent == "" {
		if len(agents) != 1 {
			return nil, fmt.Errorf("workflow.single.agent: %d agents are configured; name the one that answers", len(agents))
		}
		return &Single{agent: agents[0], scorer: scorer}, nil
	}
	a, err := agentByName(agents, opts.Agent, "workflow.single.agent")
	if err != nil {
		return nil, err
	}
	return &Single{agent: a, scorer: scorer}, nil
}

func (w *Single) Name() string     { return "single" }
func (w *Single) Agents() []*Agent { return []*Agent{w.agent} }

func (w *Single) Begin(ep *Episode) ([]*Call, error) {
	return []*Call{ep.Linear(w.agent, NewPromptData(ep.Task.Question, nil, 0))}, nil
}

func (w *Single) Advance(ep *Episode, done []*Call) ([]*Call, error) {
	if len(done) != 1 {
		return nil, fmt.Errorf("single: episode %d: expected one completed call, got %d", ep.Traj, len(done))
	}
	ep.Remember(done[0])
	ep.Finish(w.scorer.Score(ep.Task, done[0].Response))
	return nil, nil
}
