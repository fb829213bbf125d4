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
