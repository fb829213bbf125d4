package main

// mixed_team_test.go — a team of two model families end to end, with the
// shipped configs/drmas-math-mixed-tiny.yaml: a Qwen3-shaped Solver with a
// ChatML tokenizer and a Llama-shaped Verifier (llama3 rope scaling) with a
// Llama 3 tokenizer, both made with `train init`, trained 4 steps straight
// and 2 + resume + 2: the weights and optimizer state of both models must
// be bit-identical, each agent must prompt in its own model's chat template
// (the Verifier's with its chat_date), and both exports must load back — in
// troupe with the checkpoint's logits, and in transformers
// (internal/pyref) as the right architecture with the same logits.
//
// The models are not warmed up (`train sft` of two models costs minutes
// here): their outputs are all invalid, so every advantage is 0, and an
// entropy bonus (optim.entropy_coef 0.01) gives both models a gradient at
// every step — the AdamW moments, the weights and with them the next
// rollouts change, which is what the resume must reproduce. The
// configuration's learning is TestEndToEndDrMAS's subject, not this one's.

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"troupe/ckpt"
	"troupe/internal/metrics"
	"troupe/internal/pyref"
)

func TestMixedTeamTrainsResumesAndExports(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end training run of two models; skipped with -short")
	}
	dir := t.TempDir()
	cfgPath := filepath.Join("..", "..", "configs", "drmas-math-mixed-tiny.yaml")
	qwen, llama := filepath.Join(dir, "qwen"), filepath.Join(dir, "llama")
	cli(t, "init", qwen, "--family", "qwen3", "--seed", "3")
	cli(t, "init", llama, "--family", "llama", "--seed", "4")

	const date = "01 Feb 2025"
	runA, runB := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	common := []string{"-c", cfgPath, "-q",
		"--set", "models.qwen.path=" + qwen, "--set", "models.llama.path=" + llama, "--set", "optim.entropy_coef=0.01",
		"--set", "max_new_tokens=16", "--set", "batch.prompts_per_step=2", "--set", "eval.every=0", "--set", "checkpoint.every=2", "--set", "run.log_samples=200",
		"--set", "export.dtype=float32", "--set", "agents[1].chat_date=" + date}
	cli(t, append(common, "--set", "run.output_dir="+runA, "--set", "run.steps=4")...)
	cli(t, append(common, "--set", "run.output_dir="+runB, "--set", "run.steps=2", "--set", "export.at_end=false")...)
	out := cli(t, append(common, "--set", "run.output_dir="+runB, "--set", "run.steps=4", "--resume")...)
	if !strings.Contains(out, "at step 2") {
		t.Fatalf("the resume did not continue at step 2:\n%s", tail(out, 800))
	}

	// both models: bit-identical weights and optimizer state after 4 steps
	for _, m := range []string{"solver", "verifier"} {
		for _, f := range []string{"model.safetensors", "optimizer.safetensors"} {
			p := filepath.Join("checkpoints", ckpt.DirName(4), "models", m, f)
			if a, b := readFile(t, filepath.Join(runA, p)), readFile(t, filepath.Join(runB, p)); !bytes.Equal(a, b) {
				t.Fatalf("%s differs between 4 straight steps and 2 + resume + 2", p)
			}
		}
	}
	recs, err := metrics.ReadJSONL(filepath.Join(runB, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 4 {
		t.Fatalf("%d metric records after 2 + resume + 2 steps, want 4", len(recs))
	}
	for _, r := range recs {
		for _, a := range []string{"solver", "verifier"} {
			if g, ok := r.Values["grad_norm/"+a]; !ok || !(g > 0) || math.IsInf(g, 0) {
				t.Fatalf("step %d: grad_norm/%s = %v (present %v); want every step to move both models", r.Step, a, g, ok)
			}
		}
	}

	// each agent prompted in its own model's template, the Verifier with its date
	seen := map[string]int{}
	for _, l := range bytes.Split(bytes.TrimSpace(readFile(t, filepath.Join(runA, "samples.jsonl"))), []byte{'\n'}) {
		var s struct{ Agent, Prompt string }
		if err := json.Unmarshal(l, &s); err != nil {
			t.Fatal(err)
		}
		seen[s.Agent]++
		llamaPrompt := strings.HasPrefix(s.Prompt, "<|begin_of_text|><|start_header_id|>system<|end_header_id|>") &&
			strings.Contains(s.Prompt, "Today Date: "+date+"\n")
		qwenPrompt := strings.HasPrefix(s.Prompt, "<|im_start|>system\n")
		if (s.Agent == "verifier") != llamaPrompt || (s.Agent == "solver") != qwenPrompt {
			t.Fatalf("%s's prompt is not in its model's chat template (Llama 3.1 with Today Date %s for the verifier, ChatML for the solver):\n%s", s.Agent, date, tail(s.Prompt, 400))
		}
	}
	if seen["solver"] == 0 || seen["verifier"] == 0 {
		t.Fatalf("samples.jsonl rows per agent: %v", seen)
	}

	// both exports load back: in troupe with the checkpoint's logits, in
	// transformers as their architecture with the same logits
	for m, class := range map[string]string{"solver": "Qwen3ForCausalLM", "verifier": "LlamaForCausalLM"} {
		checkExportInTransformers(t, filepath.Join(runA, "export", m), filepath.Join(runA, "checkpoints", ckpt.DirName(4), "models", m), class)
	}
}

// checkExportInTransformers loads an export with transformers (as class,
// when not "") and compares its logits with troupe's of the checkpoint it
// came from.
func checkExportInTransformers(t *testing.T, export, checkpoint, class string) {
	t.Helper()
	seq := []int{1, 5, 9, 200, 13, 40}
	ours := logitsOf(t, export, seq)
	if !equalFloats(ours, logitsOf(t, checkpoint, seq)) {
		t.Fatalf("%s: the export's logits differ from the checkpoint's", export)
	}
	py, err := pyref.Find()
	if err != nil {
		if pyref.Required() {
			t.Fatalf("%s=1 but: %v", pyref.RequiredEnv, err)
		}
		t.Logf("transformers check of %s skipped: %v", export, err)
		return
	}
	ids := filepath.Join(t.TempDir(), "ids.json")
	js, _ := json.Marshal([][]int{seq})
	if err := os.WriteFile(ids, js, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, pyref.Script(t, "scripts/model/llama_reference.py"), "check-export", export, ids)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("transformers on %s: %v\n%s", export, err, stderr.String())
	}
	var got struct {
		Class  string
		Logits [][][]float64
	}
	if err := json.Unmarshal(stdout, &got); err != nil || len(got.Logits) != 1 || len(got.Logits[0]) != len(seq) {
		t.Fatalf("check-export printed %q: %v", stdout, err)
	}
	if class != "" && got.Class != class {
		t.Fatalf("%s: transformers loads it as %s, want %s", export, got.Class, class)
	}
	worst, vocab := 0.0, len(ours)/len(seq)
	for p, row := range got.Logits[0] {
		if len(row) != vocab {
			t.Fatalf("transformers' vocabulary %d, troupe's %d", len(row), vocab)
		}
		for v, x := range row {
			worst = math.Max(worst, math.Abs(x-float64(ours[p*vocab+v])))
		}
	}
	if worst > 1e-4 {
		t.Fatalf("transformers' logits of %s differ from troupe's by %.3g (> 1e-4)", export, worst)
	}
	t.Logf("%s: transformers loads %s, logits within %.2g of troupe's", export, got.Class, worst)
}

func equalFloats(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
