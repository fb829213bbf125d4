// integrity.go: what a refused checkpoint's error suggests instead, and the
// cross-check of a checkpoint's own records against its manifest.
//
// A manifest that is empty or cut short is what an interrupted save of an
// older troupe (or a copy that ran out of space) leaves behind; the error
// says so in those words and names the newest sibling checkpoint that does
// verify, rather than the JSON decoder's "EOF". A directory that is not
// there is named as missing, with the checkpoints its parent does hold.
//
// CheckStep catches a checkpoint whose files were edited and whose hashes
// were then recomputed: the manifest verifies, but the step recorded inside
// (train_state.json) no longer matches the step of the manifest and the
// directory name, and resuming would continue from the wrong place.
//
// What it is not: a repair tool. Nothing here changes a checkpoint.
package ckpt

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
)

// truncated reports whether a JSON decode error means the input ended early
// (empty, or cut inside a value).
func truncated(err error) bool {
	var syn *json.SyntaxError
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		(errors.As(err, &syn) && strings.Contains(syn.Error(), "unexpected end"))
}

// elsewhere is the suggestion appended to an error refusing dir: the
// newest other checkpoint beside it that verifies, or, for a run directory,
// its newest checkpoint. "" when there is nothing to suggest. It names
// directories, not flags: resume, eval and export all open checkpoints.
func elsewhere(dir string) string {
	if all, err := List(filepath.Join(dir, "checkpoints")); err == nil && len(all) > 0 {
		return fmt.Sprintf(" — %s is a run directory; its newest checkpoint is %s", dir, all[len(all)-1].Dir)
	}
	parent := filepath.Dir(filepath.Clean(dir))
	all, err := List(parent)
	if err != nil || len(all) == 0 {
		return ""
	}
	for i := len(all) - 1; i >= 0; i-- {
		e := all[i]
		if filepath.Clean(e.Dir) == filepath.Clean(dir) {
			continue
		}
		if verifies(e.Dir) {
			return fmt.Sprintf(" — use %s instead (%s), the newest checkpoint beside it that verifies", filepath.Base(e.Dir), e.Dir)
		}
	}
	names := make([]string, len(all))
	for i, e := range all {
		names[i] = filepath.Base(e.Dir)
	}
	return fmt.Sprintf(" (no other checkpoint under %s verifies: %s)", parent, strings.Join(names, ", "))
}

// verifies reports whether dir is a committed checkpoint whose files match
// its manifest, without building suggestions (no recursion into siblings).
func verifies(dir string) bool {
	m, err := parseManifest(dir)
	if err != nil {
		return false
	}
	if match := stepDirPattern.FindStringSubmatch(filepath.Base(dir)); match != nil {
		if step, _ := strconv.Atoi(match[1]); step != m.Step {
			return false
		}
	}
	return m.verify(dir) == nil
}

// CheckStep compares the step a checkpoint's own train state records
// (recorded, read from the file named file) with its manifest's step and
// its directory name. It reads only the manifest (Open has verified the
// files). A mismatch means the checkpoint was edited after it was saved and
// its hashes recomputed: the data position, the schedules and the counters
// would continue from a step other than the one it claims.
func CheckStep(dir, file string, recorded int) error {
	m, err := readManifest(dir)
	if err != nil {
		return err
	}
	if recorded != m.Step {
		return fmt.Errorf("ckpt: %s: %s records step %d but the checkpoint's manifest says step %d; the file was changed after the save (and the manifest rehashed), so it is not the state of step %d — resume from an untouched checkpoint%s",
			dir, file, recorded, m.Step, m.Step, elsewhere(dir))
	}
	if match := stepDirPattern.FindStringSubmatch(filepath.Base(dir)); match != nil {
		if step, _ := strconv.Atoi(match[1]); step != recorded {
			return fmt.Errorf("ckpt: %s: the directory name says step %d, %s records step %d; it was renamed or edited by hand", dir, step, file, recorded)
		}
	}
	return nil
}
