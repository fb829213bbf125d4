// Package math is the math environment: a task source (procedural problems
// or a dataset file) and the 0/1 reward on the final answer, graded one of
// two ways (env.math.grading): the last \boxed{} by troupe's grader
// (boxed, the default: the Dr. MAS reward), or the whole response parsed
// and verified as Math-Verify does (verifier: the AT-GRPO reward).
//
// Files: env.go (the Environment and its config), procedural.go,
// arithmetic.go and wordproblems.go (the generator), dataset.go and
// parquet.go (file loaders), normalize.go, equiv.go and expr.go (answer
// comparison: the text, then the value of an expression), reward.go (the
// Scorer), verifier.go, verifier_grammar.go, verifier_normalize.go and
// verifier_value.go (the verifier mode), oracle.go (train sft's
// demonstrations), register.go (the registration).
//
// The package is named math after its directory; inside it the standard
// library's math is not needed (exact arithmetic uses math/big).
package math

import (
	"fmt"

	"troupe/rollout"
)

// Config selects the task source of the math environment.
type Config struct {
	Source     string           `yaml:"source"`     // "procedural" or "file"
	Train      string           `yaml:"train"`      // dataset file of the train split (source: file)
	Test       string           `yaml:"test"`       // dataset file of the test split (source: file)
	Fields     Fields           `yaml:"fields"`     // field paths in the dataset files
	Procedural ProceduralConfig `yaml:"procedural"` // generator settings (source: procedural)
	Grading    string           `yaml:"grading"`    // "boxed" (the last \boxed{}; "" too) or "verifier" (the whole response, as Math-Verify)
}

// DefaultConfig uses the procedural generator.
func DefaultConfig() Config {
	return Config{Source: "procedural", Procedural: DefaultProceduralConfig(), Grading: GradingBoxed}
}

// Files names the dataset files config checks exist (source: file).
func (c Config) Files() map[string]string {
	return rollout.DatasetFiles("env.math", c.Source, c.Train, c.Test)
}

// Validate checks the settings; errors name the key and the fix.
func (c Config) Validate() error {
	if c.Grading != "" && c.Grading != GradingBoxed && c.Grading != GradingVerifier {
		return fmt.Errorf("env.math.grading: must be %q (the last \\boxed{}) or %q (the whole response, as Math-Verify), got %q", GradingBoxed, GradingVerifier, c.Grading)
	}
	switch c.Source {
	case "procedural":
		return c.Procedural.Validate()
	case "file":
		if c.Train == "" && c.Test == "" {
			return fmt.Errorf("env.math.train: source is file but neither train nor test names a dataset file (.jsonl, .json or .parquet)")
		}
		return nil
	}
	return fmt.Errorf("env.math.source: must be \"procedural\" or \"file\", got %q", c.Source)
}

// Env is the math environment for one split; it implements
// rollout.Environment.
type Env struct {
	rollout.TaskSource
	Reward
}

// Name implements rollout.Environment.
func (*Env) Name() string { return "math" }

// New opens one split ("train" or "test") of the configured source.
func New(cfg Config, split string) (*Env, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if split != SplitTrain && split != SplitTest {
		return nil, fmt.Errorf("math: split %q: use %q or %q", split, SplitTrain, SplitTest)
	}
	if cfg.Source == "procedural" {
		p, err := NewProcedural(cfg.Procedural, split)
		if err != nil {
			return nil, err
		}
		return &Env{TaskSource: p, Reward: Reward{Grading: cfg.Grading}}, nil
	}
	path := cfg.Train
	if split == SplitTest {
		path = cfg.Test
	}
	if path == "" {
		return nil, fmt.Errorf("env.math.%s: no dataset file for the %s split; set it or evaluate on the other split", split, split)
	}
	src, err := Load(path, cfg.Fields)
	if err != nil {
		return nil, err
	}
	return &Env{TaskSource: src, Reward: Reward{Grading: cfg.Grading}}, nil
}

var _ rollout.Environment = (*Env)(nil)
