package suggest

// modeldir.go — the model directory a path that holds none was probably
// meant to be: a Hugging Face directory is one with a config.json. Looked
// for, in order: inside the path (runs/demo/sft → runs/demo/sft/tiny),
// inside a training checkpoint (models/<name>, or `train export`), inside a
// run directory (export/<name>, or its newest checkpoint), and beside the
// first part of the path that does not exist (runs/demo/stf/tiny →
// runs/demo/sft/tiny).
//
// What it is not: a search of the disk; it reads only the path's own
// directories and their children.

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"troupe/internal/cmdline"
)

// manifestName marks a training checkpoint directory (ckpt.ManifestName;
// this package sits below ckpt and cannot import it).
const manifestName = "MANIFEST.json"

// ModelDir returns a hint for a model path that has no config.json, or ""
// when nothing near it is a model directory.
func ModelDir(path string) string {
	clean := filepath.Clean(path)
	if st, err := os.Stat(clean); err == nil && st.IsDir() {
		if isFile(filepath.Join(clean, manifestName)) {
			models := modelsIn(filepath.Join(clean, "models"))
			if len(models) == 0 {
				return ""
			}
			export := []string{"export", "--checkpoint", path}
			if run := filepath.Dir(filepath.Dir(clean)); filepath.Base(filepath.Dir(clean)) == "checkpoints" && isDir(filepath.Join(run, "export")) {
				export = append(export, "--out", filepath.Join(run, "export-"+filepath.Base(clean))) // the default, export/, is taken
			}
			return fmt.Sprintf("%s is a training checkpoint: its models are %s, or write them as Hugging Face directories with `%s`",
				path, orList(models), cmdline.Train(export...))
		}
		if models := modelsIn(filepath.Join(clean, "export")); len(models) > 0 {
			return fmt.Sprintf("%s is a run directory: its exported models are %s", path, orList(models))
		}
		if isDir(filepath.Join(clean, "checkpoints")) {
			return fmt.Sprintf("%s is a run directory with no export/; write one with `%s`", path, cmdline.Train("export", "--checkpoint", path))
		}
		if models := modelsIn(clean); len(models) > 0 {
			return "did you mean " + orList(models) + "?"
		}
		return ""
	}
	// the first part of the path that does not exist, and its closest
	// sibling that does
	parts := strings.Split(filepath.ToSlash(clean), "/")
	for i := range parts {
		prefix := filepath.FromSlash(strings.Join(parts[:i+1], "/"))
		if i == 0 && prefix == "" {
			continue // an absolute path's root
		}
		if _, err := os.Stat(prefix); err == nil {
			continue
		}
		parent := filepath.Dir(prefix)
		entries, err := os.ReadDir(parent)
		if err != nil {
			return ""
		}
		var names []string
		for _, e := range entries {
			if e.IsDir() {
				names = append(names, e.Name())
			}
		}
		near := Closest(parts[i], names)
		if near == "" {
			return ""
		}
		fixed := filepath.Join(append([]string{parent, near}, parts[i+1:]...)...)
		if isFile(filepath.Join(fixed, "config.json")) {
			return fmt.Sprintf("did you mean %s?", fixed)
		}
		// the corrected path, looked at in turn (the parts up to i now
		// exist, so this ends)
		hint := ModelDir(fixed)
		if hint == "" || strings.HasPrefix(hint, "did you mean") {
			return hint
		}
		return fmt.Sprintf("did you mean %s? %s", fixed, hint)
	}
	return ""
}

// modelsIn lists dir's subdirectories that hold a config.json.
func modelsIn(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if e.IsDir() && isFile(filepath.Join(p, "config.json")) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

func orList(xs []string) string {
	if len(xs) <= 1 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
