// writer.go: saving one checkpoint directory atomically.
//
//	w, err := ckpt.Begin(root, step)   // .tmp-step-000123-<pid>.<random>/
//	... write files under w.Dir() ...
//	cp, err := w.Commit()              // MANIFEST.json, fsync, rename to step-000123/
//	// or w.Abort() on any error
//
// Commit's order: fsync and hash every file, write and fsync the manifest,
// fsync every directory of the tree, rename the tree to its final name, fsync
// the root. Re-committing a step that already exists renames the old
// directory away (.old-step-000123-<random>), renames the new one in and then
// removes the old one; if a crash falls between the two renames, the next
// Begin puts the old checkpoint back (retention.go). The temporary directory
// is named by its writer and held by it (internal/dirlock's MakeTemp) until
// Commit or Abort: another writer's clean-up leaves it alone while it is
// written.
//
// Not here: what the files contain, listing and verification (listing.go),
// retention (retention.go).
package ckpt

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"troupe/internal/atomicfile"
	"troupe/internal/dirlock"
)

// Writer is a checkpoint being saved. It is not safe for concurrent use.
type Writer struct {
	root, tmp string
	hold      *dirlock.Temp
	step      int
	cleaned   []string
	done      bool // committed or aborted
}

// DirName is the directory name of the checkpoint of a step: step-000123
// (more digits past 999999).
func DirName(step int) string { return fmt.Sprintf("step-%06d", step) }

// Begin starts saving the checkpoint of step under root (created if
// missing). It first cleans up what crashed saves left behind (see
// Writer.Cleaned).
func Begin(root string, step int) (*Writer, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("ckpt: %w", err)
	}
	return BeginIn(root, step)
}

// BeginIn is Begin under a root that must exist: a writer that pins its
// directory (a run, internal/dirlock) makes root itself, and a root that is
// gone stops the save rather than be made again at a name that may now mean
// another directory.
func BeginIn(root string, step int) (*Writer, error) {
	if step < 0 {
		return nil, fmt.Errorf("ckpt: step must be >= 0, got %d", step)
	}
	cleaned, err := cleanStale(root)
	if err != nil {
		return nil, err
	}
	hold, err := dirlock.MakeTemp(root, tmpPrefix+DirName(step)+"-")
	if err != nil {
		return nil, fmt.Errorf("ckpt: %w", err)
	}
	return &Writer{root: root, tmp: hold.Path, hold: hold, step: step, cleaned: cleaned}, nil
}

// Dir is the temporary directory to write the checkpoint's files into.
func (w *Writer) Dir() string { return w.tmp }

// Path joins a slash-separated name onto Dir.
func (w *Writer) Path(name string) string { return filepath.Join(w.tmp, filepath.FromSlash(name)) }

// Step is the step being saved.
func (w *Writer) Step() int { return w.step }

// Cleaned describes, one line each, what Begin removed or restored: stale
// temporary directories of crashed or aborted saves, and checkpoints put back
// after an interrupted re-commit. The caller should log them.
func (w *Writer) Cleaned() []string { return append([]string(nil), w.cleaned...) }

// Commit seals the checkpoint (see the file comment) and returns it. On
// error the temporary directory is removed and an existing checkpoint of the
// same step is left as it was.
func (w *Writer) Commit() (cp *Checkpoint, err error) {
	if w.done {
		return nil, fmt.Errorf("ckpt: %s: Commit after Commit or Abort", w.tmp)
	}
	w.done = true
	defer func() {
		if err != nil {
			os.RemoveAll(w.tmp)
		}
		w.hold.Release()
	}()
	files, dirs, err := scanTree(w.tmp)
	if err != nil {
		return nil, err
	}
	m := &Manifest{FormatVersion: FormatVersion, Step: w.step, Created: time.Now().UTC()}
	for _, name := range files {
		size, sum, err := hashFile(filepath.Join(w.tmp, filepath.FromSlash(name)), true)
		if err != nil {
			return nil, fmt.Errorf("ckpt: sealing %s: %w", name, err)
		}
		m.Files = append(m.Files, FileEntry{Name: name, Size: size, SHA256: sum})
	}
	if err := writeManifest(w.tmp, m); err != nil {
		return nil, err
	}
	for _, d := range dirs { // deepest first, the root of the tree last
		if err := atomicfile.SyncDir(d); err != nil {
			return nil, fmt.Errorf("ckpt: %w", err)
		}
	}
	final := filepath.Join(w.root, DirName(w.step))
	if err := swapDir(w.root, w.tmp, final, oldPrefix+DirName(w.step)+"-"); err != nil {
		return nil, err
	}
	return &Checkpoint{Dir: final, Step: w.step, Manifest: m}, nil
}

// Abort removes the temporary directory. It is a no-op after Commit or a
// previous Abort.
func (w *Writer) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	if err := w.hold.Remove(); err != nil {
		return fmt.Errorf("ckpt: aborting %s: %w", w.tmp, err)
	}
	return nil
}

// scanTree lists the regular files under dir (slash-separated, sorted) and
// its directories (deepest first, dir itself last). Anything else, and a
// caller-written MANIFEST.json, is an error.
func scanTree(dir string) (files, dirs []string, err error) {
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			dirs = append(dirs, p)
		case !d.Type().IsRegular():
			return fmt.Errorf("ckpt: %s: %s is a %v, not a regular file; checkpoints hold regular files only", dir, rel, d.Type())
		case rel == ManifestName:
			return fmt.Errorf("ckpt: %s: %s is written by Commit; do not create it", dir, ManifestName)
		default:
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(files)
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
	return files, dirs, nil
}

func writeManifest(dir string, m *Manifest) error {
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("ckpt: encoding manifest: %w", err)
	}
	raw = append(raw, '\n')
	p := filepath.Join(dir, ManifestName)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("ckpt: %w", err)
	}
	if _, err := f.Write(raw); err != nil {
		f.Close()
		return fmt.Errorf("ckpt: writing %s: %w", p, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("ckpt: %w", err)
	}
	return f.Close()
}

// swapDir renames tmp to final; an existing final is renamed away first (to
// parent/oldPrefix<random>) and removed after, so that final always names a
// complete directory: the old one or the new one. Checkpoint commits and
// exports both replace directories this way.
func swapDir(parent, tmp, final, oldPrefix string) error {
	_, err := os.Lstat(final)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.Rename(tmp, final); err != nil {
			return fmt.Errorf("ckpt: %w", err)
		}
		return atomicfile.SyncDir(parent)
	case err != nil:
		return fmt.Errorf("ckpt: %w", err)
	}
	old, err := unusedName(parent, oldPrefix)
	if err != nil {
		return err
	}
	if err := os.Rename(final, old); err != nil {
		return fmt.Errorf("ckpt: moving the previous %s aside: %w", final, err)
	}
	if err := os.Rename(tmp, final); err != nil {
		if backErr := os.Rename(old, final); backErr != nil {
			return fmt.Errorf("ckpt: renaming %s to %s: %v; putting the previous one back from %s also failed: %v", tmp, final, err, old, backErr)
		}
		return fmt.Errorf("ckpt: renaming %s to %s: %w", tmp, final, err)
	}
	if err := atomicfile.SyncDir(parent); err != nil {
		return fmt.Errorf("ckpt: %w", err)
	}
	if err := os.RemoveAll(old); err != nil {
		return fmt.Errorf("ckpt: wrote %s, but removing the replaced copy %s failed: %w", final, old, err)
	}
	return nil
}

// unusedName returns a path root/prefix<random hex> that does not exist yet.
// (os.Rename refuses an existing directory as its target, even an empty
// one, so a name cannot be reserved with MkdirTemp.)
func unusedName(root, prefix string) (string, error) {
	for range 10 {
		var b [6]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", fmt.Errorf("ckpt: %w", err)
		}
		p := filepath.Join(root, prefix+hex.EncodeToString(b[:]))
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			return p, nil
		}
	}
	return "", fmt.Errorf("ckpt: no unused name %s* under %s after 10 tries", prefix, root)
}
