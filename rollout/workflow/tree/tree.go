// Package tree is AT-GRPO's tree sampling over a steppable environment
// (rollout.Stepper), registered as the workflow "tree" with its options
// under workflow.tree.
//
// Files: tree.go (the workflow and its options), program.go (agents that
// answer with a program, run in the sandbox), transcript.go (the
// observation of the games built on it), register.go (the registration:
// default team, estimators, roles; RegisterTeam, which registers a two-role
// game as a workflow of its own).
//
// Per episode (one environment instance), for turn t = 0 … max_turns−1 and
// each agent a in the configured order:
//
//	sample K candidates for a from the current state (Turn t, one Node,
//	Candidate 0 … K−1; generated in the same batch);
//	step each candidate's action on its own clone of the state;
//	credit each candidate its step reward: TeamReward = r (the agent's
//	reward_scale multiplies it, as for every workflow; AT-GRPO's α on the
//	team reward is advantage.team_weight, applied by the estimator), but
//	the step's Fixed part (the −2 for an action that cannot be read) as
//	the row's own LocalReward, unscaled, as the reference sets it;
//	continue from the best candidate's clone (highest reward, lowest index
//	on ties) — unless the agent is one whose actions are only simulated
//	(simulate: the tool agent of AT-GRPO's games, whose proposal is shown to
//	the planner but not executed); stop when the environment is done.
//
// The K candidates of one (environment, turn, agent) are exactly one
// AT-GRPO group. Rows keep the episode's Traj as their environment id.
//
// mode: no-tree samples one candidate per (turn, agent) (candidates: 1) and
// nothing branches: each of a task's batch.n environments runs on its own,
// and the estimator pools them turn by turn (atgrpo with key: prompt, or
// any linear estimator). This is PettingLLMs' default rollout mode
// (sample_mode no_tree). As there, a simulated agent's call also earns the
// step reward of the executed action that follows it in the same turn: the
// tool agent is credited the plan's outcome, which under a tree is not
// defined (K tool candidates, one executed plan).
//
// With workflow.tree.programs the listed agents (the games' tool agent under
// a <game>-tool-program preset) answer with a Python program, as in the
// paper: it runs in the sandbox and the action list it prints is the action
// stepped (program.go).
//
// Departures and options:
//  1. The reference's tool agent earns its simulated reward plus the
//     environment reward of the executed plan; here each agent's candidates
//     earn their own step's reward, so the K candidates of one group differ
//     (the plan's reward reaches the tool agent only through the team's
//     later turns).
//  2. Evaluation samples one candidate per agent and turn (K = 1): choosing
//     among candidates by reward would use the environment's answer key.
package tree

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"troupe/rollout"
)

// Options configures the tree-sampling workflow.
type Options struct {
	Agents     []string `yaml:"agents"`     // acting order within a turn
	Candidates int      `yaml:"candidates"` // K: candidates per (turn, agent)
	MaxTurns   int      `yaml:"max_turns"`  // turns at most
	Simulate   []string `yaml:"simulate"`   // agents whose actions are scored on a copy but not executed
	Mode       string   `yaml:"mode"`       // tree (or "") | no-tree
	// Programs are agents whose answer is a Python program (the
	// <game>-tool-program presets): it runs in the sandbox and the last
	// "Actions List: …" line it prints is the agent's action (program.go).
	Programs       []string `yaml:"programs"`
	Interpreter    string   `yaml:"interpreter"`     // absolute path of the Python 3 that runs them
	ProgramSeconds float64  `yaml:"program_seconds"` // wall-clock and CPU limit of one program
	// ProgramOutput is what a program's action is: "actions-list" (or "":
	// the last "Actions List: …" line printed, the games) or "last-line"
	// (the last line printed, a math answer).
	ProgramOutput string `yaml:"program_output"`
}

// Values of Options.ProgramOutput.
const (
	OutputActionsList = "actions-list"
	OutputLastLine    = "last-line"
)

// Values of Options.Mode.
const (
	ModeTree   = "tree"    // K candidates per (turn, agent), continue from the best
	ModeNoTree = "no-tree" // one candidate per (turn, agent); environments pooled by the estimator
)

// DefaultOptions is AT-GRPO's game setting with a tool and a plan agent.
func DefaultOptions() Options {
	return Options{Agents: []string{"tool", "plan"}, Candidates: 4, MaxTurns: 4, Simulate: []string{"tool"}, Mode: ModeTree,
		Interpreter: "/usr/bin/python3", ProgramSeconds: 10}
}

// PooledGroups reports whether the rows' groups must pool a task's
// environments (no tree): config asks atgrpo for key: prompt then.
func (o Options) PooledGroups() bool { return o.Mode == ModeNoTree }

// Validate checks ranges; errors name the key and the fix.
func (o Options) Validate() error {
	switch {
	case len(o.Agents) == 0:
		return fmt.Errorf("workflow.tree.agents: name the acting agents in turn order")
	case o.Candidates < 1 || o.Candidates > 64:
		return fmt.Errorf("workflow.tree.candidates: must be in [1, 64], got %d", o.Candidates)
	case o.MaxTurns < 1:
		return fmt.Errorf("workflow.tree.max_turns: must be >= 1, got %d", o.MaxTurns)
	case o.Mode != ModeTree && o.Mode != ModeNoTree && o.Mode != "":
		return fmt.Errorf("workflow.tree.mode: must be %s or %s, got %q", ModeTree, ModeNoTree, o.Mode)
	case len(o.Programs) > 0 && !filepath.IsAbs(o.Interpreter):
		return fmt.Errorf("workflow.tree.interpreter: must be the absolute path of a Python 3 interpreter (e.g. /usr/bin/python3), got %q", o.Interpreter)
	case len(o.Programs) > 0 && !(o.ProgramSeconds >= 1 && o.ProgramSeconds <= 600):
		return fmt.Errorf("workflow.tree.program_seconds: must be in [1, 600], got %g (the reference allows 20)", o.ProgramSeconds)
	case o.ProgramOutput != "" && o.ProgramOutput != OutputActionsList && o.ProgramOutput != OutputLastLine:
		return fmt.Errorf("workflow.tree.program_output: must be %s or %s, got %q", OutputActionsList, OutputLastLine, o.ProgramOutput)
	case o.Mode == ModeNoTree && o.Candidates != 1:
		return fmt.Errorf("workflow.tree.candidates: mode no-tree samples one candidate per turn and agent, got %d; set candidates: 1 and batch.n to the group size (the reference's K)", o.Candidates)
	}
	for i, a := range o.Agents {
		if slices.Index(o.Agents, a) != i {
			return fmt.Errorf("workflow.tree.agents: %q is listed twice", a)
		}
	}
	executed := 0
	for _, a := range o.Agents {
		if !slices.Contains(o.Simulate, a) {
			executed++
		}
	}
	for _, a := range o.Simulate {
		if !slices.Contains(o.Agents, a) {
			return fmt.Errorf("workflow.tree.simulate: %q is not one of workflow.tree.agents (%v)", a, o.Agents)
		}
	}
	for _, a := range o.Programs {
		if !slices.Contains(o.Agents, a) {
			return fmt.Errorf("workflow.tree.programs: %q is not one of workflow.tree.agents (%v)", a, o.Agents)
		}
	}
	if executed == 0 {
		return fmt.Errorf("workflow.tree.simulate: every agent is only simulated, so nothing would ever change the state; leave at least one agent out")
	}
	return nil
}

// Workflow is AT-GRPO's tree-sampling workflow.
type Workflow struct {
	opts     Options
	agents   []*rollout.Agent
	env      rollout.Stepper
	programs *programs // nil without workflow.tree.programs
}

type treeState struct {
	state   rollout.State
	turn    int
	agent   int     // index into agents of the agent acting now
	node    int     // states visited so far (Node ids)
	total   float64 // sum of the kept steps' rewards
	metrics map[string]float64
	// pending are this turn's chosen calls of simulated agents (no-tree):
	// each executed step after them in the turn adds its reward to theirs.
	pending []*rollout.Call
}

// New builds the workflow; env must be a Stepper.
func New(opts Options, agents []*rollout.Agent, env rollout.Scorer) (*Workflow, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	st, ok := env.(rollout.Stepper)
	if !ok {
		return nil, fmt.Errorf("workflow tree: the environment (%T) cannot be stepped; use a turn-based environment such as plan-path", env)
	}
	w := &Workflow{opts: opts, env: st}
	for i, name := range opts.Agents {
		a, err := rollout.AgentByName(agents, name, fmt.Sprintf("workflow.tree.agents[%d]", i))
		if err != nil {
			return nil, err
		}
		w.agents = append(w.agents, a)
	}
	if len(opts.Programs) > 0 {
		p, err := newPrograms(opts)
		if err != nil {
			return nil, err
		}
		w.programs = p
	}
	return w, nil
}

func (w *Workflow) Name() string             { return "tree" }
func (w *Workflow) Agents() []*rollout.Agent { return w.agents }

// ForEval returns the workflow with one candidate per (turn, agent).
func (w *Workflow) ForEval() rollout.Workflow {
	e := *w
	e.opts.Candidates = 1
	return &e
}

func (w *Workflow) calls(ep *rollout.Episode, st *treeState) []*rollout.Call {
	a := w.agents[st.agent]
	d := rollout.NewPromptData(ep.Task.Question, ep.Context, st.turn)
	d.Loop, d.MaxLoops = st.turn, w.opts.MaxTurns
	d.Extra = map[string]string{"observation": st.state.Observation()}
	out := make([]*rollout.Call, w.opts.Candidates)
	for k := range out {
		dk := d
		dk.Extra = map[string]string{"observation": d.Extra["observation"]}
		out[k] = &rollout.Call{Agent: a, Turn: st.turn, Node: st.node, Candidate: k, Data: dk}
	}
	return out
}

func (w *Workflow) Begin(ep *rollout.Episode) ([]*rollout.Call, error) {
	s, err := w.env.Reset(ep.Task)
	if err != nil {
		return nil, fmt.Errorf("tree: task %q: %w", ep.Task.ID, err)
	}
	st := &treeState{state: s, metrics: map[string]float64{}}
	ep.State = st
	return w.calls(ep, st), nil
}

func (w *Workflow) Advance(ep *rollout.Episode, done []*rollout.Call) ([]*rollout.Call, error) {
	st, ok := ep.State.(*treeState)
	if !ok || len(done) != w.opts.Candidates {
		return nil, fmt.Errorf("tree: episode %d: expected %d completed calls and the workflow's state, got %d", ep.Traj, w.opts.Candidates, len(done))
	}
	best, bestReward := -1, math.Inf(-1)
	var bestState rollout.State
	var bestStep rollout.StepResult
	actions, runs := w.actions(done)
	for k, c := range done {
		clone := st.state.Clone()
		r := w.env.Step(clone, c.Agent.Name, actions[k])
		if math.IsNaN(r.Reward) || math.IsInf(r.Reward, 0) {
			return nil, fmt.Errorf("tree: episode %d: %s's step reward is %g", ep.Traj, c.Agent.Name, r.Reward)
		}
		c.TeamReward, c.LocalReward = r.Reward-r.Fixed, r.Fixed
		if r.Reward > bestReward {
			best, bestReward, bestState, bestStep = k, r.Reward, clone, r
		}
	}
	chosen := done[best]
	ep.Remember(chosen)
	if runs != nil {
		ep.Context = append(ep.Context, rollout.TeamEntry{Agent: chosen.Agent.Name + "'s program", Text: runs[best].report})
		for _, r := range runs {
			st.metrics["program_"+strings.ReplaceAll(r.outcome.String(), " ", "_")]++
		}
	}
	noTree := w.opts.Mode == ModeNoTree
	if slices.Contains(w.opts.Simulate, chosen.Agent.Name) {
		if noTree {
			st.pending = append(st.pending, chosen)
		}
		if bestStep.Message != "" {
			ep.Context = append(ep.Context, rollout.TeamEntry{Agent: "environment", Text: "if executed: " + bestStep.Message})
		}
	} else {
		st.state = bestState
		envReward := bestReward - bestStep.Fixed // what a teammate is credited
		st.total += envReward
		for _, p := range st.pending {
			p.TeamReward += envReward
		}
		for k, v := range bestStep.Metrics {
			st.metrics[k] += v
		}
		if bestStep.Message != "" {
			ep.Context = append(ep.Context, rollout.TeamEntry{Agent: "environment", Text: bestStep.Message})
		}
	}
	st.node++
	st.agent++
	if st.agent == len(w.agents) {
		st.agent = 0
		st.turn++
		st.pending = nil
	}
	if st.state.Done() || st.turn == w.opts.MaxTurns {
		return nil, w.end(ep, st)
	}
	return w.calls(ep, st), nil
}

// actions returns each call's action: its parsed value, or for a program
// agent what its program printed (the K programs run at once).
func (w *Workflow) actions(done []*rollout.Call) ([]string, []programRun) {
	out := make([]string, len(done))
	if w.programs == nil || !slices.Contains(w.opts.Programs, done[0].Agent.Name) {
		for k, c := range done {
			out[k] = c.Parsed.Value
		}
		return out, nil
	}
	runs := make([]programRun, len(done))
	var wg sync.WaitGroup
	for k, c := range done {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code := ""
			if c.Parsed.Valid {
				code = c.Parsed.Value
			}
			runs[k] = w.programs.run(code)
			out[k] = runs[k].action
		}()
	}
	wg.Wait()
	return out, runs
}

// end finishes the episode without touching the calls' rewards (each
// candidate keeps its own step reward).
func (w *Workflow) end(ep *rollout.Episode, st *treeState) error {
	ep.Done, ep.Reward, ep.Success = true, st.total, st.state.Success()
	turns := st.turn
	if st.agent > 0 { // ended within a turn (the environment finished)
		turns++
	}
	ep.Metrics = map[string]float64{"game_turns": float64(turns)}
	for k, v := range st.metrics {
		ep.Metrics[k] = v
	}
	return nil
}
