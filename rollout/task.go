// task.go — tasks, task sources, scorers, and the resumable data iterator.
//
// What it is: the interface every environment implements (a task source
// plus a scorer), and TaskIterator, the seeded, epoch-shuffled walk over a
// task source whose position (IteratorState) is saved in checkpoints.
//
// What it deliberately is not: a stateful multi-step environment. Math and
// search score a final text; the grid games (plan-path, sokoban, sudoku)
// add a Stepper next to Scorer (stepper.go: reset, step an action, clone a
// state for tree sampling) without changing these types.
package rollout

import "fmt"

// Task is one problem given to a team.
type Task struct {
	ID       string            // stable id (dataset row or generator seed), used in logs and sample rows
	Question string            // the task text shown to the agents (.Task in prompt templates)
	Answer   string            // the gold answer
	Answers  []string          // further accepted gold answers (e.g. search's golden_answers); may be empty
	Meta     map[string]string // free-form extras (source, difficulty, kind…); may be nil
}

// Golds returns Answer followed by Answers, skipping empties and duplicates.
func (t Task) Golds() []string {
	var out []string
	seen := map[string]bool{}
	for _, a := range append([]string{t.Answer}, t.Answers...) {
		if a != "" && !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out
}

// TaskSource is an indexable, immutable list of tasks.
type TaskSource interface {
	Len() int
	Task(i int) Task
}

// Score is an environment's judgement of one final response.
type Score struct {
	Reward    float64 // the team reward
	Success   bool    // counts as solved (accuracy, pass@k)
	Extracted string  // the answer that was judged, for logs ("" if none was found)
	// Metrics are further per-episode measures (search: "f1"), averaged
	// over episodes in evaluation as eval/<name>. May be nil.
	Metrics map[string]float64
}

// Scorer judges a final response to a task. It must be safe for concurrent
// use: the sampler scores episodes on worker goroutines.
type Scorer interface {
	Score(task Task, response string) Score
}

// Environment is a task source plus its scorer.
type Environment interface {
	Name() string
	TaskSource
	Scorer
}

// IteratorState is the data position of a TaskIterator, saved with
// checkpoints so that a resumed run continues with the same next tasks.
type IteratorState struct {
	Seed     uint64 `json:"seed" yaml:"seed"`         // shuffle seed
	Shuffle  bool   `json:"shuffle" yaml:"shuffle"`   // false: dataset order every epoch
	Len      int    `json:"len" yaml:"len"`           // task count of the source when saved (a guard)
	Epoch    int    `json:"epoch" yaml:"epoch"`       // completed passes over the source
	Position int    `json:"position" yaml:"position"` // tasks drawn in the current epoch
}

// TaskIterator draws tasks epoch by epoch; each epoch is a fresh permutation
// derived from (seed, epoch). It is not safe for concurrent use.
type TaskIterator struct {
	src   TaskSource
	state IteratorState
	order []int // permutation of the current epoch
}

// NewTaskIterator starts at epoch 0, position 0.
func NewTaskIterator(src TaskSource, seed uint64, shuffle bool) (*TaskIterator, error) {
	if src == nil || src.Len() == 0 {
		return nil, fmt.Errorf("rollout: task iterator: the task source is empty; load a dataset with at least one task")
	}
	it := &TaskIterator{src: src, state: IteratorState{Seed: seed, Shuffle: shuffle, Len: src.Len()}}
	it.order = it.epochOrder(0)
	return it, nil
}

func (it *TaskIterator) epochOrder(epoch int) []int {
	if !it.state.Shuffle {
		p := make([]int, it.state.Len)
		for i := range p {
			p[i] = i
		}
		return p
	}
	return NewRand(DeriveSeed(it.state.Seed, uint64(epoch))).Perm(it.state.Len)
}

// Next returns the next n tasks, crossing into the next epoch when the
// current one runs out (a batch may hold the same task twice only if
// n exceeds the source size).
func (it *TaskIterator) Next(n int) []Task {
	out := make([]Task, 0, n)
	for len(out) < n {
		if it.state.Position == it.state.Len {
			it.state.Epoch++
			it.state.Position = 0
			it.order = it.epochOrder(it.state.Epoch)
		}
		out = append(out, it.src.Task(it.order[it.state.Position]))
		it.state.Position++
	}
	return out
}

// State returns the current position, to be saved.
func (it *TaskIterator) State() IteratorState { return it.state }

// Restore moves to a saved position. The source must have the same length
// as when the state was saved.
func (it *TaskIterator) Restore(s IteratorState) error {
	if s.Len != it.src.Len() {
		return fmt.Errorf("rollout: task iterator: saved state is for a source of %d tasks, this one has %d; resume with the same dataset and split", s.Len, it.src.Len())
	}
	if s.Position < 0 || s.Position > s.Len || s.Epoch < 0 {
		return fmt.Errorf("rollout: task iterator: saved position epoch=%d position=%d is outside [0, %d]; the checkpoint is corrupt", s.Epoch, s.Position, s.Len)
	}
	it.state = s
	it.order = it.epochOrder(s.Epoch)
	return nil
}

// SliceSource is a TaskSource over a slice.
type SliceSource []Task

func (s SliceSource) Len() int        { return len(s) }
func (s SliceSource) Task(i int) Task { return s[i] }

// FirstTasks is the first n tasks of src: a training split cut to the tasks
// one epoch replays (batch.epoch_tasks). PettingLLMs' trainer draws step
// s's tasks at indices (s mod epoch_size)·B … +B of its split, so its runs
// replay the same epoch_size·B tasks in order every epoch_size steps; a
// TaskIterator over FirstTasks(src, epoch_size·B) without shuffling does
// the same. n must be in [1, src.Len()].
func FirstTasks(src TaskSource, n int) (TaskSource, error) {
	if src == nil || n < 1 || n > src.Len() {
		have := 0
		if src != nil {
			have = src.Len()
		}
		return nil, fmt.Errorf("rollout: batch.epoch_tasks: %d tasks per epoch, but the training split has %d; set it to at most %d, or 0 for the whole split", n, have, have)
	}
	return firstTasks{src, n}, nil
}

type firstTasks struct {
	src TaskSource
	n   int
}

func (f firstTasks) Len() int        { return f.n }
func (f firstTasks) Task(i int) Task { return f.src.Task(i) }
