package run

// nextcommand.go — what a stopped run tells the user to run next: the
// exact command that continues it (internal/cmdline writes it), from the
// checkpoint the interruption wrote, or from the newest one there is.
//
// What it is not: the resume itself (resume.go) or the checkpoint
// (state.go).

import (
	"fmt"
	"path/filepath"

	"troupe/ckpt"
	"troupe/internal/cmdline"
	"troupe/rollout"
)

// interruptedError is the error a run returns when a signal stopped it
// after step done; saved says whether it checkpointed that step. world is
// the number of data-parallel ranks (1 without data parallelism).
func interruptedError(outputDir string, done int, saved bool, world int) error {
	launcher := ""
	if world > 1 {
		launcher = fmt.Sprintf(" (start it the way this run was started: --nproc %d, or torchrun with %d ranks)", world, world)
	}
	if saved {
		return fmt.Errorf("interrupted after step %d, saved; continue with: %s%s", done, cmdline.Resume(outputDir), launcher)
	}
	entries, err := ckpt.List(filepath.Join(outputDir, "checkpoints"))
	if err != nil || len(entries) == 0 {
		return fmt.Errorf("interrupted after step %d with no checkpoint written (checkpoint.on_signal is false and no periodic checkpoint was due); start the run again with the same command and --force (it replaces this run's logs)", done)
	}
	newest := entries[len(entries)-1]
	return fmt.Errorf("interrupted after step %d without a checkpoint of it (checkpoint.on_signal is false); continue from step %d, the newest checkpoint, with: %s%s",
		done, newest.Step, cmdline.Resume(outputDir), launcher)
}

// dropStep ends a run whose step (0-based) a signal stopped in its
// rollout: the step is dropped — its tasks are drawn again on resume (the
// iterator goes back to drawn) — and the state after the step before,
// which the weights still are, is saved when checkpoint.on_signal asks and
// the run has no checkpoint of it yet. Every rank calls it.
func (r *trainRun) dropStep(step int, drawn rollout.IteratorState) error {
	if err := r.iter.Restore(drawn); err != nil {
		return err
	}
	fmt.Fprintf(r.out, "step %d's rollout stopped by the signal: the step is dropped\n", step+1)
	if step == 0 {
		return fmt.Errorf("interrupted in step 1's rollout, before any step was done; nothing to save: start the run again with the same command")
	}
	saved := r.saved == step                                                   // already checkpointed (checkpoint.every, or the resumed checkpoint)
	if !saved && r.cfg.Checkpoint.OnSignal && (r.dp.lead() || r.t.sharded()) { // sharded state is gathered by every rank
		dir, err := save(r.t, r.iter, step, r.dp, r.lock)
		if err != nil {
			if moved := r.movedRunDir(step); moved != nil {
				return moved
			}
			return fmt.Errorf("step %d: checkpoint: %w", step, err)
		}
		if r.dp.lead() {
			fmt.Fprintf(r.out, "checkpoint: %s\n", dir)
		}
	}
	saved = saved || r.cfg.Checkpoint.OnSignal // rank 0 saved it, on every rank's word
	return interruptedError(r.cfg.Run.OutputDir, step, saved, r.dp.worldSize())
}
