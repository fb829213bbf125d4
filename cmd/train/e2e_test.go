package main

// The end-to-end test: a tiny model made by `train init`,
// warmed up by `train sft`, math-refine with Solver and Verifier on separate
// models, RL steps with drmas — finite losses, weights that change, a
// checkpoint that resumes bit-identically, an export that reloads with
// identical logits. Everything runs through the real command line.

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"troupe/ckpt"
	"troupe/internal/metrics"
	"troupe/model"
	"troupe/torch"
)

// cli runs the command line and fails the test on a non-zero status.
func cli(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := execute(args, &out, &errb); code != 0 {
		t.Fatalf("train %s: exit %d\nstderr: %s\nstdout tail: %s", strings.Join(args, " "), code, errb.String(), tail(out.String(), 1500))
	}
	return out.String()
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

const e2eConfig = `
run: {name: e2e, output_dir: OUT, seed: 3, steps: 3, log_samples: 4}
models:
  tiny: {path: MODEL}
agents:
  - {name: solver, model: tiny, preset: math-solver, format_penalty: 0.1}
  - {name: verifier, model: tiny, preset: math-verifier, format_penalty: 0.1, optim: {lr: 5e-4}}
workflow: {name: math-refine, math_refine: {solver: solver, verifier: verifier, max_loops: 2}}
env: {name: math, math: {source: procedural, procedural: {difficulty: 1, word_fraction: 0, train_size: 500, test_size: 50}}}
batch: {prompts_per_step: 3, n: 4, max_batch_rows: 32}
max_new_tokens: 32
advantage: {estimator: drmas}
optim: {lr: 1e-3, micro_batch_size: 8}
eval: {every: 0}
checkpoint: {every: 2, keep: 3}
export: {at_end: true}
`

// warmModel makes and warms up a tiny model once per test binary.
func warmModel(t *testing.T, dir string) (cfgPath, sft string) {
	t.Helper()
	base := filepath.Join(dir, "base")
	cli(t, "init", base, "--seed", "5")
	cfgPath = filepath.Join(dir, "run.yaml")
	cfg := strings.ReplaceAll(strings.ReplaceAll(e2eConfig, "OUT", filepath.Join(dir, "unused")), "MODEL", base)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	sft = filepath.Join(dir, "sft")
	cli(t, "sft", "-c", cfgPath, "--out", sft, "--steps", "80", "--tasks", "96", "--batch", "16", "--log-every", "80")
	return cfgPath, filepath.Join(sft, "tiny")
}

func TestEndToEndDrMAS(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end training run; skipped with -short")
	}
	before := torch.LiveTensors()
	dir := t.TempDir()
	cfgPath, sft := warmModel(t, dir)
	runA, runB := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	common := []string{"-c", cfgPath, "-q", "--set", "models.tiny.path=" + sft}

	// 4 steps in one run
	cli(t, append(common, "--set", "run.output_dir="+runA, "--set", "run.steps=4")...)
	// 2 steps, then resume to 4
	cli(t, append(common, "--set", "run.output_dir="+runB, "--set", "run.steps=2")...)
	out := cli(t, append(common, "--set", "run.output_dir="+runB, "--set", "run.steps=4", "--resume")...)
	if !strings.Contains(out, "resumed from") || !strings.Contains(out, "at step 2") {
		t.Fatalf("resume did not report where it continued:\n%s", tail(out, 800))
	}

	// bit-identical weights and optimizer state after 4 steps
	for _, m := range []string{"solver", "verifier"} {
		for _, f := range []string{"model.safetensors", "optimizer.safetensors"} {
			p := filepath.Join("checkpoints", ckpt.DirName(4), "models", m, f)
			a, errA := os.ReadFile(filepath.Join(runA, p))
			b, errB := os.ReadFile(filepath.Join(runB, p))
			if errA != nil || errB != nil {
				t.Fatalf("reading %s: %v %v", p, errA, errB)
			}
			if !bytes.Equal(a, b) {
				t.Fatalf("%s differs between 4 straight steps and 2 + resume + 2", p)
			}
		}
	}

	// every step logged finite losses, per-agent grad norms and rewards; the
	// grads were not all zero
	recs, err := metrics.ReadJSONL(filepath.Join(runB, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 4 {
		t.Fatalf("want 4 metric records after resume, got %d", len(recs))
	}
	nonzero := false
	for i, r := range recs {
		if r.Step != i+1 {
			t.Fatalf("record %d has step %d", i, r.Step)
		}
		for _, a := range []string{"solver", "verifier"} {
			for _, k := range []string{"policy/" + a + "/loss", "grad_norm/" + a, "reward/agent/" + a, "adv/agent/" + a + "/mean"} {
				v, ok := r.Values[k]
				if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("step %d: %s = %v (present %v)", r.Step, k, v, ok)
				}
			}
			if r.Values["grad_norm/"+a] > 0 {
				nonzero = true
			}
			// the rollout ran through the engine; the solvers of a group share
			// their prompt, and every agent's later calls reuse keys and values
			// of earlier ones (the prefix cache)
			e := "engine/" + a + "/"
			if r.Values[e+"slots"] < 1 || r.Values[e+"decode_steps"] < 1 || (a == "solver" && r.Values[e+"shared_prompts"] < 1) ||
				r.Values[e+"host_reads"] > r.Values[e+"decode_steps"] || r.Values[e+"reused_tokens"] < 1 {
				t.Fatalf("step %d: engine of %s: slots %v, decode steps %v, shared prompts %v, host reads %v, reused tokens %v", r.Step, a,
					r.Values[e+"slots"], r.Values[e+"decode_steps"], r.Values[e+"shared_prompts"], r.Values[e+"host_reads"], r.Values[e+"reused_tokens"])
			}
		}
	}
	if !nonzero {
		t.Fatal("every grad norm was 0: the warmed-up model never produced different rewards within a group")
	}

	// TensorBoard saw every step once: a scalar event and an episodes text event each
	steps, err := metrics.EventSteps(filepath.Join(runB, metrics.EventsFile))
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 1, 1, 2, 2, 3, 3, 4, 4}; !slices.Equal(steps, want) {
		t.Fatalf("event steps after 2 + resume + 2: %v, want %v", steps, want)
	}
	// and TensorBoard's own reader agrees with metrics.jsonl (tensorboardPython)
	if py := tensorboardPython(t); py != "" {
		out, err := exec.Command(py, "../../scripts/gpu/check_tensorboard.py", runB).CombinedOutput()
		if err != nil {
			t.Fatalf("check_tensorboard.py: %v\n%s", err, out)
		}
		t.Logf("%s", out)
	}

	// the weights changed, and the export reloads with identical logits
	seq := []int{1, 5, 9, 200, 13, 40}
	l0 := logitsOf(t, sft, seq)
	l1 := logitsOf(t, filepath.Join(runA, "checkpoints", ckpt.DirName(4), "models", "solver"), seq)
	l2 := logitsOf(t, filepath.Join(runA, "export", "solver"), seq)
	same, changed := true, false
	for i := range l1 {
		same = same && l1[i] == l2[i]
		changed = changed || l0[i] != l1[i]
	}
	if !same {
		t.Fatal("the export does not reproduce the checkpoint's logits")
	}
	if !changed {
		t.Fatal("RL left the solver's weights unchanged")
	}
	for _, f := range []string{"config.json", "model.safetensors", "generation_config.json", "tokenizer.json", "tokenizer_config.json"} {
		if _, err := os.Stat(filepath.Join(runA, "export", "verifier", f)); err != nil {
			t.Fatalf("export lacks %s: %v", f, err)
		}
	}
	if after := torch.LiveTensors(); after != before {
		t.Fatalf("live tensors: %d before the runs, %d after", before, after)
	}
}

// logitsOf loads a model directory and returns its logits for seq.
func logitsOf(t *testing.T, dir string, seq []int) []float32 {
	t.Helper()
	m, err := model.Load(dir, model.Options{DType: torch.Float32, Device: torch.CPU})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	s := torch.NewScope()
	defer s.Close()
	in, err := model.Pack([][]int{seq}, model.PadRight, torch.CPU)
	if err != nil {
		t.Fatal(err)
	}
	lg, err := m.Logits(in)
	if err != nil {
		t.Fatal(err)
	}
	return lg.Float32s()
}
