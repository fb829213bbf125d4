package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A run directory deleted while a checkpoint is being written — after the
// first model's state, before the second's — stops the run with the line
// that says so, and the checkpoint's remaining writes do not make the
// directory again under its old name.
func TestSaveDoesNotRemakeADeletedRunDir(t *testing.T) {
	if testing.Short() {
		t.Skip("a training run of a two-model team; skipped with -short")
	}
	dir := t.TempDir()
	base := filepath.Join(dir, "base")
	initTiny(t, base, 5)
	out := filepath.Join(dir, "run")
	savedModel = func(step, i int) {
		if step == 1 && i == 0 {
			if err := os.Rename(out, out+"-gone"); err != nil {
				t.Error(err)
			}
			if err := os.RemoveAll(out + "-gone"); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(func() { savedModel = func(int, int) {} })
	err := overlapRun(t, dir, base, "run", "run.steps=2", "checkpoint.every=1")
	if err == nil || !strings.Contains(err.Error(), "was renamed or deleted during the run") {
		t.Fatalf("run: %v; want the line that says the run directory was deleted", err)
	}
	if _, err := os.Lstat(out); err == nil {
		t.Fatalf("%s was made again after it was deleted", out)
	}
}
