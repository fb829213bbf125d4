package config

// env.go — the env section: the environment's name and one options section
// per registered environment, keyed by the YAML key it registered
// (rollout.RegisterEnvironment). config names no environment: their option
// types come from the registry, so a new environment is its own package and
// a blank import in config/plugins.go.

import (
	"fmt"
	"reflect"
	"sort"

	"gopkg.in/yaml.v3"

	"troupe/rollout"
)

// Env names the environment and holds every registered environment's
// options; only the named one's are used.
type Env struct {
	Name     string         // math, search, plan-path, …
	sections map[string]any // options key → options value (a struct)
}

// defaultEnv is the math environment with every section at its defaults.
func defaultEnv() Env {
	e := Env{Name: "math", sections: map[string]any{}}
	for key, name := range rollout.EnvironmentKeys() {
		spec, _ := rollout.EnvironmentOf(name)
		e.sections[key] = spec.Defaults()
	}
	return e
}

// Section returns the options under env.<key> (nil if no environment
// registered that key).
func (e Env) Section(key string) any { return e.sections[key] }

// Options returns the named environment's options.
func (e Env) Options() (any, error) {
	spec, err := rollout.EnvironmentOf(e.Name)
	if err != nil {
		return nil, err
	}
	v, ok := e.sections[spec.Key]
	if !ok {
		return nil, fmt.Errorf("env.%s: no options for environment %q", spec.Key, e.Name)
	}
	return v, nil
}

// sectionType is the Go type of env.<key>, for checkNode.
func envSectionType(key string) (reflect.Type, bool) {
	name, ok := rollout.EnvironmentKeys()[key]
	if !ok {
		return nil, false
	}
	spec, _ := rollout.EnvironmentOf(name)
	return reflect.TypeOf(spec.Defaults()), true
}

// envKeys lists the keys allowed under env.
func envKeys() []string {
	keys := []string{"name"}
	for k := range rollout.EnvironmentKeys() {
		keys = append(keys, k)
	}
	sort.Strings(keys[1:])
	return keys
}

// UnmarshalYAML decodes env over the current value (the defaults): name,
// and each section over its current options. checkNode has already refused
// unknown keys with their path.
func (e *Env) UnmarshalYAML(n *yaml.Node) error {
	if e.sections == nil {
		*e = defaultEnv()
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i].Value, n.Content[i+1]
		if key == "name" {
			if err := val.Decode(&e.Name); err != nil {
				return fmt.Errorf("env.name: %w", err)
			}
			continue
		}
		cur, ok := e.sections[key]
		if !ok {
			return fmt.Errorf("env.%s: unknown key; known keys here: %v", key, envKeys())
		}
		v, err := decodeOver(cur, val)
		if err != nil {
			return fmt.Errorf("env.%s: %w", key, err)
		}
		e.sections[key] = v
	}
	return nil
}

// decodeOver decodes a YAML section over a copy of the struct value cur:
// keys the section leaves out keep cur's values.
func decodeOver(cur any, n *yaml.Node) (any, error) {
	ptr := reflect.New(reflect.TypeOf(cur))
	ptr.Elem().Set(reflect.ValueOf(cur))
	if err := n.Decode(ptr.Interface()); err != nil {
		return nil, err
	}
	return ptr.Elem().Interface(), nil
}

// appendSections appends key: value pairs, in key order, to a mapping node.
func appendSections(out *yaml.Node, prefix string, sections map[string]any) error {
	keys := make([]string, 0, len(sections))
	for k := range sections {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var n yaml.Node
		if err := n.Encode(sections[k]); err != nil {
			return fmt.Errorf("%s.%s: %w", prefix, k, err)
		}
		out.Content = append(out.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, &n)
	}
	return nil
}

// MarshalYAML writes name, then every section in key order.
func (e Env) MarshalYAML() (any, error) {
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	if err := appendSections(out, "env", map[string]any{"name": e.Name}); err != nil {
		return nil, err
	}
	if err := appendSections(out, "env", e.sections); err != nil {
		return nil, err
	}
	return out, nil
}
