package config

// workflow.go — the workflow section: the workflow's name, the built-in
// workflows' options (rollout.WorkflowOptions: math_refine, single, tree,
// joint) and one section per plug-in workflow, keyed by the YAML key it
// registered (rollout.RegisterWorkflow with Key and Defaults).

import (
	"fmt"
	"reflect"

	"gopkg.in/yaml.v3"

	"troupe/rollout"
)

// Workflow names the orchestra and holds every workflow's options; only the
// named one's are used.
type Workflow struct {
	Name string // math-refine, single, search, tree, joint, …
	rollout.WorkflowOptions
	plugins map[string]any // plug-in options key → options value
}

func defaultWorkflow() Workflow {
	w := Workflow{Name: "math-refine", WorkflowOptions: rollout.DefaultWorkflowOptions(), plugins: map[string]any{}}
	for key, name := range rollout.PluginWorkflowKeys() {
		spec, _ := rollout.WorkflowOf(name)
		w.plugins[key] = spec.Defaults()
	}
	return w
}

// Options returns the named workflow's options, as rollout.NewWorkflow
// takes them: a plug-in's section, or the built-ins' WorkflowOptions.
func (w Workflow) Options() any {
	spec, err := rollout.WorkflowOf(w.Name)
	if err != nil || spec.Key == "" {
		return w.WorkflowOptions
	}
	if v, ok := w.plugins[spec.Key]; ok {
		return v
	}
	return spec.Defaults()
}

// Section returns a plug-in workflow's options (nil if none registered key).
func (w Workflow) Section(key string) any { return w.plugins[key] }

var builtinWorkflowKeys = fields(reflect.TypeOf(rollout.WorkflowOptions{}))

// workflowKeyType is the Go type under workflow.<key>, for checkNode.
func workflowKeyType(key string) (reflect.Type, bool) {
	if key == "name" {
		return reflect.TypeOf(""), true
	}
	if f, ok := builtinWorkflowKeys[key]; ok {
		return f.Type, true
	}
	name, ok := rollout.PluginWorkflowKeys()[key]
	if !ok {
		return nil, false
	}
	spec, _ := rollout.WorkflowOf(name)
	return reflect.TypeOf(spec.Defaults()), true
}

func workflowKeys() map[string]reflect.StructField {
	known := map[string]reflect.StructField{"name": {}}
	for k := range builtinWorkflowKeys {
		known[k] = reflect.StructField{}
	}
	for k := range rollout.PluginWorkflowKeys() {
		known[k] = reflect.StructField{}
	}
	return known
}

// UnmarshalYAML decodes workflow over the current value (the defaults).
func (w *Workflow) UnmarshalYAML(n *yaml.Node) error {
	if w.plugins == nil {
		*w = defaultWorkflow()
	}
	builtin := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i].Value, n.Content[i+1]
		switch _, isBuiltin := builtinWorkflowKeys[key]; {
		case key == "name":
			if err := val.Decode(&w.Name); err != nil {
				return fmt.Errorf("workflow.name: %w", err)
			}
		case isBuiltin:
			builtin.Content = append(builtin.Content, n.Content[i], val)
		default:
			cur, ok := w.plugins[key]
			if !ok {
				return fmt.Errorf("workflow.%s: unknown key", key)
			}
			v, err := decodeOver(cur, val)
			if err != nil {
				return fmt.Errorf("workflow.%s: %w", key, err)
			}
			w.plugins[key] = v
		}
	}
	if len(builtin.Content) > 0 {
		if err := builtin.Decode(&w.WorkflowOptions); err != nil {
			return fmt.Errorf("workflow: %w", err)
		}
	}
	return nil
}

// MarshalYAML writes name, the built-ins' sections, then the plug-ins' in
// key order.
func (w Workflow) MarshalYAML() (any, error) {
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	if err := appendSections(out, "workflow", map[string]any{"name": w.Name}); err != nil {
		return nil, err
	}
	var builtin yaml.Node
	if err := builtin.Encode(w.WorkflowOptions); err != nil {
		return nil, err
	}
	out.Content = append(out.Content, builtin.Content...)
	if err := appendSections(out, "workflow", w.plugins); err != nil {
		return nil, err
	}
	return out, nil
}
