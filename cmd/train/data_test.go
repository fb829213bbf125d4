package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `train data NAME --from DIR --out OUT` writes the config's files under
// OUT (here the writing config's, from the fixtures of trl-lib/tldr), says
// what it wrote and where the manifest is, and keeps them on a second run;
// `train data list` names every set.
func TestDataCommand(t *testing.T) {
	out := t.TempDir()
	got := cli(t, "data", "magrpo-writing", "--from", "../../testdata/datasets", "--out", out, "--revision", "main")
	if !strings.Contains(got, "wrote data/tldr-train.jsonl, data/tldr-test.jsonl under "+out) || !strings.Contains(got, "magrpo-writing.manifest.json") {
		t.Errorf("output %q", got)
	}
	for _, f := range []string{"data/tldr-train.jsonl", "data/tldr-test.jsonl", "data/magrpo-writing.manifest.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	if got := cli(t, "data", "magrpo-writing", "--from", "../../testdata/datasets", "--out", out); !strings.Contains(got, "nothing written") {
		t.Errorf("second run: %q", got)
	}
	list := cli(t, "data", "list")
	for _, name := range []string{"drmas-math:", "atgrpo-math:", "atgrpo-code:", "drmas-search:", "magrpo-writing:", "magrpo-coding:", "planpath:"} {
		if !strings.Contains(list, name) {
			t.Errorf("data list does not name %s", name)
		}
	}
}
