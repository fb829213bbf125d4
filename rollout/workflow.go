// workflow.go — the orchestra interface: episodes, calls, and the helpers
// a workflow package builds on (its registration: registry.go).
//
// What it is: an Episode (one trajectory of a team on one task), a Call (one
// agent invocation the episode waits for), and Workflow, which decides from
// the episode state which calls come next and applies their outputs. The
// sampler drives many episodes at once and batches their calls; a workflow
// only ever sees one episode.
//
// What it deliberately is not: a scheduler. A workflow never generates,
// never waits and never touches another episode, so Begin and Advance can
// run on worker goroutines while the torch thread generates for others.
package rollout

import (
	"fmt"
	"strings"

	"troupe/rollout/answer"
)

// Call is one agent invocation. The workflow fills the first block; the
// sampler renders, generates and parses; the workflow sets the rewards when
// the episode ends.
type Call struct {
	Agent     *Agent
	Turn      int        // 0-based step of the episode at which the agent acts
	Node      int        // state the call was made from (tree sampling); linear workflows: = Turn
	Candidate int        // index among the candidates sampled from Node; linear workflows: 0
	Data      PromptData // what the prompt templates see

	PromptText     string    // rendered chat (set before generation)
	PromptTokens   []int     // encoded PromptText
	ResponseTokens []int     // generated ids, stop token included
	LogProbs       []float32 // sampler log-probs of ResponseTokens
	Response       string    // decoded response, stop token left out
	Truncated      bool      // hit the agent's MaxNewTokens
	Parsed         Parsed    // the agent's parser on Response
	// LossMask, when a workflow sets it, has one entry per ResponseTokens
	// token: false keeps that token out of the loss (text the environment
	// spliced into a response, such as a tool's output). nil trains on all.
	LossMask []bool
	// Credits are the joint actions this completion takes part in (MAGRPO):
	// the call gives one row per credit, with its Joint id and reward. Empty
	// for other workflows: one row with TeamReward.
	Credits []JointCredit

	TeamReward  float64 // the team's reward credited to this row (set when the episode ends)
	LocalReward float64 // this row's own terms beyond the format penalty (AT-GRPO's r_local); 0 in math
}

// Episode is one trajectory: a team working on one task.
type Episode struct {
	Prompt int    // prompt group: index of the task in the rollout batch
	Traj   int    // trajectory id, unique in the rollout batch (= Prompt*n + Sample)
	Sample int    // index among the n trajectories of the prompt group
	Task   Task   // the task
	Seed   uint64 // per-episode seed for workflows that draw random numbers

	Calls   []*Call     // every call so far, in request order
	Context []TeamEntry // team context: outputs shown to later agents

	Done      bool               // the workflow finished the episode
	Reward    float64            // team reward
	Success   bool               // counts as solved
	Extracted string             // the answer that was scored
	Metrics   map[string]float64 // the environment's extra per-episode metrics (Score.Metrics); may be nil
	State     any                // the workflow's private state
}

// Linear returns a call for a workflow in which one agent acts per turn:
// Turn = Node = the number of calls so far, Candidate = 0.
func (ep *Episode) Linear(agent *Agent, data PromptData) *Call {
	t := len(ep.Calls)
	data.Step = t
	return &Call{Agent: agent, Turn: t, Node: t, Data: data}
}

// Remember appends a call's visible output (the text after </think>, or the
// whole text when a think block never closes) to the team context.
func (ep *Episode) Remember(c *Call) {
	text := c.Response
	if rest, ok := answer.AfterThink(text); ok {
		text = rest
	}
	ep.Context = append(ep.Context, TeamEntry{Agent: c.Agent.Name, Text: strings.TrimSpace(text)})
}

// Finish ends the episode with a score credited to every call as its team
// reward (Dr. MAS: every row of a trajectory shares the team return).
func (ep *Episode) Finish(s Score) {
	ep.Done, ep.Reward, ep.Success, ep.Extracted, ep.Metrics = true, s.Reward, s.Success, s.Extracted, s.Metrics
	for _, c := range ep.Calls {
		c.TeamReward = s.Reward
	}
}

// Workflow is an orchestra. Begin returns the first calls of a new episode;
// Advance receives the calls returned last time, completed, and returns the
// next ones. Returning no calls ends the episode, after calling ep.Finish.
// Implementations hold no per-episode state outside ep.State and must be
// safe for concurrent use on different episodes.
type Workflow interface {
	Name() string
	Agents() []*Agent
	Begin(ep *Episode) ([]*Call, error)
	Advance(ep *Episode, done []*Call) ([]*Call, error)
}

// EvalWorkflow is implemented by workflows whose evaluation differs from
// their training rollouts (tree sampling evaluates one candidate).
type EvalWorkflow interface {
	ForEval() Workflow
}

// AgentByName finds the agent that plays a role; key names the option
// (workflow.<key>.<role>) in the error.
func AgentByName(agents []*Agent, name, key string) (*Agent, error) {
	names := make([]string, len(agents))
	for i, a := range agents {
		if a.Name == name {
			return a, nil
		}
		names[i] = a.Name
	}
	return nil, fmt.Errorf("%s: no agent named %q; the agents are [%s]", key, name, strings.Join(names, ", "))
}

// RoleKeys prefixes each option that names an agent with its section
// (workflow.<section>.<option>), for WorkflowSpec.Roles.
func RoleKeys(section string, names map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range names {
		out["workflow."+section+"."+k] = v
	}
	return out
}

// ListRoles keys a list of agent names by their config paths
// (workflow.<section>.agents[i]), for WorkflowSpec.Roles.
func ListRoles(section string, agents []string) map[string]string {
	out := map[string]string{}
	for i, a := range agents {
		out[fmt.Sprintf("workflow.%s.agents[%d]", section, i)] = a
	}
	return out
}

// LinearEstimators are the estimators that need only (prompt group, agent)
// keys: what every workflow of one call per turn produces.
var LinearEstimators = []string{"grpo", "grpo-step", "drmas", "rloo"}

// OptionsOf returns a workflow's options value as its own type O, or the
// defaults when opts is nil (for WorkflowSpec.Build).
func OptionsOf[O any](workflow string, opts any, defaults func() O) (O, error) {
	switch v := opts.(type) {
	case O:
		return v, nil
	case nil:
		return defaults(), nil
	}
	var want O
	return want, fmt.Errorf("workflow %q: options are a %T, want %T", workflow, opts, want)
}
