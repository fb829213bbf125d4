package suggest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func touch(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The layout make demo leaves: a warm-up model, and a run with a
// checkpoint and an export.
func TestModelDir(t *testing.T) {
	d := t.TempDir()
	touch(t, filepath.Join(d, "runs/demo/sft/tiny/config.json"))
	cp := filepath.Join(d, "runs/demo/magrpo/checkpoints/step-000030")
	touch(t, filepath.Join(cp, manifestName))
	touch(t, filepath.Join(cp, "models/first/config.json"))
	touch(t, filepath.Join(cp, "models/second/config.json"))
	touch(t, filepath.Join(d, "runs/demo/magrpo/export/first/config.json"))
	touch(t, filepath.Join(d, "runs/demo/magrpo/export/second/config.json"))
	run := filepath.Join(d, "runs/demo/magrpo")
	for _, c := range []struct{ path, want string }{
		{"runs/demo/sft", "did you mean " + d + "/runs/demo/sft/tiny?"},      // the parent of the model
		{"runs/demo/stf/tiny", "did you mean " + d + "/runs/demo/sft/tiny?"}, // a typo in the middle
		{"runs/dmeo/sft", "did you mean " + d + "/runs/demo/sft/tiny?"},      // a typo, then the parent
		{"runs/demo/magrpo/checkpoints/step-000030", "is a training checkpoint: its models are " + cp + "/models/first or " + cp + "/models/second"},
		{"runs/demo/magrpo/checkpoints/step-000030", "train export --checkpoint " + cp + " --out " + run + "/export-step-000030"}, // export/ is taken
		{"runs/demo/magrpo", "is a run directory: its exported models are " + run + "/export/first or " + run + "/export/second"},
		{"runs/nothing/here", ""},
		{"elsewhere", ""},
	} {
		got := ModelDir(filepath.Join(d, c.path))
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("ModelDir(%s) = %q, want it to contain %q", c.path, got, c.want)
		}
	}
}
