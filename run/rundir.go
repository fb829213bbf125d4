package run

// rundir.go — one writer per run directory. Before a run (fresh or resumed)
// writes anything, rank 0 creates run.output_dir, takes its lock
// (internal/dirlock: run.lock, held with flock for the life of the process,
// dropped by the kernel however the process ends, naming its holder), and
// only then, under the lock, looks at what the directory holds: a fresh run
// refuses an earlier run's checkpoints, a resume refuses to rewind past
// newer ones without --force, and with it deletes them (and the export)
// once the resume's own checks passed, before the first new step. Every rank learns rank 0's verdict, so a
// refused data-parallel run stops on every rank with the same line instead
// of hanging in its first collective.
//
// The lock pins the directory, not its name: before every step's log lines
// and checkpoint, and before the export, rank 0 checks that
// run.output_dir still names the directory it locked (dirlock's Check), and
// a run whose directory was renamed or deleted stops on every rank with one
// line, rather than write its checkpoints by path into whatever the name
// means now (a new run's directory, or a recreated checkpoints/) and exit 0.
//
// What it is not: a lock for the commands that read a run (eval, export,
// plot, compare); export writes its own directory (guard.go).

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"troupe/ckpt"
	"troupe/internal/dirlock"
)

// claimRunDir makes this run the one writer of cfg.Run.OutputDir; the lock
// is released by r.close. cp is the checkpoint resumed from (nil: a fresh
// run).
func (r *trainRun) claimRunDir(cp *checkpointRef, force bool) error {
	var err error
	if r.dp.Lead() {
		err = r.claim(cp, force)
	}
	return r.dp.FromLead(err)
}

func (r *trainRun) claim(cp *checkpointRef, force bool) error {
	dir := r.cfg.Run.OutputDir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("run.output_dir %s: cannot create it (%v); set run.output_dir (--set run.output_dir=DIR) to a directory you can write", dir, err)
	}
	lock, err := dirlock.Acquire(dir)
	if err != nil {
		return busyRunDir(dir, err)
	}
	r.lock = lock
	r.closers = append(r.closers, lock.Release)
	if cp == nil {
		return refuseOverwrite(dir, force)
	}
	return refuseRewind(cp, filepath.Join(dir, "checkpoints"), force)
}

// checkRunDir stops the run when run.output_dir no longer names the
// directory rank 0 locked; done is the number of steps completed. Every
// rank calls it at the same point and learns rank 0's answer.
func (r *trainRun) checkRunDir(done int) error {
	var err error
	if r.dp.Lead() {
		err = r.movedRunDir(done)
	}
	return r.dp.FromLead(err)
}

// movedRunDir is rank 0's check of checkRunDir.
func (r *trainRun) movedRunDir(done int) error {
	err := r.lock.Check()
	if err == nil {
		return nil
	}
	var moved *dirlock.MovedError
	if !errors.As(err, &moved) {
		return fmt.Errorf("run.output_dir: %w", err)
	}
	return fmt.Errorf("run.output_dir %s was renamed or deleted during the run (found after step %d): stopped without writing under that name again; what the run wrote is wherever the directory went (resume it there with --resume=DIR)", dirlock.Quote(moved.Dir), done)
}

// refuseFreshRun is what a fresh run (and train check) checks of its output
// directory before it prints anything: that no other run is writing it —
// which says more than what it holds — and that it holds no run (force:
// logs without checkpoints may be replaced).
func refuseFreshRun(dir string, force bool) error {
	if err := dirlock.Probe(dir); err != nil {
		return busyRunDir(dir, err)
	}
	return refuseOverwrite(dir, force)
}

// busyRunDir is the refusal of a run directory another run is writing (err
// a *dirlock.BusyError), or err about its lock otherwise.
func busyRunDir(dir string, err error) error {
	var busy *dirlock.BusyError
	if errors.As(err, &busy) {
		return fmt.Errorf("run.output_dir %s is being written by another run (%s); wait for it to end or stop it, or write elsewhere (--set run.output_dir=DIR, or copy the run with cp -a and resume the copy)", dir, busy.Holder)
	}
	return fmt.Errorf("run.output_dir: %w", err)
}

// abandonLater deletes what a resume from an older checkpoint (--force)
// drops, once every check of the resume has passed and before the run
// writes anything: the later checkpoints, newest first (ckpt.Abandon: a
// crash leaves a prefix of the old timeline, never a mix), then the
// export, made at a later step. The logs are truncated to the
// checkpoint's step next (openLogs), so a plain --resume afterwards can
// only continue the new timeline. Rank 0 deletes; every rank learns how it
// went.
func (r *trainRun) abandonLater(cp *checkpointRef) error {
	var err error
	if cp != nil && r.dp.Lead() {
		err = abandonAfter(r.out, cp, r.cfg.Run.OutputDir)
	}
	return r.dp.FromLead(err)
}

func abandonAfter(out io.Writer, cp *checkpointRef, dir string) error {
	removed, err := ckpt.Abandon(filepath.Join(dir, "checkpoints"), cp.Step)
	if err != nil {
		return fmt.Errorf("resume --force: %w", err)
	}
	if len(removed) == 0 {
		return nil
	}
	export := filepath.Join(dir, "export")
	if _, err := os.Stat(export); err == nil {
		// out of sight at once (one rename), then deleted
		doomed, err := os.MkdirTemp(dir, ".abandoned-export-")
		if err == nil {
			err = os.Rename(export, filepath.Join(doomed, "export"))
		}
		if err != nil {
			return fmt.Errorf("resume --force: removing %s, made at a later step than %s: %w", export, cp.Dir, err)
		}
		os.RemoveAll(doomed)
		removed = append(removed, export)
	}
	fmt.Fprintf(out, "resume --force: deleted what resuming from step %d abandons: %s\n", cp.Step, strings.Join(removed, ", "))
	return nil
}
