package run

// nextcommand.go — what a stopped run tells the user to run next: the
// exact command that continues it (internal/cmdline writes it), from the
// checkpoint the interruption wrote, or from the newest one there is.
//
// What it is not: the resume itself (resume.go) or the checkpoint
// (state.go).

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"troupe/dist"

	"troupe/ckpt"
	"troupe/internal/cmdline"
	"troupe/rollout"
)

// Interrupted is the error of a run that a signal stopped in order: what
// it saved and the command that continues it. Under data parallel every
// rank returns it; rank 0 alone prints it (cmd/train), and a launcher
// whose ranks all stopped so says nothing more.
type Interrupted struct{ msg string }

func (e *Interrupted) Error() string { return e.msg }

// IsInterrupted says whether err is (or wraps) an *Interrupted.
func IsInterrupted(err error) bool {
	var i *Interrupted
	return errors.As(err, &i)
}

func interrupted(format string, args ...any) error {
	return &Interrupted{msg: fmt.Sprintf(format, args...)}
}

// interruptedError is the error a run returns when a signal stopped it
// after step done; saved says whether it checkpointed that step. world is
// the number of data-parallel ranks (1 without data parallelism): the
// command that continues the run starts as many (--nproc N when this run's
// ranks came from train --nproc).
func interruptedError(outputDir string, done int, saved bool, world int) error {
	resume := []string{"--resume=" + shortPath(outputDir)}
	launcher := ""
	switch {
	case world > 1 && os.Getenv(dist.LauncherEnv) != "":
		resume = append(resume, "--nproc", strconv.Itoa(world))
	case world > 1:
		launcher = fmt.Sprintf(" (started as this run was: torchrun with %d ranks)", world)
	}
	if saved {
		return interrupted("interrupted after step %d, saved; continue with: %s%s", done, cmdline.Train(resume...), launcher)
	}
	entries, err := ckpt.List(filepath.Join(outputDir, "checkpoints"))
	if err != nil || len(entries) == 0 {
		return interrupted("interrupted after step %d with no checkpoint written (checkpoint.on_signal is false and no periodic checkpoint was due); start the run again with the same command and --force (it replaces this run's logs)", done)
	}
	newest := entries[len(entries)-1]
	return interrupted("interrupted after step %d without a checkpoint of it (checkpoint.on_signal is false); continue from step %d, the newest checkpoint, with: %s%s",
		done, newest.Step, cmdline.Train(resume...), launcher)
}

// shortPath is dir relative to the working directory when it lies below
// it, else as given.
func shortPath(dir string) string {
	abs, err := filepath.Abs(dir)
	wd, werr := os.Getwd()
	if err != nil || werr != nil {
		return dir
	}
	rel, err := filepath.Rel(wd, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return dir
	}
	return rel
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
		return interrupted("interrupted in step 1's rollout, before any step was done; nothing to save: start the run again with the same command")
	}
	saved := r.saved == step                                                   // already checkpointed (checkpoint.every, or the resumed checkpoint)
	if !saved && r.cfg.Checkpoint.OnSignal && (r.dp.Lead() || r.t.sharded()) { // sharded state is gathered by every rank
		dir, err := save(r.t, r.iter.State(), step, r.dp, r.lock)
		if err != nil {
			if moved := r.movedRunDir(step); moved != nil {
				return moved
			}
			return fmt.Errorf("step %d: checkpoint: %w", step, err)
		}
		if r.dp.Lead() {
			fmt.Fprintf(r.out, "checkpoint: %s\n", dir)
		}
	}
	saved = saved || r.cfg.Checkpoint.OnSignal // rank 0 saved it, on every rank's word
	return interruptedError(r.cfg.Run.OutputDir, step, saved, r.dp.World())
}
