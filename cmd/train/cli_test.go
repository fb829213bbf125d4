package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"troupe/ckpt"
)

// failing runs the command line, wants exit status 1 and exactly one line on
// stderr, and returns that line.
func failing(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := execute(args, &out, &errb); code == 0 {
		t.Fatalf("train %s: want a non-zero exit, got 0", strings.Join(args, " "))
	}
	msg := errb.String()
	if strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "train: ") {
		t.Fatalf("want one line on stderr, got %q", msg)
	}
	return strings.TrimSpace(msg)
}

func TestBadConfigsExitWithOneLine(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base")
	cli(t, "init", base, "--merges", "0")
	good := strings.ReplaceAll(strings.ReplaceAll(e2eConfig, "OUT", filepath.Join(dir, "out")), "MODEL", base)
	write := func(name, yaml string) string {
		p := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := map[string]struct {
		yaml string
		sets []string
		want []string
	}{
		"unknown key":      {good + "optim_settings: {lr: 1e-6}\n", nil, []string{"optim_settings: unknown key"}},
		"negative lr":      {good, []string{"optim.lr=-1e-06"}, []string{"optim.lr: must be >= 0", "-1e-06"}},
		"shared conflict":  {good + "assignment: shared\n", nil, []string{`agents "solver" and "verifier" share model "tiny"`, "lr (0.001 vs 0.0005)"}},
		"missing model":    {strings.Replace(good, "path: "+base, "path: "+filepath.Join(dir, "nope"), 1), nil, []string{"models.tiny.path:", "no config.json"}},
		"unknown workflow": {good, []string{"workflow.name=debate"}, []string{`workflow.name: unknown workflow "debate"`}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			args := []string{"-c", write(strings.ReplaceAll(name, " ", "_"), c.yaml), "-q"}
			for _, s := range c.sets {
				args = append(args, "--set", s)
			}
			msg := failing(t, args...)
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Fatalf("error %q should mention %q", msg, w)
				}
			}
		})
	}
	if msg := failing(t); !strings.Contains(msg, "--config") {
		t.Fatalf("no arguments: %q", msg)
	}
	// a fresh run does not write into the checkpoints of an earlier one
	out := filepath.Join(dir, "taken")
	w, err := ckpt.Begin(filepath.Join(out, "checkpoints"), 3)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(w.Path("x"), []byte("x"), 0o644)
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if msg := failing(t, "-c", write("taken", good), "-q", "--set", "run.output_dir="+out); !strings.Contains(msg, "--resume") {
		t.Fatalf("existing checkpoints: %q", msg)
	}
}
