package config

// sections.go — the env and workflow sections. Each names one registered
// plug-in and holds every registered plug-in's options under the YAML key it
// registered (rollout.RegisterEnvironment, rollout.RegisterWorkflow):
// env.<key> and workflow.<key> decode over that plug-in's defaults. config
// names no plug-in: their option types come from the registry, so a new
// environment or workflow is its own package and one blank import in
// plugins.go.

import (
	"fmt"
	"reflect"
	"sort"

	"gopkg.in/yaml.v3"

	"troupe/rollout"
)

// Env names the environment and holds every registered environment's
// options; only the named one's are used.
type Env struct{ plugged }

// Workflow names the orchestra and holds every registered workflow's
// options; only the named one's are used.
type Workflow struct{ plugged }

// plugged is a section that names one plug-in (Name) of a registry.
type plugged struct {
	Name     string         // math, search, plan-path, … / math-refine, single, search, tree, joint
	sections map[string]any // options key → options value (a struct)
}

// registryOf is what a section needs of its registry.
type registryOf struct {
	section  string                          // "env", "workflow"
	first    string                          // the default name
	keys     func() map[string]string        // options key → plug-in name
	defaults func(name string) (any, string) // a plug-in's default options and its key
}

var (
	envs = registryOf{section: "env", first: "math", keys: rollout.EnvironmentKeys, defaults: func(name string) (any, string) {
		s, _ := rollout.EnvironmentOf(name)
		return s.Defaults(), s.Key
	}}
	flows = registryOf{section: "workflow", first: "math-refine", keys: rollout.WorkflowKeys, defaults: func(name string) (any, string) {
		s, _ := rollout.WorkflowOf(name)
		return s.Defaults(), s.Key
	}}
)

// defaultSections is the registry's first plug-in named, every section at
// its defaults.
func (r registryOf) defaultSections() plugged {
	p := plugged{Name: r.first, sections: map[string]any{}}
	for key, name := range r.keys() {
		p.sections[key], _ = r.defaults(name)
	}
	return p
}

func defaultEnv() Env           { return Env{envs.defaultSections()} }
func defaultWorkflow() Workflow { return Workflow{flows.defaultSections()} }

// Section returns the options under <section>.<key> (nil if no plug-in
// registered that key).
func (p plugged) Section(key string) any { return p.sections[key] }

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

// Options returns the named workflow's options, as rollout.NewWorkflow
// takes them (nil for a name nobody registered).
func (w Workflow) Options() any {
	spec, err := rollout.WorkflowOf(w.Name)
	if err != nil {
		return nil
	}
	return w.sections[spec.Key]
}

// keyType is the Go type under <section>.<key>, for checkNode.
func (r registryOf) keyType(key string) (reflect.Type, bool) {
	if key == "name" {
		return reflect.TypeOf(""), true
	}
	name, ok := r.keys()[key]
	if !ok {
		return nil, false
	}
	d, _ := r.defaults(name)
	return reflect.TypeOf(d), true
}

// known lists the keys allowed under the section.
func (r registryOf) known() map[string]reflect.StructField {
	known := map[string]reflect.StructField{"name": {}}
	for k := range r.keys() {
		known[k] = reflect.StructField{}
	}
	return known
}

// check checks the section: name, and each registered plug-in's options
// against their type.
func (r registryOf) check(n *yaml.Node, path string) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("config: %s: must be a section of keys", path)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key := n.Content[i].Value
		t, ok := r.keyType(key)
		if !ok {
			return fmt.Errorf("config: %s: unknown key%s", join(path, key), suggest(key, r.known()))
		}
		if err := checkNode(n.Content[i+1], t, join(path, key)); err != nil {
			return err
		}
	}
	return nil
}

// decode decodes the section over p (the defaults): name, and each
// options section over its current value. checkNode has already refused
// unknown keys with their path.
func (p *plugged) decode(r registryOf, n *yaml.Node) error {
	if p.sections == nil {
		*p = r.defaultSections()
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i].Value, n.Content[i+1]
		if key == "name" {
			if err := val.Decode(&p.Name); err != nil {
				return fmt.Errorf("%s.name: %w", r.section, err)
			}
			continue
		}
		cur, ok := p.sections[key]
		if !ok {
			return fmt.Errorf("%s.%s: unknown key%s", r.section, key, suggest(key, r.known()))
		}
		v, err := decodeOver(cur, val)
		if err != nil {
			return fmt.Errorf("%s.%s: %w", r.section, key, err)
		}
		p.sections[key] = v
	}
	return nil
}

// UnmarshalYAML decodes env over the current value (the defaults).
func (e *Env) UnmarshalYAML(n *yaml.Node) error { return e.decode(envs, n) }

// UnmarshalYAML decodes workflow over the current value (the defaults).
func (w *Workflow) UnmarshalYAML(n *yaml.Node) error { return w.decode(flows, n) }

// MarshalYAML writes name, then every section in key order.
func (e Env) MarshalYAML() (any, error) { return e.encode(envs) }

// MarshalYAML writes name, then every section in key order.
func (w Workflow) MarshalYAML() (any, error) { return w.encode(flows) }

func (p plugged) encode(r registryOf) (any, error) {
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	if err := appendSections(out, r.section, map[string]any{"name": p.Name}); err != nil {
		return nil, err
	}
	if err := appendSections(out, r.section, p.sections); err != nil {
		return nil, err
	}
	return out, nil
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
