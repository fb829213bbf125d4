package main

// Messages a newcomer meets, each checked against the mistake it answers:
// another family's tokenizer on a Qwen3 model, a config passed without -c,
// a mistyped key, a dataset record with an empty answer.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixtureDir is .cache/tokenizer/<name>; a missing fixture fails the test
// with the command that fetches it, unless TROUPE_OFFLINE=1 (skip).
func fixtureDir(t *testing.T, name string) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", ".cache", "tokenizer", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "tokenizer.json")); err != nil {
		msg := "missing fixture " + dir + ": run scripts/tokenizer/fetch-fixtures.sh (make test does it during setup)"
		if os.Getenv("TROUPE_OFFLINE") == "1" {
			t.Skip("TROUPE_OFFLINE=1: " + msg)
		}
		t.Fatal(msg)
	}
	return dir
}

// A Qwen2.5 tokenizer (its chat template Qwen2.5's) on a Qwen3 model is
// refused by check and by the run with one line naming the key to fix;
// the model's own family's tokenizer passes. Before, check passed it
// silently and the run rendered every prompt in the other format.
func TestQwen3ModelRefusesAnotherFamilysTemplate(t *testing.T) {
	dir := t.TempDir()
	cfgPath, _ := tinyRun(t, dir)
	// a Qwen3 config.json whose vocabulary holds the real tokenizers' ids
	// (check reads no weight)
	var mc map[string]any
	if err := json.Unmarshal(readFile(t, filepath.Join(dir, "base", "config.json")), &mc); err != nil {
		t.Fatal(err)
	}
	mc["vocab_size"] = 151936
	raw, _ := json.Marshal(mc)
	big := filepath.Join(dir, "qwen3")
	writeTestFile(t, filepath.Join(big, "config.json"), raw)
	want := "the tokenizer's chat template is qwen2.5, but the model is a Qwen3 (config.json model_type qwen3), trained on Qwen3's template; set models.tiny.tokenizer to the model's own tokenizer"
	args := []string{"-c", cfgPath, "--set", "models.tiny.path=" + big, "--set", "models.tiny.tokenizer=" + fixtureDir(t, "qwen2_5")}
	if msg := failing(t, append([]string{"check"}, args...)...); !strings.Contains(msg, want) {
		t.Errorf("check: %q, want %q", msg, want)
	}
	if msg := failing(t, append(args, "-q")...); !strings.Contains(msg, want) {
		t.Errorf("the run: %q, want %q", msg, want)
	}
	cli(t, "check", "-c", cfgPath, "--set", "models.tiny.path="+big, "--set", "models.tiny.tokenizer="+fixtureDir(t, "qwen3"))
}
