package config

// resolve.go — a validated config resolved into what the run builds: the
// trained models with their agents, each one's optimizer settings, and the
// agents as the rollout sees them.

import (
	"slices"

	"troupe/optim"
	"troupe/rollout"
)

// Trained is one model the run trains: its name (what agents' rows carry),
// the checkpoint it starts from, and the agents that act with it.
type Trained struct {
	Name   string   // trained model name
	Source string   // key in Config.Models
	Model  Model    // with dtype/device/tokenizer defaults filled in
	Agents []string // agent names, in config order
	// LoRA is the adapter trained on the frozen Source model (assignment:
	// lora); nil: full weights are trained.
	LoRA *LoRA
}

// Trained lists the models the run trains, in a stable order. With
// assignment separate every agent trains its own copy (named after the
// agent); with shared, agents naming the same model train it together
// (named after the model); with lora every agent trains its own adapter
// (named after the agent) on its model, which agents share frozen.
func (c *Config) Trained() []Trained {
	var out []Trained
	index := map[string]int{}
	for _, a := range c.Agents {
		name := a.Model
		if c.ownModel() {
			name = a.Name
		}
		i, ok := index[name]
		if !ok {
			m := c.Models[a.Model]
			if m.DType == "" {
				m.DType = c.Run.DType
			}
			if m.Device == "" {
				m.Device = c.Run.Device
			}
			if m.Tokenizer == "" {
				m.Tokenizer = m.Path
			}
			index[name] = len(out)
			out = append(out, Trained{Name: name, Source: a.Model, Model: m, LoRA: c.agentLoRA(a)})
			i = len(out) - 1
		}
		out[i].Agents = append(out[i].Agents, a.Name)
	}
	return out
}

// ownModel says whether every agent trains a model (or adapter) of its own.
func (c *Config) ownModel() bool { return c.Assignment == "separate" || c.Assignment == "lora" }

// TrainedName is the trained model agent acts with.
func (c *Config) TrainedName(agent string) string {
	for _, t := range c.Trained() {
		if slices.Contains(t.Agents, agent) {
			return t.Name
		}
	}
	return ""
}

// agentSettings is the base optim with the agent's overrides.
func (c *Config) agentSettings(agent string) optim.Settings {
	for _, a := range c.Agents {
		if a.Name == agent {
			return c.withRunSteps(a.Optim.Apply(c.Optim))
		}
	}
	return c.withRunSteps(c.Optim)
}

// withRunSteps lets a cosine schedule default its length to run.steps.
func (c *Config) withRunSteps(s optim.Settings) optim.Settings {
	if s.LRSchedule == optim.ScheduleCosine && s.TotalSteps == 0 {
		s.TotalSteps = c.Run.Steps
	}
	return s
}

// Settings is the optimizer and loss settings of a trained model (its
// agents' settings, identical by validation).
func (c *Config) Settings(t Trained) optim.Settings { return c.agentSettings(t.Agents[0]) }

// rolloutAgentConfigs are the agents as rollout sees them: each acts with
// its trained model.
func (c *Config) rolloutAgentConfigs() []rollout.AgentConfig {
	var out []rollout.AgentConfig
	for _, a := range c.Agents {
		ac := a.AgentConfig
		if c.ownModel() {
			ac.Model = a.Name
		}
		out = append(out, ac)
	}
	return out
}

// AgentConfigs returns the rollout agent configs, each bound to its trained model.
func (c *Config) AgentConfigs() []rollout.AgentConfig { return c.rolloutAgentConfigs() }

// AgentDefaults are the run-wide sampling and length defaults.
func (c *Config) AgentDefaults() rollout.AgentDefaults {
	return rollout.AgentDefaults{Sampling: c.Sampling, MaxNewTokens: c.MaxNewTokens}
}
