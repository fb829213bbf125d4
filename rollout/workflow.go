// workflow.go — the orchestra interface: episodes, calls, and the registry
// of built-in workflows.
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
	"sort"
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

// WorkflowOptions holds the options of every built-in workflow; only the
// selected workflow's are used.
type WorkflowOptions struct {
	MathRefine MathRefineOptions `yaml:"math_refine"`
	Single     SingleOptions     `yaml:"single"`
	Tree       TreeOptions       `yaml:"tree"`
	Joint      JointOptions      `yaml:"joint"`
}

// DefaultWorkflowOptions returns the reference defaults.
func DefaultWorkflowOptions() WorkflowOptions {
	return WorkflowOptions{MathRefine: DefaultMathRefineOptions(), Single: SingleOptions{}, Tree: DefaultTreeOptions(), Joint: DefaultJointOptions()}
}

// Validate checks the options of the named workflow (the others are not
// used and not checked).
func (o WorkflowOptions) Validate(name string) error {
	switch name {
	case "math-refine":
		return o.MathRefine.Validate()
	case "single":
		return nil
	case "tree":
		return o.Tree.Validate()
	case "joint":
		return o.Joint.Validate()
	}
	if _, ok := workflows[name]; !ok {
		return fmt.Errorf("workflow %q: unknown; use one of %s", name, strings.Join(WorkflowNames(), ", "))
	}
	return nil
}

// WorkflowSpec is what a workflow package registers: how to build the
// workflow, the team it is meant for, and the estimators its rows can feed.
type WorkflowSpec struct {
	// Build makes the workflow. opts is the workflow's options value (the
	// built-ins take WorkflowOptions; a plug-in its own type); env is the
	// environment of the split being run: a Scorer, and whatever more the
	// workflow asserts of it (search needs retrieval).
	Build func(opts any, agents []*Agent, env Scorer) (Workflow, error)
	// Agents returns the default team, all on one model named "policy".
	Agents func() []AgentConfig
	// Estimators lists the advantage estimators whose group structure the
	// workflow's rows satisfy; config refuses any other.
	Estimators []string
	// Oracle, when set, writes the demonstration `train sft` trains on for
	// one call: agent is the acting agent's name, prompt its rendered chat,
	// right whether this demonstration should be correct (drawn with
	// --p-correct). Workflows without one use their environment's (see
	// OracleFor).
	Oracle func(opts any, agent string, task Task, prompt string, right bool) string
	// Key is a plug-in's options section under workflow (e.g. "search");
	// empty for the built-ins, whose options are WorkflowOptions.
	Key string
	// Defaults returns a plug-in's default options (a struct value whose
	// YAML fields are the section's keys); nil for the built-ins.
	Defaults func() any
	// Validate checks the options (the built-ins: WorkflowOptions.Validate).
	Validate func(opts any) error
	// Roles maps each option that names an agent (its config path) to the
	// agent it names, so config can check they exist.
	Roles func(opts any) map[string]string
	// OwnGroups marks a workflow that samples its comparison group itself
	// (MAGRPO's G completions): batch.n must then be 1.
	OwnGroups bool
}

// PluginWorkflowKeys maps the options key of every plug-in workflow to its
// name.
func PluginWorkflowKeys() map[string]string {
	out := map[string]string{}
	for n, s := range workflows {
		if s.Key != "" {
			out[s.Key] = n
		}
	}
	return out
}

// WorkflowOf returns a registered workflow's spec.
func WorkflowOf(name string) (WorkflowSpec, error) {
	s, ok := workflows[name]
	if !ok {
		return WorkflowSpec{}, fmt.Errorf("workflow.name: unknown workflow %q; valid: %s", name, strings.Join(WorkflowNames(), ", "))
	}
	return s, nil
}

func rolesOf(section string, names map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range names {
		out["workflow."+section+"."+k] = v
	}
	return out
}

func listRoles(section string, agents []string) map[string]string {
	out := map[string]string{}
	for i, a := range agents {
		out[fmt.Sprintf("workflow.%s.agents[%d]", section, i)] = a
	}
	return out
}

// linearEstimators are those that need only (prompt group, agent) keys:
// what every workflow of one call per turn produces.
var linearEstimators = []string{"grpo", "grpo-step", "drmas", "rloo"}

var workflows = map[string]WorkflowSpec{
	"math-refine": {
		Build: func(o any, a []*Agent, s Scorer) (Workflow, error) {
			opts, err := builtinOptions(o, "math-refine")
			if err != nil {
				return nil, err
			}
			return NewMathRefine(opts.MathRefine, a, s)
		},
		Agents: func() []AgentConfig {
			return []AgentConfig{
				{Name: "solver", Model: "policy", Preset: "math-solver", FormatPenalty: 0.1},
				{Name: "verifier", Model: "policy", Preset: "math-verifier", FormatPenalty: 0.1},
			}
		},
		Estimators: linearEstimators,
		Roles: func(o any) map[string]string {
			m := o.(WorkflowOptions).MathRefine
			return rolesOf("math_refine", map[string]string{"solver": m.Solver, "verifier": m.Verifier})
		},
	},
	"single": {
		Build: func(o any, a []*Agent, s Scorer) (Workflow, error) {
			opts, err := builtinOptions(o, "single")
			if err != nil {
				return nil, err
			}
			return NewSingle(opts.Single, a, s)
		},
		Agents: func() []AgentConfig {
			return []AgentConfig{{Name: "solver", Model: "policy", Preset: "math-single", FormatPenalty: 0.1}}
		},
		Estimators: linearEstimators,
	},
	"tree": {
		Build: func(o any, a []*Agent, s Scorer) (Workflow, error) {
			opts, err := builtinOptions(o, "tree")
			if err != nil {
				return nil, err
			}
			return NewTree(opts.Tree, a, s)
		},
		Agents: func() []AgentConfig {
			return []AgentConfig{
				{Name: "tool", Model: "policy", Preset: "plan-path-tool", FormatPenalty: 0.1},
				{Name: "plan", Model: "policy", Preset: "plan-path-plan", FormatPenalty: 0.1, RewardScale: 2},
			}
		},
		Estimators: []string{"atgrpo"},
		Roles:      func(o any) map[string]string { return listRoles("tree", o.(WorkflowOptions).Tree.Agents) },
	},
	"joint": {
		Build: func(o any, a []*Agent, s Scorer) (Workflow, error) {
			opts, err := builtinOptions(o, "joint")
			if err != nil {
				return nil, err
			}
			return NewJoint(opts.Joint, a, s)
		},
		Agents: func() []AgentConfig {
			return []AgentConfig{
				{Name: "first", Model: "policy", Preset: "writing-summary"},
				{Name: "second", Model: "policy", Preset: "writing-expansion"},
			}
		},
		Estimators: []string{"magrpo"},
		Roles:      func(o any) map[string]string { return listRoles("joint", o.(WorkflowOptions).Joint.Agents) },
		OwnGroups:  true,
	},
}

func builtinOptions(o any, name string) (WorkflowOptions, error) {
	switch v := o.(type) {
	case WorkflowOptions:
		return v, nil
	case nil:
		return DefaultWorkflowOptions(), nil
	}
	return WorkflowOptions{}, fmt.Errorf("workflow %q: options are a %T, want rollout.WorkflowOptions", name, o)
}

// RegisterWorkflow adds a workflow; a plug-in package calls it from init.
// Registering a name twice is a programming error and panics.
func RegisterWorkflow(name string, spec WorkflowSpec) {
	if _, dup := workflows[name]; dup {
		panic(fmt.Sprintf("rollout: workflow %q registered twice", name))
	}
	if spec.Build == nil || spec.Agents == nil || (spec.Key != "") != (spec.Defaults != nil) {
		panic(fmt.Sprintf("rollout: workflow %q: Build and Agents must be set, and Defaults with Key", name))
	}
	workflows[name] = spec
}

// WorkflowEstimators lists the estimators a workflow's rows can feed.
func WorkflowEstimators(name string) ([]string, error) {
	e, ok := workflows[name]
	if !ok {
		return nil, fmt.Errorf("workflow %q: unknown; use one of %s", name, strings.Join(WorkflowNames(), ", "))
	}
	return append([]string(nil), e.Estimators...), nil
}

// WorkflowNames lists the built-in workflows.
func WorkflowNames() []string {
	names := make([]string, 0, len(workflows))
	for n := range workflows {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// NewWorkflow builds a registered workflow by name.
// opts is the workflow's options (WorkflowOptions for the built-ins); env is
// the environment.
func NewWorkflow(name string, opts any, agents []*Agent, env Scorer) (Workflow, error) {
	e, ok := workflows[name]
	if !ok {
		return nil, fmt.Errorf("workflow %q: unknown; use one of %s", name, strings.Join(WorkflowNames(), ", "))
	}
	if env == nil {
		return nil, fmt.Errorf("workflow %q: no environment; pass the environment", name)
	}
	seen := map[string]bool{}
	for i, a := range agents {
		if seen[a.Name] {
			return nil, fmt.Errorf("agents[%d].name: %q is used twice; agent names must be unique", i, a.Name)
		}
		seen[a.Name] = true
	}
	return e.Build(opts, agents, env)
}

// DefaultAgentConfigs returns the agents a built-in workflow is meant for,
// all on one model named "policy" (rename it to share or split models).
func DefaultAgentConfigs(name string) ([]AgentConfig, error) {
	e, ok := workflows[name]
	if !ok {
		return nil, fmt.Errorf("workflow %q: unknown; use one of %s", name, strings.Join(WorkflowNames(), ", "))
	}
	return e.Agents(), nil
}

// agentByName finds the agent that plays a role; key names the option.
func agentByName(agents []*Agent, name, key string) (*Agent, error) {
	names := make([]string, len(agents))
	for i, a := range agents {
		if a.Name == name {
			return a, nil
		}
		names[i] = a.Name
	}
	return nil, fmt.Errorf("%s: no agent named %q; the agents are [%s]", key, name, strings.Join(names, ", "))
}
