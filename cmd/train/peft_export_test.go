package main

// peft_export_test.go — every agent's adapter that a LoRA run exports loads
// in PEFT. A two-agent run (one adapter per agent on one frozen base, the
// second with its own rank, targets and rsLoRA) trains two steps and exports;
// then testdata/ckpt/check_peft.py loads each agent's export with
// PeftModel.from_pretrained on the base the run trained on, and its merged
// export with AutoModelForCausalLM, and compares both with troupe's logits
// through the adapter (1e-4). Needs the Python reference environment
// (internal/pyref); skipped without it, failed under TROUPE_PYREF_REQUIRED=1.

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"troupe/ckpt"
	"troupe/internal/pyref"
)

func TestLoRARunExportLoadsInPEFT(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end training run; skipped with -short")
	}
	python := pyref.Python(t)
	dir := t.TempDir()
	cfgPath, sft := warmModel(t, dir)
	run := filepath.Join(dir, "run")
	cli(t, "-c", cfgPath, "-q", "--set", "models.tiny.path="+sft, "--set", "assignment=lora",
		"--set", "lora.rank=4", "--set", "lora.alpha=8", "--set", "optim.lr=1e-2",
		"--set", "agents.1.lora.rank=2", "--set", "agents.1.lora.targets=[q_proj,v_proj,down_proj]", "--set", "agents.1.lora.rslora=true",
		"--set", "export.merge_adapters=true", "--set", "run.output_dir="+run, "--set", "run.steps=2")

	// check_peft.py's layout: base/, <agent>/, <agent>-merged/, <agent>.reference.json
	check := filepath.Join(dir, "peft-check")
	if err := os.MkdirAll(check, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(sft, filepath.Join(check, "base")); err != nil {
		t.Fatal(err)
	}
	seqs := [][]int{{1, 5, 9, 200, 13, 40}, {7, 3}}
	for _, agent := range []string{"solver", "verifier"} {
		for _, name := range []string{agent, agent + "-merged"} {
			if err := os.Symlink(filepath.Join(run, "export", name), filepath.Join(check, name)); err != nil {
				t.Fatal(err)
			}
		}
		var ref struct {
			Sequences [][]int       `json:"sequences"`
			Logits    [][][]float32 `json:"logits"`
		}
		ref.Sequences = seqs
		for _, seq := range seqs {
			flat := adapterLogits(t, sft, filepath.Join(run, "export", agent), seq)
			if d := maxAbsDiff(flat, logitsOf(t, sft, seq)); d < 1e-4 {
				t.Fatalf("%s: the adapter leaves the base's logits (max |Δ| %g): nothing for PEFT to reproduce", agent, d)
			}
			V := len(flat) / len(seq)
			rows := make([][]float32, len(seq))
			for i := range rows {
				rows[i] = flat[i*V : (i+1)*V]
			}
			ref.Logits = append(ref.Logits, rows)
		}
		if err := ckpt.SaveJSON(filepath.Join(check, agent+".reference.json"), ref); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command(python, pyref.Script(t, "testdata/ckpt/check_peft.py"), check).CombinedOutput()
	t.Logf("check_peft.py %s:\n%s", check, out)
	if err != nil {
		t.Fatalf("PEFT check of the run's exported adapters failed: %v", err)
	}
}
