package run

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"troupe/config"
)

// TestPlanCountsTheEngineCopy: with run.policy_lag 1, `train plan` lists
// each trained model's engine weight copy (two 4B models), as large as its
// weights, and the resident total grows by exactly that; with 0 it lists
// none.
func TestPlanCountsTheEngineCopy(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(qwen3_4B), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	const P = 4_022_468_096
	y := "run: {device: cuda:0, dtype: bfloat16}\nmodels:\n  qwen: {path: " + dir + "}\n" +
		"agents:\n  - {name: solver, model: qwen, preset: math-solver}\n  - {name: verifier, model: qwen, preset: math-verifier}\n"
	path := filepath.Join(dir, "run.yaml")
	if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	resident := map[string]int64{}
	for _, lag := range []string{"0", "1"} {
		cfg, err := config.LoadForPlan(path, []string{"run.policy_lag=" + lag})
		if err != nil {
			t.Fatal(err)
		}
		p, err := memoryPlan(cfg, 141<<30, 512, 0)
		if err != nil {
			t.Fatalf("policy_lag %s: %v", lag, err)
		}
		var out bytes.Buffer
		p.print(&out)
		copies := strings.Count(out.String(), "engine weight copy")
		if want := map[string]int{"0": 0, "1": 2}[lag]; copies != want {
			t.Errorf("policy_lag %s: the plan lists %d engine weight copies, want %d:\n%s", lag, copies, want, out.String())
		}
		parts, err := residentPlan(cfg, true, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range parts {
			resident[lag] += p.bytes
		}
	}
	if d := resident["1"] - resident["0"]; d != 2*P*2 {
		t.Errorf("policy_lag 1 adds %d resident bytes, want two bf16 copies of %d parameters (%d)", d, int64(P), 2*P*2)
	}
}

// TestPolicyLagRefusals: run.policy_lag other than 0 or 1, 1 with LoRA
// adapters and 1 with data-parallel ranks are each refused with a line
// that names the key, the value and the way out; 1 with
// optim.rollout_is off warns per trained model.
func TestPolicyLagRefusals(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(qwen3_4B), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	y := "models:\n  qwen: {path: " + dir + "}\n" +
		"agents:\n  - {name: solver, model: qwen, preset: math-solver}\n  - {name: verifier, model: qwen, preset: math-verifier}\n"
	path := filepath.Join(dir, "run.yaml")
	if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sets []string
		want []string
	}{
		{[]string{"run.policy_lag=2"}, []string{"run.policy_lag: must be 0", "or 1", "got 2"}},
		{[]string{"run.policy_lag=-1"}, []string{"run.policy_lag: must be 0", "got -1"}},
		{[]string{"run.policy_lag=1", "assignment=lora"}, []string{"run.policy_lag: 1 is not built for assignment: lora", "set run.policy_lag: 0"}},
	} {
		_, err := config.LoadForPlan(path, c.sets)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %v, want it to say %q", c.sets, err, w)
			}
		}
	}
	cfg, err := config.LoadForPlan(path, []string{"run.policy_lag=1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := checkRanks(cfg, 2); err == nil || !strings.Contains(err.Error(), "run.policy_lag: 1 is not built for data-parallel ranks (2 here") {
		t.Errorf("policy_lag 1 on 2 ranks: %v", err)
	}
	if err := checkRanks(cfg, 1); err != nil {
		t.Errorf("policy_lag 1 in one process: %v", err)
	}
	if w := policyLagWarnings(cfg); len(w) != 2 || !strings.Contains(w[0], `model "solver": run.policy_lag 1`) || !strings.Contains(w[0], "optim.rollout_is: token") {
		t.Errorf("policy_lag 1 without rollout_is warns %q, want a line per model", w)
	}
	if cfg, err = config.LoadForPlan(path, []string{"run.policy_lag=1", "optim.rollout_is=token"}); err != nil {
		t.Fatal(err)
	}
	if w := policyLagWarnings(cfg); len(w) != 0 {
		t.Errorf("policy_lag 1 with rollout_is token warns %q", w)
	}
}
