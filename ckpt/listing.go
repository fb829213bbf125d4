// listing.go: finding committed checkpoints and opening them verified.
//
// A committed checkpoint is a directory named step-<digits> directly under
// the root. Directories starting with '.' (saves in progress, replaced
// copies) are never listed. List is cheap and does not verify; Open and
// Latest verify every file against the manifest and refuse a corrupt
// checkpoint with an error naming the file and the expected and actual
// values, or one holding a file the manifest does not list (manifest.go). Latest does not fall back to an older checkpoint when the newest is
// corrupt: silently resuming from further back would hide the damage, so the
// caller decides (the error says how).
package ckpt

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// ErrNoCheckpoint is returned (wrapped) by Latest when the root holds no
// committed checkpoint.
var ErrNoCheckpoint = errors.New("no checkpoint")

var stepDirPattern = regexp.MustCompile(`^step-([0-9]+)$`)

// Entry is a committed checkpoint as found by List, not yet verified.
type Entry struct {
	Step int
	Dir  string
}

// Checkpoint is a verified checkpoint directory.
type Checkpoint struct {
	Dir      string
	Step     int
	Manifest *Manifest
}

// Path joins a slash-separated file name onto the checkpoint directory.
func (c *Checkpoint) Path(name string) string {
	return filepath.Join(c.Dir, filepath.FromSlash(name))
}

// Has reports whether the manifest lists the named file.
func (c *Checkpoint) Has(name string) bool {
	for _, f := range c.Manifest.Files {
		if f.Name == name {
			return true
		}
	}
	return false
}

// List returns the committed checkpoints under root, sorted by step. A
// missing root holds none.
func List(root string) ([]Entry, error) {
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ckpt: %w", err)
	}
	var out []Entry
	for _, e := range entries {
		m := stepDirPattern.FindStringSubmatch(e.Name())
		if m == nil || !e.IsDir() {
			continue
		}
		step, err := strconv.Atoi(m[1])
		if err != nil {
			continue // more digits than an int holds: not ours
		}
		out = append(out, Entry{Step: step, Dir: filepath.Join(root, e.Name())})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Step < out[j].Step })
	return out, nil
}

// Latest opens and verifies the checkpoint with the highest step under root.
// With none, the error wraps ErrNoCheckpoint.
func Latest(root string) (*Checkpoint, error) {
	all, err := List(root)
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("ckpt: %w under %s", ErrNoCheckpoint, root)
	}
	newest := all[len(all)-1]
	cp, err := Open(newest.Dir)
	if err != nil && len(all) > 1 && !strings.Contains(err.Error(), " — resume from ") {
		return nil, fmt.Errorf("%w (the newest checkpoint is refused; to resume from an older one, move %s out of %s, or open %s explicitly)",
			err, filepath.Base(newest.Dir), root, all[len(all)-2].Dir)
	}
	return cp, err
}

// Open reads dir's manifest and verifies every file it lists.
func Open(dir string) (*Checkpoint, error) {
	m, err := readManifest(dir)
	if err != nil {
		return nil, err
	}
	if match := stepDirPattern.FindStringSubmatch(filepath.Base(dir)); match != nil {
		if step, _ := strconv.Atoi(match[1]); step != m.Step {
			return nil, fmt.Errorf("ckpt: %s: directory name says step %d, its manifest says %d; it was renamed by hand", dir, step, m.Step)
		}
	}
	if err := m.verify(dir); err != nil {
		return nil, err
	}
	return &Checkpoint{Dir: dir, Step: m.Step, Manifest: m}, nil
}
