package rollout

import (
	"fmt"
	"strings"
	"testing"
)

// PettingLLMs' trainer gives step s the tasks at indices (s mod
// epoch_size)·B … +B−1 of its split (multi_agents_execution_engine.py
// init_agents_and_envs, at 244467e): with epoch_size 20 and B 32, steps 0
// and 20 play the same 32 tasks, and task 640 is never drawn. FirstTasks
// with an unshuffled iterator draws exactly those indices, step by step,
// for 45 steps (two epochs and a part); an epoch size over the split, or
// under 1, is refused by name.
func TestFirstTasksReplaysTheEpoch(t *testing.T) {
	const epochSize, batch = 20, 32
	all := make(SliceSource, 1000)
	for i := range all {
		all[i] = Task{ID: fmt.Sprint(i)}
	}
	src, err := FirstTasks(all, epochSize*batch)
	if err != nil {
		t.Fatal(err)
	}
	it, err := NewTaskIterator(src, 7, false)
	if err != nil {
		t.Fatal(err)
	}
	for step := 0; step < 45; step++ {
		got := it.Next(batch)
		for j, task := range got {
			if want := fmt.Sprint((step%epochSize)*batch + j); task.ID != want {
				t.Fatalf("step %d, task %d: got index %s, the reference's %s", step, j, task.ID, want)
			}
		}
	}
	for _, n := range []int{0, 1001} {
		if _, err := FirstTasks(all, n); err == nil || !strings.Contains(err.Error(), "batch.epoch_tasks") {
			t.Errorf("epoch_tasks %d over a split of 1000: got %v, want a refusal naming batch.epoch_tasks", n, err)
		}
	}
}
