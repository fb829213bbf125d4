// registry.go — the plug-in registries: how an environment or a workflow
// package makes itself available to config, train and init without them
// naming it.
//
// An environment package calls RegisterEnvironment from init with its
// options' YAML key and functions over its options value (the type the
// config's env.<key> section decodes into). config looks the section up by
// that key, validates it with Validate and Files, package run builds the
// splits with Build, `train init --text NAME` learns tokenizer merges
// from Text, and `train sft` writes demonstrations with Oracle. Workflows
// register the same way (RegisterWorkflow, workflow.go) under workflow.<key>.
package rollout

import (
	"fmt"
	"sort"
	"strings"

	"troupe/internal/suggest"
)

// EnvironmentSpec is what an environment package registers.
type EnvironmentSpec struct {
	// Key is the YAML key of its options section under env (e.g. "plan_path").
	Key string
	// Defaults returns the default options: a struct value whose YAML
	// fields are the section's keys (config decodes env.<key> over it).
	Defaults func() any
	// Validate checks the options; errors name the key (env.<key>.…).
	// nil: the options' own Validate() error method.
	Validate func(opts any) error
	// Files lists the option paths that must exist on disk (config key →
	// path; empty paths are skipped). nil: the options' own
	// Files() map[string]string method, if they have one.
	Files func(opts any) map[string]string
	// Build makes the train and test splits; test is nil when there is none.
	Build func(opts any) (train, test Environment, err error)
	// Text is what `train init --text NAME` learns tokenizer merges from:
	// prompts and a few hundred tasks and demonstrations. May be nil.
	Text func() ([]string, error)
	// Workflows names the workflows that can play in it; config refuses
	// any other.
	Workflows []string
	// Oracle, when set, writes `train sft`'s demonstrations in this
	// environment for workflows without their own (see OracleFor); an
	// environment that implements Demonstrator needs none. May be nil.
	Oracle Oracle
}

var environments = registry[EnvironmentSpec]{noun: "environment", section: "env", key: func(s EnvironmentSpec) string { return s.Key }}

// RegisterEnvironment adds an environment; registering a name or an options
// key twice is a programming error and panics.
func RegisterEnvironment(name string, spec EnvironmentSpec) {
	if spec.Key == "" || spec.Defaults == nil || spec.Build == nil {
		panic(fmt.Sprintf("rollout: environment %q: Key, Defaults and Build must be set", name))
	}
	spec.Validate = validateOf("environment", name, spec.Validate, spec.Defaults)
	if _, ok := spec.Defaults().(filer); ok && spec.Files == nil {
		spec.Files = func(o any) map[string]string { return o.(filer).Files() }
	}
	environments.add(name, spec)
}

// validator and filer are the methods an options type may have in place of
// a spec's Validate and Files.
type (
	validator interface{ Validate() error }
	filer     interface{ Files() map[string]string }
)

// validateOf is a spec's Validate, else its options' Validate method; a
// plug-in with neither is a programming error.
func validateOf(noun, name string, validate func(any) error, defaults func() any) func(any) error {
	if validate != nil {
		return validate
	}
	if _, ok := defaults().(validator); !ok {
		panic(fmt.Sprintf("rollout: %s %q: set Validate, or give the options type (%T) a Validate() error method", noun, name, defaults()))
	}
	return func(o any) error { return o.(validator).Validate() }
}

// DatasetFiles is the Files of an environment whose tasks come from a
// generator or, with source "file", from the train and test files named
// under section (env.<key>).
func DatasetFiles(section, source, train, test string) map[string]string {
	if source != "file" {
		return nil
	}
	return map[string]string{section + ".train": train, section + ".test": test}
}

// EnvironmentNames lists the registered environments.
func EnvironmentNames() []string { return environments.names() }

// EnvironmentOf returns a registered environment's spec.
func EnvironmentOf(name string) (EnvironmentSpec, error) { return environments.of(name) }

// EnvironmentKeys maps every registered environment's options key to its
// name.
func EnvironmentKeys() map[string]string { return environments.keys() }

// registry holds the plug-ins of one kind by name; each has an options key
// (its section under env or workflow), unique among them.
type registry[S any] struct {
	noun    string         // "environment", "workflow"
	section string         // the config section that names one: "env", "workflow"
	key     func(S) string // a spec's options key
	specs   map[string]S   // name → spec
}

func (r *registry[S]) add(name string, spec S) {
	if _, dup := r.specs[name]; dup {
		panic(fmt.Sprintf("rollout: %s %q registered twice", r.noun, name))
	}
	for n, s := range r.specs {
		if r.key(s) == r.key(spec) {
			panic(fmt.Sprintf("rollout: %ss %q and %q both use the options key %q", r.noun, n, name, r.key(spec)))
		}
	}
	if r.specs == nil {
		r.specs = map[string]S{}
	}
	r.specs[name] = spec
}

func (r *registry[S]) names() []string {
	names := make([]string, 0, len(r.specs))
	for n := range r.specs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (r *registry[S]) of(name string) (S, error) {
	s, ok := r.specs[name]
	if !ok {
		return s, fmt.Errorf("%s.name: unknown %s %q%s; valid: %s", r.section, r.noun, name, suggest.DidYouMean(name, r.names()), strings.Join(r.names(), ", "))
	}
	return s, nil
}

func (r *registry[S]) keys() map[string]string {
	out := map[string]string{}
	for n, s := range r.specs {
		out[r.key(s)] = n
	}
	return out
}

// Splits builds a procedural environment's train and test splits with one
// constructor (a helper for Build functions).
func Splits[E Environment](build func(split string) (E, error)) (train, test Environment, err error) {
	tr, err := build("train")
	if err != nil {
		return nil, nil, err
	}
	te, err := build("test")
	if err != nil {
		return nil, nil, err
	}
	return tr, te, nil
}

// SplitsOptionalTest is Splits for environments whose test split may be
// absent (build returns a nil environment for it); a missing train split is
// an error naming trainKey.
func SplitsOptionalTest[E Environment](trainKey string, build func(split string) (E, error)) (train, test Environment, err error) {
	var none E
	tr, err := build("train")
	if err != nil {
		return nil, nil, err
	}
	if any(tr) == any(none) {
		return nil, nil, fmt.Errorf("%s: the train split has no tasks; name a train file", trainKey)
	}
	te, err := build("test")
	if err != nil {
		return nil, nil, err
	}
	if any(te) == any(none) {
		return tr, nil, nil
	}
	return tr, te, nil
}

// WorkflowSpec is what a workflow package registers: how to build the
// workflow, its options, the team it is meant for, and the estimators its
// rows can feed.
type WorkflowSpec struct {
	// Key is the YAML key of its options section under workflow (e.g.
	// "math_refine").
	Key string
	// Defaults returns the default options: a struct value whose YAML
	// fields are the section's keys (config decodes workflow.<key> over it).
	Defaults func() any
	// Validate checks the options; errors name the key (workflow.<key>.…).
	// nil: the options' own Validate() error method.
	Validate func(opts any) error
	// Roles maps each option that names an agent (its config path) to the
	// agent it names, so config can check they exist. May be nil.
	Roles func(opts any) map[string]string
	// Build makes the workflow. opts is its options value (nil: the
	// defaults; OptionsOf reads it); env is the environment of the split
	// being run: a Scorer, and whatever more the workflow asserts of it
	// (tree needs a Stepper, joint a JointScorer, search retrieval).
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
	// OwnGroups marks a workflow that samples its comparison group itself
	// (MAGRPO's G completions): batch.n must then be 1.
	OwnGroups bool
}

var workflows = registry[WorkflowSpec]{noun: "workflow", section: "workflow", key: func(s WorkflowSpec) string { return s.Key }}

// RegisterWorkflow adds a workflow; a workflow package calls it from init.
// Registering a name or an options key twice is a programming error and
// panics.
func RegisterWorkflow(name string, spec WorkflowSpec) {
	if spec.Key == "" || spec.Defaults == nil || spec.Build == nil || spec.Agents == nil {
		panic(fmt.Sprintf("rollout: workflow %q: Key, Defaults, Build and Agents must be set", name))
	}
	spec.Validate = validateOf("workflow", name, spec.Validate, spec.Defaults)
	workflows.add(name, spec)
}

// WorkflowNames lists the registered workflows.
func WorkflowNames() []string { return workflows.names() }

// WorkflowOf returns a registered workflow's spec.
func WorkflowOf(name string) (WorkflowSpec, error) { return workflows.of(name) }

// WorkflowKeys maps every registered workflow's options key to its name.
func WorkflowKeys() map[string]string { return workflows.keys() }

// unknownWorkflow is the error of the functions below for a name nobody
// registered.
func unknownWorkflow(name string) error {
	return fmt.Errorf("workflow %q: unknown; use one of %s", name, strings.Join(WorkflowNames(), ", "))
}

// WorkflowEstimators lists the estimators a workflow's rows can feed.
func WorkflowEstimators(name string) ([]string, error) {
	s, ok := workflows.specs[name]
	if !ok {
		return nil, unknownWorkflow(name)
	}
	return append([]string(nil), s.Estimators...), nil
}

// NewWorkflow builds a registered workflow by name. opts is its options
// value (nil: the defaults); env is the environment.
func NewWorkflow(name string, opts any, agents []*Agent, env Scorer) (Workflow, error) {
	s, ok := workflows.specs[name]
	if !ok {
		return nil, unknownWorkflow(name)
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
	return s.Build(opts, agents, env)
}

// DefaultAgentConfigs returns the agents a workflow is meant for, all on
// one model named "policy" (rename it to share or split models).
func DefaultAgentConfigs(name string) ([]AgentConfig, error) {
	s, ok := workflows.specs[name]
	if !ok {
		return nil, unknownWorkflow(name)
	}
	return s.Agents(), nil
}
