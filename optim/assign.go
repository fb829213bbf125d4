package optim

// assign.go — which agents train which model.
//
// Agents that name the same model share it: one set of weights, one AdamW,
// one update over all their rows (Dr. MAS's model_sharing, AT-GRPO's shared
// policy). Agents naming different models each get their own weights and
// optimizer, and the models may differ in checkpoint and size (Dr. MAS's
// heterogeneous 7B planner + 3B executors). Under sharing one optimizer step
// mixes rows of several agents, so their settings must be identical, as the
// reference asserts; Assign refuses otherwise and names every differing key.
//
// The YAML `assignment: shared | separate` switch belongs to the config
// package, which maps it onto model names (shared: every agent names the same
// model; separate: each agent its own).

import (
	"fmt"
	"strings"
)

// AgentSpec is one agent's claim on a model.
type AgentSpec struct {
	Name     string   // the agent's name, as in Sequence.Agent
	Model    string   // the trained model's name; agents naming the same model share it
	Settings Settings // this agent's resolved settings (base + its overrides)
}

// Group is one trained model with the agents it serves.
type Group struct {
	Model    string
	Agents   []string // in the order given to Assign
	Settings Settings // identical for every agent of the group
}

// Shared reports whether more than one agent trains this model.
func (g Group) Shared() bool { return len(g.Agents) > 1 }

// Assign groups agents by model, in order of first appearance. It refuses
// empty or duplicate names, invalid settings, and agents that share a model
// with settings that differ from the group's first agent's.
func Assign(agents []AgentSpec) ([]Group, error) {
	if len(agents) == 0 {
		return nil, fmt.Errorf("optim: no agents to assign to models")
	}
	var groups []Group
	index := map[string]int{} // model → groups index
	first := map[string]string{}
	seen := map[string]bool{}
	var conflicts []string
	for i, a := range agents {
		switch {
		case a.Name == "":
			return nil, fmt.Errorf("optim: agents[%d]: empty name", i)
		case seen[a.Name]:
			return nil, fmt.Errorf("optim: agents[%d]: agent %q is listed twice; agent names must be unique", i, a.Name)
		case a.Model == "":
			return nil, fmt.Errorf("optim: agent %q: no model named; give it a model (agents naming the same model share it)", a.Name)
		}
		seen[a.Name] = true
		if err := a.Settings.Validate(); err != nil {
			return nil, fmt.Errorf("optim: agent %q: %w", a.Name, err)
		}
		g, ok := index[a.Model]
		if !ok {
			index[a.Model] = len(groups)
			first[a.Model] = a.Name
			groups = append(groups, Group{Model: a.Model, Agents: []string{a.Name}, Settings: a.Settings})
			continue
		}
		if diff := SettingsDiff(groups[g].Settings, a.Settings); diff != nil {
			conflicts = append(conflicts, fmt.Sprintf("agents %q and %q share model %q but differ in %s",
				first[a.Model], a.Name, a.Model, strings.Join(diff, ", ")))
		}
		groups[g].Agents = append(groups[g].Agents, a.Name)
	}
	if conflicts != nil {
		return nil, fmt.Errorf("optim: %s; agents that share a model train with one optimizer, so give them the same settings or separate models", strings.Join(conflicts, "; "))
	}
	return groups, nil
}
