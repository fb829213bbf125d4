package ckpt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rehash rewrites dir's manifest so that it matches the files as they are
// now: what a person who edited a checkpoint and "fixed" its hashes does.
func rehash(t *testing.T, dir string) {
	t.Helper()
	m, err := parseManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range m.Files {
		n, sum, err := hashFile(filepath.Join(dir, filepath.FromSlash(f.Name)), false)
		if err != nil {
			t.Fatal(err)
		}
		m.Files[i].Size, m.Files[i].SHA256 = n, sum
	}
	writeOver(t, dir, m)
}

func writeOver(t *testing.T, dir string, m *Manifest) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, ManifestName)); err != nil {
		t.Fatal(err)
	}
	if err := writeManifest(dir, m); err != nil {
		t.Fatal(err)
	}
}

func TestManifestErrorsSayWhatToDo(t *testing.T) {
	root := t.TempDir()
	good := save(t, root, 1, map[string]string{"train_state.json": `{"step": 1}`})
	bad := save(t, root, 2, map[string]string{"train_state.json": `{"step": 2}`})
	manifest := filepath.Join(bad.Dir, ManifestName)
	raw, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		manifest []byte // nil: remove the directory
		dir      string
		want     []string
	}{
		{"empty manifest", []byte{}, bad.Dir, []string{"the manifest is empty or truncated (the save was interrupted)", "use step-000001 instead", good.Dir}},
		{"truncated manifest", raw[:len(raw)/2], bad.Dir, []string{"empty or truncated", "use step-000001 instead"}},
		{"whitespace manifest", []byte("  \n"), bad.Dir, []string{"empty or truncated", "step-000001"}},
		{"not a manifest", []byte(`{"format_version": 1, "stepp": 2}`), bad.Dir, []string{"not a manifest", "unknown field", "step-000001"}},
		{"missing directory", raw, filepath.Join(root, "step-000007"), []string{"checkpoint directory " + filepath.Join(root, "step-000007") + " does not exist", "use step-000002 instead"}},
	} {
		if err := os.WriteFile(manifest, c.manifest, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Open(c.dir)
		if err == nil {
			t.Errorf("%s: opened", c.name)
			continue
		}
		if strings.Contains(err.Error(), "EOF") {
			t.Errorf("%s: the error speaks JSON's terms: %v", c.name, err)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q should contain %q", c.name, err, w)
			}
		}
	}
}

func TestRunDirectoryPointsAtItsCheckpoint(t *testing.T) {
	run := t.TempDir()
	cp := save(t, filepath.Join(run, "checkpoints"), 3, map[string]string{"a": "b"})
	_, err := Open(run)
	if err == nil || !strings.Contains(err.Error(), "is a run directory") || !strings.Contains(err.Error(), "its newest checkpoint is "+cp.Dir) {
		t.Fatalf("opening a run directory: %v", err)
	}
}

func TestCheckStepCatchesARehashedEdit(t *testing.T) {
	root := t.TempDir()
	save(t, root, 1, map[string]string{"train_state.json": `{"step": 1}`})
	cp := save(t, root, 2, map[string]string{"train_state.json": `{"step": 2}`})
	if err := CheckStep(cp.Dir, "train_state.json", 2); err != nil {
		t.Fatalf("an untouched checkpoint: %v", err)
	}
	// edit the recorded step and recompute the hashes: Open accepts it
	if err := os.WriteFile(cp.Path("train_state.json"), []byte(`{"step": 5}`), 0o644); err != nil {
		t.Fatal(err)
	}
	rehash(t, cp.Dir)
	if _, err := Open(cp.Dir); err != nil {
		t.Fatalf("the rehashed checkpoint should verify (that is the point): %v", err)
	}
	err := CheckStep(cp.Dir, "train_state.json", 5)
	for _, w := range []string{"train_state.json records step 5", "manifest says step 2", "use step-000001 instead"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("CheckStep: %v, want %q", err, w)
		}
	}
	// the manifest's step edited to match, the directory name still disagrees
	m, _ := parseManifest(cp.Dir)
	m.Step = 5
	writeOver(t, cp.Dir, m)
	if err := CheckStep(cp.Dir, "train_state.json", 5); err == nil || !strings.Contains(err.Error(), "directory name says step 2") {
		t.Errorf("renamed by manifest: %v", err)
	}
}
