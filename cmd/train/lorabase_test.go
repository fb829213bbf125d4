package main

// A LoRA checkpoint records its frozen base (absolute path and weights'
// fingerprint): resume, eval and export refuse another model at the
// configured path by name, and a run resumed from another working
// directory, where the configured relative path holds nothing, finds the
// recorded base.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoRABaseIsChecked(t *testing.T) {
	if testing.Short() {
		t.Skip("training runs; skipped with -short")
	}
	d := t.TempDir()
	t.Chdir(d)
	cli(t, "init", "base", "--merges", "0", "--seed", "5")
	cli(t, "init", "other", "--merges", "0", "--seed", "6")
	writeTestFile(t, "run.yaml", []byte(strings.ReplaceAll(strings.ReplaceAll(e2eConfig, "OUT", "run"), "MODEL", "base")))
	lora := []string{"--set", "assignment=lora", "--set", "lora.rank=2", "--set", "export.at_end=false", "--set", "checkpoint.every=1"}
	cli(t, append([]string{"-c", "run.yaml", "-q", "--set", "run.steps=1"}, lora...)...)
	ck := filepath.Join(d, "run", "checkpoints", "step-000001")

	// another model where the base was
	if err := os.Rename("base", "base.orig"); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS("base", os.DirFS("other")); err != nil {
		t.Fatal(err)
	}
	want := "models.tiny.path " + filepath.Join(d, "base") + " is not the base the checkpoint's adapters were trained on"
	for _, args := range [][]string{
		{"--resume=run", "-q", "--set", "run.steps=2"},
		{"eval", "--checkpoint", ck, "--set", "eval.tasks=2"},
		{"export", "--checkpoint", ck, "--out", "exp"},
	} {
		if msg := failCode(t, args...); !strings.Contains(msg, want) {
			t.Errorf("train %s with another base: %q, want %q", strings.Join(args, " "), msg, want)
		}
	}
	if _, err := os.Stat("exp"); err == nil {
		t.Errorf("the refused export wrote %s", filepath.Join(d, "exp"))
	}

	// the base back in place; from another directory, where "base" is
	// nothing, the run finds it by its recorded path
	if err := os.RemoveAll("base"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename("base.orig", "base"); err != nil {
		t.Fatal(err)
	}
	elsewhere := filepath.Join(d, "elsewhere")
	if err := os.Mkdir(elsewhere, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(elsewhere)
	out := cli(t, "--resume="+filepath.Join(d, "run"), "-q", "--set", "run.steps=2")
	if !strings.Contains(out, "at step 1") {
		t.Errorf("the resume from another directory did not continue at step 1:\n%s", tail(out, 600))
	}
}
