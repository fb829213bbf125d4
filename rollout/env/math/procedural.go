// procedural.go — a seeded, endless source of arithmetic and word problems
// with disjoint train and test splits.
//
// Task i of a split is drawn from a generator seeded with
// DeriveSeed(seed, split, difficulty, i, attempt): the same (config, split, i) always
// gives the same task, on any machine and Go release, and nothing is stored.
//
// Disjointness, by construction: a question belongs to the test split iff
// the FNV-1a hash of its text is 0 mod 5; each split redraws (attempt+1)
// until a question falls on its side. So no question text is in both
// splits, whatever the sizes — the train and test seeds are disjoint too,
// but text disjointness is what matters (two seeds can draw "3 + 4").
// Small difficulties have few distinct questions; a split larger than
// that repeats questions within itself, never across.
package math

import (
	"fmt"
	"hash/fnv"

	"troupe/rollout"
)

// ProceduralConfig configures the generated task source.
type ProceduralConfig struct {
	Seed         uint64  `yaml:"seed"`          // generator seed (not the shuffle seed)
	Difficulty   int     `yaml:"difficulty"`    // 0 (place value: a digit of a number), 1 (one step, small numbers) … 5 (several steps, fractions)
	WordFraction float64 `yaml:"word_fraction"` // share of word problems; the rest are expressions
	TrainSize    int     `yaml:"train_size"`    // tasks in the train split
	TestSize     int     `yaml:"test_size"`     // tasks in the test split
}

// DefaultProceduralConfig is a mid-difficulty mix sized for smoke runs.
func DefaultProceduralConfig() ProceduralConfig {
	return ProceduralConfig{Seed: 1, Difficulty: 2, WordFraction: 0.5, TrainSize: 10000, TestSize: 500}
}

// Validate checks ranges; errors name the key and the fix.
func (c ProceduralConfig) Validate() error {
	switch {
	case c.Difficulty < 0 || c.Difficulty > 5:
		return fmt.Errorf("env.math.procedural.difficulty: must be 0…5, got %d", c.Difficulty)
	case c.WordFraction < 0 || c.WordFraction > 1:
		return fmt.Errorf("env.math.procedural.word_fraction: must be in [0, 1], got %g", c.WordFraction)
	case c.TrainSize < 0:
		return fmt.Errorf("env.math.procedural.train_size: must be >= 0, got %d", c.TrainSize)
	case c.TestSize < 0:
		return fmt.Errorf("env.math.procedural.test_size: must be >= 0, got %d", c.TestSize)
	}
	return nil
}

// Split names.
const (
	SplitTrain = "train"
	SplitTest  = "test"
)

// Procedural is one split of the generated tasks; it implements
// rollout.TaskSource.
type Procedural struct {
	cfg   ProceduralConfig
	split string
	tag   uint64 // 1 train, 2 test
	size  int
}

// NewProcedural returns the train or test split.
func NewProcedural(cfg ProceduralConfig, split string) (*Procedural, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	switch split {
	case SplitTrain:
		return &Procedural{cfg: cfg, split: split, tag: 1, size: cfg.TrainSize}, nil
	case SplitTest:
		return &Procedural{cfg: cfg, split: split, tag: 2, size: cfg.TestSize}, nil
	}
	return nil, fmt.Errorf("math: split %q: use %q or %q", split, SplitTrain, SplitTest)
}

func (p *Procedural) Len() int { return p.size }

// Task draws task i (0 ≤ i < Len, but any i ≥ 0 is a valid draw).
func (p *Procedural) Task(i int) rollout.Task {
	for attempt := uint64(0); ; attempt++ {
		r := rollout.NewRand(rollout.DeriveSeed(p.cfg.Seed, p.tag, uint64(p.cfg.Difficulty), uint64(i), attempt))
		kind := "arithmetic"
		var q, gold, mistake string
		if p.cfg.Difficulty == 0 {
			kind = "place-value"
			q, gold, mistake = placeValueProblem(r)
		} else if r.Float64() < p.cfg.WordFraction {
			kind = "word"
			q, gold = wordProblem(r, p.cfg.Difficulty)
		} else {
			var ok bool
			if q, gold, ok = arithmeticProblem(r, p.cfg.Difficulty); !ok {
				continue
			}
		}
		if IsTestQuestion(q) != (p.split == SplitTest) {
			continue
		}
		meta := map[string]string{"kind": kind, "split": p.split, "difficulty": fmt.Sprint(p.cfg.Difficulty)}
		if mistake != "" {
			meta["mistake"] = mistake // a typical wrong answer (train sft's demonstrations use it)
		}
		return rollout.Task{
			ID:       fmt.Sprintf("proc-%s-s%d-d%d-%d", p.split, p.cfg.Seed, p.cfg.Difficulty, i),
			Question: q,
			Answer:   gold,
			Meta:     meta,
		}
	}
}

// IsTestQuestion says which split a question text belongs to.
func IsTestQuestion(question string) bool {
	h := fnv.New64a()
	h.Write([]byte(question))
	return h.Sum64()%5 == 0
}
