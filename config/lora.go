package config

// lora.go — the lora section and per-agent lora blocks (assignment: lora).
//
// With assignment: lora every agent trains a low-rank adapter of its own on
// one frozen copy of its model, shared in memory with the other agents on
// that model; an agent with `lora: {full: true}` trains a full copy of the
// model instead, as under assignment: separate. The run-wide section sets
// the adapters' shape; an agent's block overrides any of its fields.

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// LoRATargets are the projections an adapter may target, by PEFT's module
// names (the model package's list, repeated here so that config stays free
// of libtorch).
var LoRATargets = []string{"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}

// LoRA is an adapter's shape.
type LoRA struct {
	Rank    int      `yaml:"rank"`    // r
	Alpha   float64  `yaml:"alpha"`   // α; the update is scaled by α/r
	Targets []string `yaml:"targets"` // projections to adapt
	Dropout float64  `yaml:"dropout"` // must be 0
	RSLoRA  bool     `yaml:"rslora"`  // scale by α/√r (rank-stabilised LoRA)
}

// DefaultLoRA adapts every projection with r = 16, α = 32.
func DefaultLoRA() LoRA {
	return LoRA{Rank: 16, Alpha: 32, Targets: slices.Clone(LoRATargets)}
}

// AgentLoRA overrides the lora section for one agent; zero fields inherit.
type AgentLoRA struct {
	Full    bool     `yaml:"full"` // train a full copy of the model instead of an adapter
	Rank    int      `yaml:"rank"`
	Alpha   float64  `yaml:"alpha"`
	Targets []string `yaml:"targets"`
	RSLoRA  *bool    `yaml:"rslora"`
}

// apply returns base with the agent's overrides.
func (o AgentLoRA) apply(base LoRA) LoRA {
	if o.Rank != 0 {
		base.Rank = o.Rank
	}
	if o.Alpha != 0 {
		base.Alpha = o.Alpha
	}
	if len(o.Targets) > 0 {
		base.Targets = slices.Clone(o.Targets)
	}
	if o.RSLoRA != nil {
		base.RSLoRA = *o.RSLoRA
	}
	return base
}

// Validate checks an adapter's shape; key is where it came from.
func (l LoRA) Validate(key string) error {
	switch {
	case l.Rank < 1:
		return fmt.Errorf("%s.rank: must be >= 1, got %d", key, l.Rank)
	case !(l.Alpha > 0) || math.IsInf(l.Alpha, 0):
		return fmt.Errorf("%s.alpha: must be > 0 and finite, got %g", key, l.Alpha)
	case l.Dropout != 0:
		return fmt.Errorf("%s.dropout: only 0 is supported, got %g: dropout on the adapter's input would make the no-grad old log-probs differ from the training forward's, so the first mini-batch's ratio would not be 1", key, l.Dropout)
	case len(l.Targets) == 0:
		return fmt.Errorf("%s.targets: name at least one of %s", key, strings.Join(LoRATargets, ", "))
	}
	for i, t := range l.Targets {
		if !slices.Contains(LoRATargets, t) {
			return fmt.Errorf("%s.targets[%d]: unknown projection %q; choose from %s", key, i, t, strings.Join(LoRATargets, ", "))
		}
		if slices.Index(l.Targets, t) != i {
			return fmt.Errorf("%s.targets: %q is listed twice", key, t)
		}
	}
	return nil
}

// agentLoRA is the adapter agent trains under assignment: lora, or nil when
// it trains full weights (another assignment, or lora.full).
func (c *Config) agentLoRA(a Agent) *LoRA {
	if c.Assignment != "lora" || a.LoRA.Full {
		return nil
	}
	l := a.LoRA.apply(c.LoRA)
	return &l
}

// EffectiveLoRA is agent a's lora block with every field it inherits from
// the lora section filled in (what train check prints); a's own block when
// it trains full weights.
func (c *Config) EffectiveLoRA(a Agent) AgentLoRA {
	l := c.agentLoRA(a)
	if l == nil {
		return a.LoRA
	}
	rs := l.RSLoRA
	return AgentLoRA{Rank: l.Rank, Alpha: l.Alpha, Targets: slices.Clone(l.Targets), RSLoRA: &rs}
}

func (c *Config) validateLoRA() error {
	if c.Assignment != "lora" {
		for i, a := range c.Agents {
			if a.LoRA.Full || a.LoRA.Rank != 0 || a.LoRA.Alpha != 0 || len(a.LoRA.Targets) > 0 || a.LoRA.RSLoRA != nil {
				return fmt.Errorf("agents[%d].lora: set, but assignment is %s; per-agent adapters need assignment: lora", i, c.Assignment)
			}
		}
		return nil
	}
	if err := c.LoRA.Validate("lora"); err != nil {
		return err
	}
	for i, a := range c.Agents {
		if l := c.agentLoRA(a); l != nil {
			if err := l.Validate(fmt.Sprintf("agents[%d].lora", i)); err != nil {
				return err
			}
		}
	}
	return nil
}
