// manifest.go: MANIFEST.json, the list of a checkpoint's files with their
// sizes and SHA-256 digests, and verification against it.
//
// The manifest lists every regular file of the directory except itself, by
// slash-separated path relative to the checkpoint directory. Verification
// refuses a missing file, a size mismatch and a digest mismatch; files that
// the manifest does not list are ignored (notes a person added do not make a
// checkpoint corrupt). Hashing reads every byte: about 1–2 GB/s per core
// (see BenchmarkCommitOpen), a few seconds for a multi-GB checkpoint, paid
// once at save and once at load.
package ckpt

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// ManifestName is the manifest's file name inside a checkpoint directory.
const ManifestName = "MANIFEST.json"

// FormatVersion is the manifest format this package writes and reads.
const FormatVersion = 1

// Manifest describes a committed checkpoint.
type Manifest struct {
	FormatVersion int         `json:"format_version"`
	Step          int         `json:"step"`
	Created       time.Time   `json:"created"`
	Files         []FileEntry `json:"files"` // sorted by Name
}

// FileEntry is one file of a checkpoint.
type FileEntry struct {
	Name   string `json:"name"` // slash-separated, relative to the checkpoint directory
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"` // lower-case hex
}

// hashFile returns the size and SHA-256 of the file at p, fsyncing it first
// so that the bytes hashed are the bytes on disk after a crash.
func hashFile(p string, fsync bool) (int64, string, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	if fsync {
		if err := f.Sync(); err != nil {
			return 0, "", err
		}
	}
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return 0, "", err
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// readManifest reads and checks the shape of dir's manifest; a refusal
// suggests a checkpoint to use instead.
func readManifest(dir string) (*Manifest, error) {
	m, err := parseManifest(dir)
	if err != nil {
		var e *manifestError
		if errors.As(err, &e) {
			return nil, fmt.Errorf("%s%s", e.msg, elsewhere(dir))
		}
		return nil, err
	}
	return m, nil
}

// manifestError is a refusal of a manifest that readManifest extends with a
// suggestion (parseManifest alone does not, so that elsewhere can use it).
type manifestError struct{ msg string }

func (e *manifestError) Error() string { return e.msg }

func refuse(format string, args ...any) error {
	return &manifestError{fmt.Sprintf(format, args...)}
}

// parseManifest reads and checks the shape of dir's manifest.
func parseManifest(dir string) (*Manifest, error) {
	p := filepath.Join(dir, ManifestName)
	if st, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil, refuse("ckpt: checkpoint directory %s does not exist", dir)
	} else if err == nil && !st.IsDir() {
		return nil, fmt.Errorf("ckpt: %s is a file, not a checkpoint directory; pass the step-N directory that holds %s", dir, ManifestName)
	}
	raw, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, refuse("ckpt: %s has no %s: it is not a training checkpoint (a run's checkpoints/step-N directory, which a finished save leaves with its manifest)", dir, ManifestName)
	}
	if err != nil {
		return nil, fmt.Errorf("ckpt: %w", err)
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		if truncated(err) {
			return nil, refuse("ckpt: %s: the manifest is empty or truncated (the save was interrupted)", p)
		}
		return nil, refuse("ckpt: %s: not a manifest (%v); it was edited or replaced by hand", p, err)
	}
	if m.FormatVersion != FormatVersion {
		return nil, fmt.Errorf("ckpt: %s: format_version %d, this build reads %d; use the troupe version that wrote it", p, m.FormatVersion, FormatVersion)
	}
	for i, f := range m.Files {
		if !validRelativePath(f.Name) || f.Name == ManifestName {
			return nil, fmt.Errorf("ckpt: %s: files[%d].name %q must be a relative path inside the checkpoint", p, i, f.Name)
		}
		if len(f.SHA256) != 64 || strings.Trim(f.SHA256, "0123456789abcdef") != "" {
			return nil, fmt.Errorf("ckpt: %s: files[%d] (%s): sha256 %q is not 64 lower-case hex digits", p, i, f.Name, f.SHA256)
		}
	}
	return &m, nil
}

// verify checks every listed file of dir against the manifest.
func (m *Manifest) verify(dir string) error {
	if err := m.refuseUnlisted(dir); err != nil {
		return err
	}
	for _, f := range m.Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		st, err := os.Stat(p)
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("ckpt: %s is corrupt: %s is missing (the manifest lists %d bytes)", dir, f.Name, f.Size)
		}
		if err != nil {
			return fmt.Errorf("ckpt: %w", err)
		}
		if st.Size() != f.Size {
			return fmt.Errorf("ckpt: %s is corrupt: %s is %d bytes, the manifest says %d", dir, f.Name, st.Size(), f.Size)
		}
		_, sum, err := hashFile(p, false)
		if err != nil {
			return fmt.Errorf("ckpt: %w", err)
		}
		if sum != f.SHA256 {
			return fmt.Errorf("ckpt: %s is corrupt: %s has sha256 %s, the manifest says %s", dir, f.Name, sum, f.SHA256)
		}
	}
	return nil
}

// refuseUnlisted refuses a file under dir that the manifest does not list
// (other than the manifest): the loaders read files by name, so a file
// added after the save (a tokenizer_config.json, say) would be loaded
// unverified. Names starting with '.' are not loaded by anything and are
// let be.
func (m *Manifest) refuseUnlisted(dir string) error {
	listed := map[string]bool{ManifestName: true}
	for _, f := range m.Files {
		listed[f.Name] = true
	}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("ckpt: %w", err)
		}
		if p == dir {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return fmt.Errorf("ckpt: %w", err)
		}
		if name := filepath.ToSlash(rel); !listed[name] {
			return fmt.Errorf("ckpt: %s holds %s, which its manifest does not list (added after the save?); a checkpoint loads only what its manifest lists and hashes: move the file out of the checkpoint", dir, name)
		}
		return nil
	})
}

// validRelativePath reports whether name is a clean, slash-separated path
// that stays inside its directory.
func validRelativePath(name string) bool {
	return name != "" && !strings.HasPrefix(name, "/") && !strings.Contains(name, `\`) &&
		path.Clean(name) == name && name != "." && name != ".." && !strings.HasPrefix(name, "../")
}
