package advantage

// options.go — the estimator settings, one plain struct that maps onto the
// `advantage:` section of a run config, its defaults and its validation.
//
// What this file is not: the config loader. The config package decodes YAML
// into DefaultOptions() (so absent keys keep their defaults), rejects unknown
// keys, and calls Validate.

import (
	"fmt"
	"math"
	"strings"
)

// Values of Options.Std.
const (
	StdSample     = "sample"     // divide by N−1, torch.std (Dr. MAS, AT-GRPO)
	StdPopulation = "population" // divide by N
)

// Values of Options.Singleton.
const (
	SingletonRaw  = "raw"  // mean 0, std 1: A = s/(1+ε) (Dr. MAS code)
	SingletonZero = "zero" // A = 0 (PettingLLMs)
)

// Values of MAGRPOOptions.Baseline.
const (
	BaselineMean = "mean" // A = R − mean(R)
	BaselineRLOO = "rloo" // A = (R·G − ΣR)/(G−1)
	BaselineMax  = "max"  // A = R − max(R)
	BaselineRaw  = "raw"  // A = R
)

// Values of MAGRPOOptions.Joint.
const (
	JointAligned = "aligned" // the g-th completion of every agent: G joint actions
	JointCross   = "cross"   // the Cartesian product: G^N joint actions
)

// Options configures every estimator. A field that an estimator does not use
// is ignored by it (the package doc lists which estimator reads what).
type Options struct {
	// DivideByStd divides the centred score by the group's std plus Epsilon;
	// false gives Dr. GRPO's A = s − mean. Used by grpo, grpo-step, drmas,
	// atgrpo.
	DivideByStd bool `yaml:"divide_by_std"`
	// Std is "sample" (N−1) or "population" (N).
	Std string `yaml:"std"`
	// Epsilon is added to the std before dividing.
	Epsilon float64 `yaml:"epsilon"`
	// Singleton is what a group with one sample gets: "raw" or "zero".
	Singleton string `yaml:"singleton"`
	// MixRewards scores each row as TeamWeight·TeamReward + LocalReward
	// (AT-GRPO's reward) instead of Reward. It applies to every estimator.
	MixRewards bool `yaml:"mix_rewards"`
	// TeamWeight is α in α·team + local.
	TeamWeight float64 `yaml:"team_weight"`
	// Filter drops groups from training after any estimator (filter.go).
	Filter FilterOptions `yaml:"filter"`
	// ATGRPO holds AT-GRPO's choice of group key.
	ATGRPO ATGRPOOptions `yaml:"atgrpo"`
	// MAGRPO holds MAGRPO's baseline, normalisation, discount and joint mode.
	MAGRPO MAGRPOOptions `yaml:"magrpo"`
}

// Values of ATGRPOOptions.Key.
const (
	// KeyEnv groups by (prompt, env, turn, agent): the K candidates of one
	// state (tree sampling).
	KeyEnv = "env"
	// KeyPrompt groups by (prompt, turn, agent): the n environments of one
	// task pooled turn by turn (sampling without a tree, PettingLLMs'
	// default no_tree mode).
	KeyPrompt = "prompt"
	// KeyMerged groups by (prompt / tasks_per_group, turn, agent): the
	// environments of tasks_per_group consecutive tasks of the batch pooled
	// turn by turn, as PettingLLMs' no_tree runs at 244467e group them (its
	// key divides the task index by the sample count once more, so 8 tasks
	// × 8 rollouts share one baseline).
	KeyMerged = "merged"
)

// ATGRPOOptions configure the atgrpo estimator.
type ATGRPOOptions struct {
	// Key is "env" (tree sampling), "prompt" or "merged" (no tree).
	Key string `yaml:"key"`
	// TasksPerGroup is the number of consecutive tasks one merged group
	// pools (key: merged); a run config's 0 takes batch.n, the reference's
	// divisor (train_sample_num).
	TasksPerGroup int `yaml:"tasks_per_group"`
}

// MAGRPOOptions configure the magrpo estimator.
type MAGRPOOptions struct {
	// Baseline is mean, rloo, max or raw.
	Baseline string `yaml:"baseline"`
	// Normalize rescales each group's advantages to (A − mean A)/max(popstd A, 1e-6).
	Normalize bool `yaml:"normalize"`
	// Gamma is the discount in R = r + γ·mean(child returns).
	Gamma float64 `yaml:"gamma"`
	// Joint is "aligned" or "cross"; the rows must form that kind of joint
	// action at every node.
	Joint string `yaml:"joint"`
}

// DefaultOptions returns the reference defaults: sample std, ε = 1e-6,
// divide by std, raw singletons (Dr. MAS), no reward mixing (α = 1), no
// group filter, AT-GRPO groups keyed by environment, MAGRPO mean baseline without normalisation, γ = 0.9,
// aligned joint actions.
func DefaultOptions() Options {
	return Options{
		DivideByStd: true,
		Std:         StdSample,
		Epsilon:     1e-6,
		Singleton:   SingletonRaw,
		TeamWeight:  1,
		ATGRPO:      ATGRPOOptions{Key: KeyEnv},
		MAGRPO: MAGRPOOptions{
			Baseline: BaselineMean,
			Gamma:    0.9,
			Joint:    JointAligned,
		},
	}
}

// Validate reports the first invalid field, naming it by its config path, the
// value, and what to write instead.
func (o Options) Validate() error {
	if err := oneOf("advantage.std", o.Std, StdSample, StdPopulation); err != nil {
		return err
	}
	if !(o.Epsilon > 0) || math.IsInf(o.Epsilon, 0) {
		return fmt.Errorf("advantage.epsilon: must be > 0 and finite, got %g; the reference value is 1e-06", o.Epsilon)
	}
	if err := oneOf("advantage.singleton", o.Singleton, SingletonRaw, SingletonZero); err != nil {
		return err
	}
	if !(o.TeamWeight >= 0) || math.IsInf(o.TeamWeight, 0) {
		return fmt.Errorf("advantage.team_weight: must be >= 0 and finite, got %g; AT-GRPO uses 1", o.TeamWeight)
	}
	if !o.MixRewards && o.TeamWeight != 1 {
		return fmt.Errorf("advantage.team_weight: is only used with mix_rewards: true, got team_weight %g and mix_rewards false; set mix_rewards: true or remove team_weight", o.TeamWeight)
	}
	if err := o.Filter.Validate(); err != nil {
		return err
	}
	if err := oneOf("advantage.atgrpo.key", o.ATGRPO.Key, KeyEnv, KeyPrompt, KeyMerged); err != nil {
		return err
	}
	switch m := o.ATGRPO.TasksPerGroup; {
	case o.ATGRPO.Key == KeyMerged && m < 1:
		return fmt.Errorf("advantage.atgrpo.tasks_per_group: key merged pools that many consecutive tasks per group, got %d; set it to the reference's train_sample_num (8), or leave it 0 in a run config for batch.n", m)
	case o.ATGRPO.Key != KeyMerged && m != 0:
		return fmt.Errorf("advantage.atgrpo.tasks_per_group: only key merged reads it, got %d with key %q; remove it or set advantage.atgrpo.key: merged", m, o.ATGRPO.Key)
	}
	if err := oneOf("advantage.magrpo.baseline", o.MAGRPO.Baseline, BaselineMean, BaselineRLOO, BaselineMax, BaselineRaw); err != nil {
		return err
	}
	if g := o.MAGRPO.Gamma; !(g >= 0 && g <= 1) {
		return fmt.Errorf("advantage.magrpo.gamma: must be in [0, 1], got %g; MAGRPO uses 0.9", g)
	}
	return oneOf("advantage.magrpo.joint", o.MAGRPO.Joint, JointAligned, JointCross)
}

// validateFor adds the checks that depend on the estimator: options that only
// one estimator reads must not be changed for another.
func (o Options) validateFor(name string) error {
	if err := o.Validate(); err != nil {
		return err
	}
	if name != nameATGRPO && o.ATGRPO.Key != KeyEnv {
		return fmt.Errorf("advantage.atgrpo.key: only the atgrpo estimator reads it, got estimator %q and key %q; remove the option or use atgrpo", name, o.ATGRPO.Key)
	}
	return nil
}

func oneOf(field, got string, valid ...string) error {
	for _, v := range valid {
		if got == v {
			return nil
		}
	}
	return fmt.Errorf("%s: must be one of %s, got %q", field, strings.Join(valid, ", "), got)
}
