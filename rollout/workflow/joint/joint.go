// Package joint is MAGRPO's joint actions: N agents answer one task
// together, several completions each, combined into joint actions that
// share one reward, over T turns with the environment's feedback in
// between. It is registered as the workflow "joint" with its options under
// workflow.joint, and plays in environments that score joint actions
// (rollout.JointScorer).
//
// Files: joint.go (the workflow and its options), protocol.go (the
// prompt-only baselines: parallel, sequential, discussion), register.go
// (the registration: default team, estimators, roles).
//
// Per episode (one task), the tree of algorithms.md §5:
//
//	node 0 (turn 0): every agent samples G completions of its own prompt,
//	all agents in the same round;
//	joint actions: aligned — the g-th completion of every agent (G);
//	cross — every combination (G^N); ids 1, 2, … per episode;
//	each joint action gets the environment's joint reward (JointScorer) and,
//	below the last turn, opens a child node with the same id where every
//	agent samples G completions again. Its prompt carries, in .Extra,
//	"previous" (the agent's own outputs on the path to the node),
//	"teammates" (the other agents' outputs there) and "feedback" (the
//	environment's feedback on each joint action of the path), as
//	CoMLRL's external transitions carry the history of each branch;
//	early termination (termination_threshold): a node whose joint rewards
//	average above the threshold opens no children, its joint actions are
//	leaves (CoMLRL's termination_threshold, comlrl/trainers/reinforce/magrpo.py).
//
// Rows: one per (joint action, agent) — Node, Joint, Candidate and the joint
// reward as TeamReward. In cross mode a completion is in G^(N−1) joint
// actions and so gives that many rows; the estimator (advantage.MAGRPO)
// keeps one for the update. Returns with γ are the estimator's.
//
// Departures and options:
//  1. Every agent of a joint action must be credited the same reward, so
//     the agents of this workflow take no format penalty and no reward
//     scale (refused at construction); format validity is still reported.
//  2. Evaluation samples one completion per agent and turn (G = 1): one
//     joint action per turn, the episode's success that of the last one,
//     and no early termination (the reference's evaluation runs every
//     turn). In training an episode succeeds when any of the tree's leaves
//     does (pass@G of the leaves).
//  3. The next turn's prompt carries the outputs of every earlier turn of
//     the path once, not the earlier prompts: the reference repeats each
//     earlier prompt in full (which repeats the task), and shows an agent
//     only its own earlier outputs; troupe shows the teammates' too.
package joint

import (
	"fmt"
	"math"
	"strings"

	"troupe/rollout"
)

// Options configures the joint-action workflow.
type Options struct {
	Agents  []string `yaml:"agents"`  // the agents, in the order the environment reads their outputs
	Samples int      `yaml:"samples"` // G: completions per agent at each node
	Turns   int      `yaml:"turns"`   // T: turns (1 = single-turn)
	Mode    string   `yaml:"mode"`    // aligned | cross
	// TerminationThreshold ends a branch early: a node whose joint rewards
	// average above it opens no children. nil (unset): every branch runs
	// every turn. CoMLRL's −0.2 on its coding reward shifted by −4 is 3.8
	// here.
	TerminationThreshold *float64 `yaml:"termination_threshold"`
	// Protocol is team (MAGRPO's joint actions) or one of the prompt-only
	// baselines parallel, sequential, discussion (protocol.go).
	Protocol string `yaml:"protocol"`
}

// Joint modes.
const (
	Aligned = "aligned"
	Cross   = "cross"
)

// DefaultOptions is CoMLRL's two-agent single-turn setting.
func DefaultOptions() Options {
	return Options{Agents: []string{"first", "second"}, Samples: 4, Turns: 1, Mode: Aligned, Protocol: Team}
}

// Validate checks ranges; errors name the key and the fix.
func (o Options) Validate() error {
	switch {
	case len(o.Agents) < 1:
		return fmt.Errorf("workflow.joint.agents: name the agents in the environment's order")
	case o.Samples < 1 || o.Samples > 64:
		return fmt.Errorf("workflow.joint.samples: must be in [1, 64], got %d", o.Samples)
	case o.Turns < 1 || o.Turns > 4:
		return fmt.Errorf("workflow.joint.turns: must be in [1, 4] (the tree grows as samples^turns), got %d", o.Turns)
	case o.Mode != Aligned && o.Mode != Cross:
		return fmt.Errorf("workflow.joint.mode: must be %q or %q, got %q", Aligned, Cross, o.Mode)
	case o.TerminationThreshold != nil && math.IsNaN(*o.TerminationThreshold):
		return fmt.Errorf("workflow.joint.termination_threshold: must be a number, got NaN; leave it unset to run every turn")
	}
	if err := o.validateProtocol(); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, a := range o.Agents {
		if seen[a] {
			return fmt.Errorf("workflow.joint.agents: %q is listed twice", a)
		}
		seen[a] = true
	}
	return nil
}

// JointMode is the mode the rows' joint actions are formed in (the MAGRPO
// estimator must combine them the same way).
func (o Options) JointMode() string { return o.Mode }

// Workflow is the joint-action workflow.
type Workflow struct {
	opts   Options
	agents []*rollout.Agent
	env    rollout.JointScorer
}

// jointNode is a node waiting for its completions.
type jointNode struct {
	id       int
	turn     int
	outputs  [][]string // outputs[t][i]: agent i's output at turn t of the path here
	feedback []string   // feedback of the joint actions on the path here, oldest first
}

type jointState struct {
	next       int                   // the next joint action id
	pending    map[int]*jointNode    // nodes whose calls are out
	terms      map[string][2]float64 // metric name → (sum, count) over joint actions
	success    bool                  // some leaf joint action succeeded
	terminated int                   // nodes that ended their branch early
	reward     float64               // sum of the joint rewards
	actions    int                   // joint actions scored
}

// New builds the workflow; env must score joint actions.
func New(opts Options, agents []*rollout.Agent, env rollout.Scorer) (*Workflow, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	js, ok := env.(rollout.JointScorer)
	if !ok {
		return nil, fmt.Errorf("workflow joint: the environment (%T) does not score joint actions; use a cooperative environment such as writing or coding", env)
	}
	if opts.Protocol == "" {
		opts.Protocol = Team
	}
	w := &Workflow{opts: opts, env: js}
	for i, name := range opts.Agents {
		a, err := rollout.AgentByName(agents, name, fmt.Sprintf("workflow.joint.agents[%d]", i))
		if err != nil {
			return nil, err
		}
		if a.FormatPenalty != 0 || a.RewardScale != 1 || a.RewardOffset != 0 {
			return nil, fmt.Errorf("workflow.joint.agents[%d]: agent %q has format_penalty %g, reward_scale %g and reward_offset %g; MAGRPO credits every agent of a joint action the same joint reward, so set format_penalty: 0 and leave reward_scale and reward_offset unset", i, name, a.FormatPenalty, a.RewardScale, a.RewardOffset)
		}
		w.agents = append(w.agents, a)
	}
	return w, nil
}

func (w *Workflow) Name() string             { return "joint" }
func (w *Workflow) Agents() []*rollout.Agent { return w.agents }

// ForEval returns the workflow with one completion per agent and node.
func (w *Workflow) ForEval() rollout.Workflow {
	e := *w
	e.opts.Samples = 1
	e.opts.TerminationThreshold = nil
	return &e
}

func (w *Workflow) calls(ep *rollout.Episode, n *jointNode) []*rollout.Call {
	var out []*rollout.Call
	for i, a := range w.agents {
		d := rollout.NewPromptData(ep.Task.Question, nil, n.turn)
		d.Loop, d.MaxLoops = n.turn, w.opts.Turns
		d.Extra = map[string]string{"feedback": history(n.feedback, nil)}
		var own []string
		var mates []rollout.TeamEntry
		for _, outs := range n.outputs {
			own = append(own, outs[i])
			for k, o := range outs {
				if k != i {
					mates = append(mates, rollout.TeamEntry{Agent: w.agents[k].Name, Text: o})
				}
			}
		}
		d.Extra["previous"] = history(own, nil)
		d.Extra["teammates"] = history(nil, mates)
		d.Teammates = mates
		for g := 0; g < w.opts.Samples; g++ {
			out = append(out, &rollout.Call{Agent: a, Turn: n.turn, Node: n.id, Candidate: g, Data: d})
		}
	}
	return out
}

// history lays out one item per earlier turn: the text alone after one
// turn, "Turn t:" headings after several; teammates' entries name the
// agent. "" when there is nothing.
func history(texts []string, mates []rollout.TeamEntry) string {
	if len(mates) > 0 {
		per := map[string]int{}
		for _, m := range mates {
			per[m.Agent]++
		}
		seen := map[string]int{}
		parts := make([]string, len(mates))
		for i, m := range mates {
			seen[m.Agent]++
			if per[m.Agent] > 1 {
				parts[i] = fmt.Sprintf("%s, turn %d:\n%s", m.Agent, seen[m.Agent], m.Text)
			} else {
				parts[i] = fmt.Sprintf("%s:\n%s", m.Agent, m.Text)
			}
		}
		return strings.Join(parts, "\n\n")
	}
	if len(texts) == 1 {
		return texts[0]
	}
	parts := make([]string, len(texts))
	for i, t := range texts {
		parts[i] = fmt.Sprintf("Turn %d:\n%s", i+1, t)
	}
	return strings.Join(parts, "\n\n")
}

func (w *Workflow) Begin(ep *rollout.Episode) ([]*rollout.Call, error) {
	if w.opts.Protocol != Team {
		return w.beginBaseline(ep)
	}
	st := &jointState{next: 1, pending: map[int]*jointNode{}, terms: map[string][2]float64{}}
	ep.State = st
	root := &jointNode{id: 0}
	st.pending[0] = root
	return w.calls(ep, root), nil
}

// Advance receives the completions of the nodes opened last time (the
// sampler returns the calls of one Advance together) and scores their joint
// actions, node by node in id order.
func (w *Workflow) Advance(ep *rollout.Episode, done []*rollout.Call) ([]*rollout.Call, error) {
	if w.opts.Protocol != Team {
		return w.advanceBaseline(ep, done)
	}
	st, ok := ep.State.(*jointState)
	per := len(w.agents) * w.opts.Samples
	if !ok || len(done) == 0 || len(done)%per != 0 {
		return nil, fmt.Errorf("joint: episode %d: expected completed calls in multiples of %d and the workflow's state, got %d", ep.Traj, per, len(done))
	}
	var next []*rollout.Call
	for start := 0; start < len(done); start += per {
		calls, err := w.node(ep, st, done[start:start+per])
		if err != nil {
			return nil, err
		}
		next = append(next, calls...)
	}
	if len(st.pending) == 0 && len(next) == 0 {
		w.end(ep, st)
	}
	return next, nil
}

// node scores the joint actions of one node's completions (calls returns
// them agent by agent, G each) and opens its children.
func (w *Workflow) node(ep *rollout.Episode, st *jointState, done []*rollout.Call) ([]*rollout.Call, error) {
	node := st.pending[done[0].Node]
	if node == nil {
		return nil, fmt.Errorf("joint: episode %d: completions for unknown node %d", ep.Traj, done[0].Node)
	}
	delete(st.pending, node.id)
	byAgent := make([][]*rollout.Call, len(w.agents)) // [agent][g]
	for i, a := range w.agents {
		byAgent[i] = done[i*w.opts.Samples : (i+1)*w.opts.Samples]
		for g, c := range byAgent[i] {
			if c.Agent != a || c.Candidate != g || c.Node != node.id {
				return nil, fmt.Errorf("joint: episode %d: call %d of node %d is %s's candidate %d at node %d, out of order", ep.Traj, i*w.opts.Samples+g, node.id, c.Agent.Name, c.Candidate, c.Node)
			}
		}
	}
	type scoredAction struct {
		id      int
		outputs []string
		res     rollout.JointResult
	}
	var actions []scoredAction
	combos := w.combinations()
	mean := 0.0
	for _, combo := range combos {
		outputs := make([]string, len(w.agents))
		for i, g := range combo {
			outputs[i] = byAgent[i][g].Response
		}
		res := w.env.JointScore(ep.Task, node.turn, outputs)
		id := st.next
		st.next++
		for i, g := range combo {
			c := byAgent[i][g]
			c.Credits = append(c.Credits, rollout.JointCredit{Joint: id, Reward: res.Reward})
		}
		st.reward += res.Reward
		st.actions++
		for k, v := range res.Terms {
			t := st.terms[rollout.TermPrefix+k]
			st.terms[rollout.TermPrefix+k] = [2]float64{t[0] + v, t[1] + 1}
		}
		for k, v := range res.Stats {
			t := st.terms[k]
			st.terms[k] = [2]float64{t[0] + v, t[1] + 1}
		}
		actions = append(actions, scoredAction{id, outputs, res})
		mean += res.Reward / float64(len(combos))
	}
	leaves := node.turn == w.opts.Turns-1
	if th := w.opts.TerminationThreshold; th != nil && !leaves && mean > *th {
		leaves = true
		st.terminated++
	}
	var next []*rollout.Call
	for _, a := range actions {
		if leaves {
			st.success = st.success || a.res.Success
			continue
		}
		child := &jointNode{id: a.id, turn: node.turn + 1,
			outputs:  append(append([][]string(nil), node.outputs...), a.outputs),
			feedback: append(append([]string(nil), node.feedback...), a.res.Feedback)}
		st.pending[a.id] = child
		next = append(next, w.calls(ep, child)...)
	}
	return next, nil
}

// combinations lists the joint actions of one node as completion indices
// per agent.
func (w *Workflow) combinations() [][]int {
	G, N := w.opts.Samples, len(w.agents)
	if w.opts.Mode == Aligned {
		out := make([][]int, G)
		for g := range out {
			out[g] = make([]int, N)
			for i := range out[g] {
				out[g][i] = g
			}
		}
		return out
	}
	out := [][]int{{}}
	for i := 0; i < N; i++ {
		var grown [][]int
		for _, prefix := range out {
			for g := 0; g < G; g++ {
				grown = append(grown, append(append([]int(nil), prefix...), g))
			}
		}
		out = grown
	}
	return out
}

func (w *Workflow) end(ep *rollout.Episode, st *jointState) {
	ep.Done, ep.Success = true, st.success
	ep.Reward = st.reward / float64(st.actions)
	ep.Metrics = map[string]float64{"joint_reward": ep.Reward, "terminated_nodes": float64(st.terminated)}
	for k, t := range st.terms {
		ep.Metrics[k] = t[0] / t[1]
	}
}
