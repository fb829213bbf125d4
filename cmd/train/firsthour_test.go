package main

// The first hour with a run: --seed, --print-samples, the zero-advantage
// warning, the resolved config in the run directory from the start, and
// `train eval --json`.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"troupe/ckpt"
	"troupe/config"
	runpkg "troupe/run"
)

func TestCLIFirstHour(t *testing.T) {
	dir := t.TempDir()
	cfgPath, out := tinyRun(t, dir)
	// a random model scores every sample alike: every advantage is zero
	stdout := cli(t, "-c", cfgPath, "-q", "--seed", "7", "--print-samples", "2", "--set", "run.steps=2", "--set", "checkpoint.every=0",
		"--set", "export.at_end=false", "--set", "max_new_tokens=8", "--set", "batch.prompts_per_step=1")

	// the resolved config is in the run directory, with --seed applied
	cfg, err := config.LoadSaved(filepath.Join(out, runpkg.RunConfigFile), nil)
	if err != nil {
		t.Fatalf("the run directory holds no resolved config: %v", err)
	}
	if cfg.Run.Seed != 7 {
		t.Fatalf("--seed 7: run.seed is %d", cfg.Run.Seed)
	}
	// two samples per step, two steps
	if n := strings.Count(stdout, "  sample "); n != 4 {
		t.Fatalf("--print-samples 2 over 2 steps printed %d samples:\n%s", n, tail(stdout, 2000))
	}
	for _, want := range []string{"sample 1/", "of step 2", "reward -0.100, advantage +0.000", "    prompt …", "    response "} {
		if !strings.Contains(stdout, want) {
			t.Fatalf("the samples should show %q:\n%s", want, tail(stdout, 2000))
		}
	}
	if n := strings.Count(stdout, "warning: every advantage of step"); n != 1 {
		t.Fatalf("the zero-advantage warning was printed %d times, want once:\n%s", n, tail(stdout, 2000))
	}
	if !strings.Contains(stdout, "no learning signal") {
		t.Fatalf("the warning should say what it means:\n%s", tail(stdout, 2000))
	}

	// eval --json: one JSON object on stdout, nothing else
	cp := filepath.Join(out, "checkpoints", ckpt.DirName(2))
	js := cli(t, "eval", "--checkpoint", cp, "--json", "--set", "eval.tasks=2", "--set", "eval.n=1", "--set", "max_new_tokens=8")
	var r runpkg.EvalResult
	dec := json.NewDecoder(strings.NewReader(js))
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("eval --json printed no JSON: %v\n%s", err, js)
	}
	if dec.More() {
		t.Fatalf("eval --json printed more than one object:\n%s", js)
	}
	if r.Step != 2 || r.Checkpoint != cp || r.Tasks != 2 || r.Metrics["eval/accuracy"] == nil || r.Models["solver"] == "" {
		t.Fatalf("eval --json: %+v", r)
	}
	if _, err := os.Stat(r.Models["solver"]); err != nil {
		t.Fatalf("eval --json names model weights that do not exist: %v", err)
	}
}
