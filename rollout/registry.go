// registry.go — the environment registry: how an environment package makes
// itself available to config, train and init without them naming it.
//
// An environment package calls RegisterEnvironment from init with its
// options' YAML key and functions over its options value (the type the
// config's env.<key> section decodes into). config looks the section up by
// that key, validates it with Validate and Files, cmd/train builds the
// splits with Build, `train init --text NAME` learns tokenizer merges
// from Text, and `train sft` writes demonstrations with Oracle.
package rollout

import (
	"fmt"
	"sort"
	"strings"
)

// EnvironmentSpec is what an environment package registers.
type EnvironmentSpec struct {
	// Key is the YAML key of its options section under env (e.g. "plan_path").
	Key string
	// Defaults returns the default options: a struct value whose YAML
	// fields are the section's keys (config decodes env.<key> over it).
	Defaults func() any
	// Validate checks the options; errors name the key (env.<key>.…).
	Validate func(opts any) error
	// Files lists the option paths that must exist on disk (config key →
	// path; empty paths are skipped). May be nil.
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

var environments = map[string]EnvironmentSpec{}

// RegisterEnvironment adds an environment; registering a name twice is a
// programming error and panics.
func RegisterEnvironment(name string, spec EnvironmentSpec) {
	if _, dup := environments[name]; dup {
		panic(fmt.Sprintf("rollout: environment %q registered twice", name))
	}
	if spec.Key == "" || spec.Defaults == nil || spec.Validate == nil || spec.Build == nil {
		panic(fmt.Sprintf("rollout: environment %q: Key, Defaults, Validate and Build must be set", name))
	}
	for n, s := range environments {
		if s.Key == spec.Key {
			panic(fmt.Sprintf("rollout: environments %q and %q both use the options key %q", n, name, spec.Key))
		}
	}
	environments[name] = spec
}

// EnvironmentNames lists the registered environments.
func EnvironmentNames() []string {
	names := make([]string, 0, len(environments))
	for n := range environments {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// EnvironmentOf returns a registered environment's spec.
func EnvironmentOf(name string) (EnvironmentSpec, error) {
	s, ok := environments[name]
	if !ok {
		return EnvironmentSpec{}, fmt.Errorf("env.name: unknown environment %q; valid: %s", name, strings.Join(EnvironmentNames(), ", "))
	}
	return s, nil
}

// EnvironmentKeys maps every registered environment's options key to its
// name.
func EnvironmentKeys() map[string]string {
	out := map[string]string{}
	for n, s := range environments {
		out[s.Key] = n
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
