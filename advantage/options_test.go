package advantage

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestDefaultOptionsAreValidAndMatchTheReference(t *testing.T) {
	opt := DefaultOptions()
	if err := opt.Validate(); err != nil {
		t.Fatal(err)
	}
	if !opt.DivideByStd || opt.Std != StdSample || opt.Epsilon != 1e-6 || opt.Singleton != SingletonRaw ||
		opt.MixRewards || opt.TeamWeight != 1 || opt.MAGRPO.Gamma != 0.9 || opt.MAGRPO.Baseline != BaselineMean ||
		opt.MAGRPO.Joint != JointAligned || opt.MAGRPO.Normalize || opt.ATGRPO != (ATGRPOOptions{Key: KeyEnv}) || opt.Filter.On() {
		t.Errorf("defaults drifted from algorithms.md: %+v", opt)
	}
}

func TestValidateNamesFieldValueAndFix(t *testing.T) {
	cases := []struct {
		edit func(*Options)
		want string
	}{
		{func(o *Options) { o.Epsilon = -1 }, "advantage.epsilon: must be > 0 and finite, got -1"},
		{func(o *Options) { o.Std = "unbiased" }, `advantage.std: must be one of sample, population, got "unbiased"`},
		{func(o *Options) { o.Singleton = "drop" }, `advantage.singleton: must be one of raw, zero, got "drop"`},
		{func(o *Options) { o.TeamWeight = -0.5; o.MixRewards = true }, "advantage.team_weight: must be >= 0 and finite, got -0.5"},
		{func(o *Options) { o.TeamWeight = 2 }, "advantage.team_weight: is only used with mix_rewards: true"},
		{func(o *Options) { o.Filter.LowestMeanFraction = 1 }, "advantage.filter.lowest_mean_fraction: must be in [0, 1), got 1"},
		{func(o *Options) { o.ATGRPO.Key = "turn" }, `advantage.atgrpo.key: must be one of env, prompt, merged, got "turn"`},
		{func(o *Options) { o.MAGRPO.Baseline = "median" }, `advantage.magrpo.baseline: must be one of mean, rloo, max, raw, got "median"`},
		{func(o *Options) { o.MAGRPO.Gamma = 1.5 }, "advantage.magrpo.gamma: must be in [0, 1], got 1.5"},
		{func(o *Options) { o.MAGRPO.Joint = "product" }, `advantage.magrpo.joint: must be one of aligned, cross, got "product"`},
	}
	for _, c := range cases {
		opt := DefaultOptions()
		c.edit(&opt)
		err := opt.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error containing %q", err, c.want)
		}
		if _, err := New(nameDrMAS, opt); err == nil {
			t.Errorf("New accepted invalid options (%s)", c.want)
		}
	}
}

func TestATGRPOKeyOnlyForATGRPO(t *testing.T) {
	opt := DefaultOptions()
	opt.ATGRPO.Key = KeyPrompt
	if _, err := New(nameATGRPO, opt); err != nil {
		t.Fatal(err)
	}
	_, err := New(nameDrMAS, opt)
	if want := `advantage.atgrpo.key: only the atgrpo estimator reads it, got estimator "drmas"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}
}

func TestOptionsDecodeFromYAML(t *testing.T) {
	// The config package decodes the section into DefaultOptions(): keys are
	// snake_case, absent keys keep their defaults, unknown keys are rejected.
	src := `
divide_by_std: false
std: population
singleton: zero
mix_rewards: true
team_weight: 0.5
filter:
  zero_variance: true
  lowest_mean_fraction: 0.25
atgrpo:
  key: prompt
magrpo:
  baseline: rloo
  normalize: true
  joint: cross
`
	opt := DefaultOptions()
	dec := yaml.NewDecoder(strings.NewReader(src))
	dec.KnownFields(true)
	if err := dec.Decode(&opt); err != nil {
		t.Fatal(err)
	}
	want := Options{
		DivideByStd: false, Std: StdPopulation, Epsilon: 1e-6, Singleton: SingletonZero,
		MixRewards: true, TeamWeight: 0.5,
		Filter: FilterOptions{ZeroVariance: true, LowestMeanFraction: 0.25},
		ATGRPO: ATGRPOOptions{Key: KeyPrompt},
		MAGRPO: MAGRPOOptions{Baseline: BaselineRLOO, Normalize: true, Gamma: 0.9, Joint: JointCross},
	}
	if opt != want {
		t.Errorf("decoded %+v\nwant    %+v", opt, want)
	}
	if err := opt.Validate(); err != nil {
		t.Error(err)
	}

	bad := yaml.NewDecoder(strings.NewReader("epsilon: 1e-6\nnorm_by_std: true\n"))
	bad.KnownFields(true)
	opt = DefaultOptions()
	if err := bad.Decode(&opt); err == nil || !strings.Contains(err.Error(), "norm_by_std") {
		t.Errorf("unknown key: got %v", err)
	}
}
