package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// train check prints the resolved config with each agent's inherited
// settings at their effective values, and the plan, without loading a
// weight (the model's weights are garbage here) or writing anything;
// train --dry-run prints the same.
func TestCheckPrintsResolvedConfigAndPlan(t *testing.T) {
	dir := t.TempDir()
	cfgPath, out := tinyRun(t, dir)
	if err := os.WriteFile(filepath.Join(dir, "base", "model.safetensors"), []byte("not weights"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := cli(t, "check", "-c", cfgPath, "--set", "run.steps=7")
	if dry := cli(t, "-c", cfgPath, "--set", "run.steps=7", "--dry-run"); dry != got {
		t.Fatalf("--dry-run and check differ:\n%s\n---\n%s", dry, got)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatalf("check created the run directory %s", out)
	}
	head, plan, ok := strings.Cut(got, "# plan\n")
	if !ok {
		t.Fatalf("no plan:\n%s", got)
	}
	var resolved struct {
		Agents []struct {
			Name         string
			Optim        map[string]any
			Sampling     map[string]any
			MaxNewTokens any `yaml:"max_new_tokens"`
		}
	}
	if err := yaml.Unmarshal([]byte(head), &resolved); err != nil {
		t.Fatalf("the resolved config is not YAML: %v\n%s", err, head)
	}
	// the run-wide lr is 1e-3; the verifier sets 5e-4
	want := map[string]float64{"solver": 1e-3, "verifier": 5e-4}
	for _, a := range resolved.Agents {
		if lr, _ := a.Optim["lr"].(float64); lr != want[a.Name] {
			t.Errorf("agent %s: optim.lr is %v, want its effective %g", a.Name, a.Optim["lr"], want[a.Name])
		}
		if a.Sampling["temperature"] == nil || a.MaxNewTokens != 32 {
			t.Errorf("agent %s: sampling %v, max_new_tokens %v: want the inherited values", a.Name, a.Sampling, a.MaxNewTokens)
		}
	}
	if strings.Contains(head, ": null") && strings.Contains(head, "lr: null") {
		t.Errorf("inherited settings are shown as null:\n%s", head)
	}
	for _, w := range []string{"model solver: trains full weights of models.tiny", "for agents verifier", "workflow: math-refine",
		"advantage estimator: drmas", "steps: 7, each 3 tasks × 4 trajectories = 12 episodes", "# memory per device", "the run would start", "nothing was written"} {
		if !strings.Contains(plan, w) {
			t.Errorf("the plan should say %q:\n%s", w, plan)
		}
	}
}
