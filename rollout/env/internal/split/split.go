// Package split draws the train and test instances of a procedural
// environment from disjoint seed streams, and keeps the test split free of
// any instance the train split also holds (small games repeat: a 6×6
// Sokoban room or a 4×4 Sudoku can come out of two seeds). RegisterGame
// registers such a game with rollout.
//
// Files: split.go (Draw), register.go (RegisterGame).
package split

import (
	"fmt"

	"troupe/rollout"
)

// Names of the splits.
const (
	Train = "train"
	Test  = "test"
)

// Options is what Draw needs of a game's options.
type Options interface {
	Validate() error
	Sizes() (train, test int) // instances in each split
}

// Draw checks opts and returns the tasks of split. draw makes the instance
// of (stream, i); train uses stream 1, test stream 2; key identifies an
// instance's content.
func Draw(env, split string, opts Options, draw func(stream, i uint64) rollout.Task, key func(rollout.Task) string) (rollout.SliceSource, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	trainSize, testSize := opts.Sizes()
	train := make(rollout.SliceSource, trainSize)
	for i := range train {
		train[i] = draw(1, uint64(i))
	}
	switch split {
	case Train:
		return train, nil
	case Test:
	default:
		return nil, fmt.Errorf("%s: unknown split %q; use train or test", env, split)
	}
	seen := make(map[string]bool, trainSize+testSize)
	for _, t := range train {
		seen[key(t)] = true
	}
	test := make(rollout.SliceSource, 0, testSize)
	for i := uint64(0); len(test) < testSize; i++ {
		if i > uint64(100*(testSize+trainSize)) {
			return nil, fmt.Errorf("%s: only %d test instances differ from the %d train ones; make the game larger or the splits smaller", env, len(test), trainSize)
		}
		t := draw(2, i)
		if k := key(t); !seen[k] {
			seen[k] = true
			test = append(test, t)
		}
	}
	return test, nil
}
