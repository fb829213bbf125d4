// retention.go: keeping the newest K checkpoints, dropping the later
// checkpoints of an abandoned timeline, and cleaning up after crashed
// saves.
//
// Deleting a checkpoint first renames it to a .tmp-prune-* name, so that a
// crash halfway through the deletion never leaves a half-deleted step-*
// directory that List would report; the leftover is removed by the next
// cleanup like any other .tmp-* directory.
package ckpt

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"troupe/internal/atomicfile"
	"troupe/internal/dirlock"
)

const (
	tmpPrefix   = ".tmp-"       // saves in progress, and checkpoints being deleted
	oldPrefix   = ".old-"       // a checkpoint being replaced by a re-commit
	prunePrefix = ".tmp-prune-" // a checkpoint being deleted by Prune
)

var oldDirPattern = regexp.MustCompile(`^\.old-(step-[0-9]+)-[^/]*$`)

// Prune deletes committed checkpoints under root, keeping the keep ones with
// the highest steps and, whatever its step, the checkpoint directory
// protect (normally the one just written; "" protects nothing). keep ≤ 0
// keeps everything. It returns the deleted directories.
func Prune(root string, keep int, protect string) ([]string, error) {
	if keep <= 0 {
		return nil, nil
	}
	all, err := List(root)
	if err != nil {
		return nil, err
	}
	var removed []string
	for i, e := range all {
		newest := i >= len(all)-keep
		if newest || (protect != "" && sameDir(e.Dir, protect)) {
			continue
		}
		doomed, err := unusedName(root, prunePrefix+filepath.Base(e.Dir)+"-")
		if err != nil {
			return removed, err
		}
		if err := os.Rename(e.Dir, doomed); err != nil {
			return removed, fmt.Errorf("ckpt: pruning %s: %w", e.Dir, err)
		}
		if err := os.RemoveAll(doomed); err != nil {
			return removed, fmt.Errorf("ckpt: pruning %s (moved to %s): %w", e.Dir, doomed, err)
		}
		removed = append(removed, e.Dir)
	}
	if len(removed) > 0 {
		if err := atomicfile.SyncDir(root); err != nil {
			return removed, fmt.Errorf("ckpt: %w", err)
		}
	}
	return removed, nil
}

// Abandon deletes every committed checkpoint under root whose step is
// above step: the later checkpoints of a run resumed, on purpose, from an
// older one. It renames them out of the listing newest first, then deletes
// them, so at every instant of a crash what List still reports is a prefix
// of the old timeline (whose logs are intact, the caller truncates them
// afterwards), never a mix. It returns the deleted directories, oldest
// first.
func Abandon(root string, step int) ([]string, error) {
	all, err := List(root)
	if err != nil {
		return nil, err
	}
	var doomed, removed []string
	for i := len(all) - 1; i >= 0 && all[i].Step > step; i-- {
		e := all[i]
		tmp, err := unusedName(root, prunePrefix+filepath.Base(e.Dir)+"-")
		if err != nil {
			return removed, err
		}
		if err := os.Rename(e.Dir, tmp); err != nil {
			return removed, fmt.Errorf("ckpt: abandoning %s: %w", e.Dir, err)
		}
		doomed = append(doomed, tmp)
		removed = append([]string{e.Dir}, removed...)
	}
	if len(doomed) == 0 {
		return nil, nil
	}
	if err := atomicfile.SyncDir(root); err != nil {
		return removed, fmt.Errorf("ckpt: %w", err)
	}
	for _, d := range doomed {
		if err := os.RemoveAll(d); err != nil { // a leftover .tmp-* is removed by the next save
			return removed, fmt.Errorf("ckpt: deleting %s: %w", d, err)
		}
	}
	return removed, nil
}

// cleanStale removes what crashed saves left under root and returns one line
// per action: .tmp-* directories are deleted unless a live writer holds
// them (internal/dirlock's RemoveIfFree); a .old-step-N-* directory is
// renamed back to step-N when step-N is missing (a crash between the two
// renames of a re-commit), and deleted otherwise.
func cleanStale(root string) ([]string, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("ckpt: %w", err)
	}
	var report []string
	for _, e := range entries {
		name := e.Name()
		p := filepath.Join(root, name)
		switch {
		case strings.HasPrefix(name, tmpPrefix):
			removed, err := dirlock.RemoveIfFree(p)
			if err != nil {
				return report, fmt.Errorf("ckpt: removing stale %s: %w", p, err)
			}
			if removed {
				report = append(report, fmt.Sprintf("removed %s: left by a save that never committed (crash or abort)", p))
			}
		case oldDirPattern.MatchString(name):
			final := filepath.Join(root, oldDirPattern.FindStringSubmatch(name)[1])
			if _, err := os.Lstat(final); os.IsNotExist(err) {
				if err := os.Rename(p, final); err != nil {
					return report, fmt.Errorf("ckpt: restoring %s from %s: %w", final, p, err)
				}
				report = append(report, fmt.Sprintf("restored %s from %s: a re-commit of that step was interrupted", final, p))
				continue
			}
			if err := os.RemoveAll(p); err != nil {
				return report, fmt.Errorf("ckpt: removing stale %s: %w", p, err)
			}
			report = append(report, fmt.Sprintf("removed %s: the replaced copy of a re-committed checkpoint", p))
		}
	}
	if len(report) > 0 {
		if err := atomicfile.SyncDir(root); err != nil {
			return report, fmt.Errorf("ckpt: %w", err)
		}
	}
	return report, nil
}

func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}
