package run

// shard.go — the run's side of sharded training (policy/shard.go,
// models.<name>.shard): what the run says about it, and the tests' hook for
// killing a rank in the middle of a checkpoint.
//
// The step loop itself changes in one place: a checkpoint of a sharded
// model is gathered by every rank (state.go's save, called on every rank),
// then written by rank 0 alone, as an unsharded run writes it.

import (
	"fmt"
	"os"
	"strconv"
)

// SaveKillEnv, when set to a step, makes rank 0 kill itself (SIGKILL, as
// kill -9) while writing that step's checkpoint, after the first model's
// state is in it: the tests' way to interrupt a save at a known point.
const SaveKillEnv = "TROUPE_TEST_SAVE_KILL"

// killInSave is the SaveKillEnv hook, called after model i's state is
// written.
func killInSave(step, i int) {
	if i != 0 || os.Getenv(SaveKillEnv) != strconv.Itoa(step) {
		return
	}
	fmt.Fprintf(os.Stderr, "killing this process in the checkpoint of step %d (%s)\n", step, SaveKillEnv)
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		p.Kill()
	}
	select {} // the signal arrives
}

// shardLines describe each trained model's sharding, for the run's
// opening lines.
func shardLines(t *team) []string {
	var out []string
	for _, tr := range t.trained {
		level := tr.Model.Shard
		if level == 0 {
			continue
		}
		if t.dist == nil {
			out = append(out, fmt.Sprintf("note: models.%s.shard is %d but this is one process: model %s trains unsharded (start ranks with --nproc)", tr.Source, level, tr.Name))
			continue
		}
		what := []string{"", "its float32 masters and AdamW moments", "its masters, moments and grads", "its masters, moments, grads and, during the update, its weights"}[level]
		out = append(out, fmt.Sprintf("model %s: shard %d: %s spread over the %d ranks", tr.Name, level, what, t.dist.World()))
	}
	return out
}
