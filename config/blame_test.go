package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An error about a value a --set gave names the --set, not the config
// file; one about the file's own value names the file.
func TestErrorsBlameTheSetOrTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.yaml")
	if err := os.WriteFile(path, []byte(base(t)+"optim: {lr: 3e-4}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sets []string
		want string // the error's beginning
	}{
		{[]string{"optim.lr=-1"}, "--set optim.lr=-1: config: optim.lr: must be >= 0"},
		{[]string{"agents[1].optim.lr=-1"}, "--set agents[1].optim.lr=-1: config: agents[1].optim.lr: must be >= 0"},
		{[]string{"agents.1.optim.lr=-1"}, "--set agents.1.optim.lr=-1: config: agents[1].optim.lr:"},
		{[]string{"run.stesp=3"}, "--set run.stesp=3: config: run.stesp: unknown key (did you mean steps?)"},
		{[]string{"run.steps=3", "models.tiny.path=/nonexistent/model"}, "--set models.tiny.path=/nonexistent/model: config: models.tiny.path:"},
		{[]string{"run.steps="}, "config: --set run.steps=: the value is empty"},
		// a --set of another key leaves the blame with the file
		{[]string{"run.steps=3", "agents[1].optim.lr=-1", "run.seed=2"}, "--set agents[1].optim.lr=-1: "},
	} {
		_, err := Load(path, c.sets)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("--set %v: got %v, want it to start %q", c.sets, err, c.want)
		}
	}
	// the file's own bad value: its name leads
	if err := os.WriteFile(path, []byte(base(t)+"optim: {lr: -1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path, []string{"run.steps=3"}); err == nil || !strings.HasPrefix(err.Error(), path+": config: optim.lr:") {
		t.Errorf("a bad value in the file: got %v", err)
	}
}
