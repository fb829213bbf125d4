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
