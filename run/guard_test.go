package run

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An output is refused when it is an input, lies inside one or holds one,
// through symbolic links and paths that do not exist yet; a sibling is
// not.
func TestRefuseInputAsOutput(t *testing.T) {
	d := t.TempDir()
	in := filepath.Join(d, "run", "checkpoints", "step-000002")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(d, "link")
	if err := os.Symlink(filepath.Join(d, "run"), link); err != nil {
		t.Fatal(err)
	}
	for out, want := range map[string]string{
		in: "is the command's own input",
		filepath.Join(link, "checkpoints", "step-000002"):             "is the command's own input",
		filepath.Join(link, "checkpoints", "step-000002", "new", "x"): "lies inside",
		filepath.Join(d, "run"):                                       "holds",
		filepath.Join(d, "run", "export"):                             "",
		filepath.Join(d, "runs"):                                      "",
	} {
		err := RefuseInputAsOutput("export", out, "--out", "", in)
		switch {
		case err == nil && want != "":
			t.Errorf("%s: accepted, want %q", out, want)
		case err != nil && (want == "" || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: %v, want %q", out, err, want)
		}
	}
}

// init writes its directory whole, under a hidden name, and installs it:
// nothing of it is left beside DIR, --force replaces an earlier model, and
// never a directory of other files.
func TestInitInstallsWhole(t *testing.T) {
	d := t.TempDir()
	dir := filepath.Join(d, "m")
	initTiny(t, dir, 1)
	c := &Init{Family: "qwen3", Hidden: 64, Layers: 2, Heads: 4, KvHeads: 2, HeadDim: 16, Intermediate: 128, Seed: 2, Dtype: "float32", Text: "math", Force: true}
	if err := c.Run(io.Discard, []string{dir}); err != nil {
		t.Fatalf("init --force over an earlier model: %v", err)
	}
	if entries, _ := os.ReadDir(d); len(entries) != 1 {
		t.Errorf("beside DIR: %v, want DIR alone", entries)
	}
	foreign := filepath.Join(d, "notes")
	if err := os.MkdirAll(foreign, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(foreign, "todo.txt"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := c.Run(io.Discard, []string{foreign})
	if err == nil || !strings.Contains(err.Error(), "not a model or adapter directory") {
		t.Errorf("init --force over a directory of other files: %v", err)
	}
	if entries, _ := os.ReadDir(foreign); len(entries) != 1 {
		t.Errorf("the refused init changed %s: %v", foreign, entries)
	}
}
