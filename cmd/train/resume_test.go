package main

// Runs stay where they live and nothing is replaced unless asked: a copied
// run resumes into the copy, checkpoints evaluate and resume without the
// base model, an older checkpoint is not resumed over newer steps without
// --force, and samples.jsonl holds each step once.

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// failCode runs the command line and wants a non-zero exit; it returns stderr.
func failCode(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := execute(args, &out, &errb); code == 0 {
		t.Fatalf("train %s: want a non-zero exit, got 0\nstdout tail: %s", strings.Join(args, " "), tail(out.String(), 800))
	}
	return errb.String()
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sampleSteps counts samples.jsonl lines per step.
func sampleSteps(t *testing.T, path string) map[int]int {
	t.Helper()
	n := map[int]int{}
	for _, l := range bytes.Split(bytes.TrimSpace(readFile(t, path)), []byte{'\n'}) {
		var v struct{ Step int }
		if err := json.Unmarshal(l, &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		n[v.Step]++
	}
	return n
}

func TestRunsStayWhereTheyLive(t *testing.T) {
	dir := t.TempDir()
	cfgPath, sft := warmModel(t, dir)
	// A base model that will disappear once the run has checkpoints.
	base := filepath.Join(dir, "doomed-base")
	if err := os.CopyFS(base, os.DirFS(sft)); err != nil {
		t.Fatal(err)
	}
	runA := filepath.Join(dir, "a")
	common := []string{"-c", cfgPath, "-q", "--set", "models.tiny.path=" + base, "--set", "run.output_dir=" + runA,
		"--set", "checkpoint.every=1", "--set", "export.at_end=false"}
	cli(t, append(common, "--set", "run.steps=2")...)
	if err := os.RemoveAll(base); err != nil {
		t.Fatal(err)
	}

	// The copy resumes into itself; the original is untouched.
	runC := filepath.Join(dir, "copy")
	if err := os.CopyFS(runC, os.DirFS(runA)); err != nil {
		t.Fatal(err)
	}
	metricsA := readFile(t, filepath.Join(runA, "metrics.jsonl"))
	out := cli(t, "--resume="+filepath.Join(runC, "checkpoints", "step-000002"), "-q", "--set", "run.steps=3")
	if !strings.Contains(out, "resume: writing to "+runC) {
		t.Errorf("the resume of a copy should say it writes to the copy:\n%s", tail(out, 600))
	}
	if _, err := os.Stat(filepath.Join(runC, "checkpoints", "step-000003")); err != nil {
		t.Errorf("the copy has no step-3 checkpoint: %v", err)
	}
	if _, err := os.Stat(filepath.Join(runA, "checkpoints", "step-000003")); err == nil {
		t.Errorf("resuming the copy wrote a checkpoint into the original run")
	}
	if !bytes.Equal(metricsA, readFile(t, filepath.Join(runA, "metrics.jsonl"))) {
		t.Errorf("resuming the copy changed the original's metrics.jsonl")
	}

	// Evaluation of a checkpoint needs neither the base model nor the
	// original working directory, and says what it evaluated.
	ck2 := filepath.Join(runC, "checkpoints", "step-000002")
	out = cli(t, "eval", "--checkpoint", ck2, "--set", "eval.tasks=4", "--set", "eval.n=1", "--set", "eval.ks=[1]")
	if !strings.Contains(out, "from "+filepath.Join(ck2, "models")) || !strings.Contains(out, "(step 2)") {
		t.Errorf("eval should name the checkpoint's weights and step:\n%s", out)
	}

	// An older checkpoint does not silently rewind the run…
	ck1 := filepath.Join(runC, "checkpoints", "step-000001")
	msg := failCode(t, "--resume="+ck1, "-q")
	if !strings.Contains(msg, "checkpoint at step 3") || !strings.Contains(msg, "--force") {
		t.Errorf("resuming an older checkpoint: want a refusal naming step 3 and --force, got %q", msg)
	}
	// A checkpoint moved out of its run writes where the config says, not
	// two directories up.
	lone := filepath.Join(dir, "lone", "ck")
	if err := os.CopyFS(lone, os.DirFS(ck2)); err != nil {
		t.Fatal(err)
	}
	elsewhere := filepath.Join(dir, "elsewhere")
	out = cli(t, "--resume="+lone, "-q", "--set", "run.steps=3", "--set", "run.output_dir="+elsewhere)
	if !strings.Contains(out, "not inside a run's checkpoints/ directory") {
		t.Errorf("a lone checkpoint's resume should say where it writes:\n%s", tail(out, 600))
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "checkpoints", "step-000003")); err != nil {
		t.Errorf("the lone checkpoint's run did not write to run.output_dir: %v", err)
	}

	// …but does with --force, and every per-step log then has each step once.
	cli(t, "--resume="+ck1, "-q", "--force", "--set", "run.steps=3")
	steps := sampleSteps(t, filepath.Join(runC, "samples.jsonl"))
	for s := 1; s <= 3; s++ {
		if steps[s] != 4 {
			t.Errorf("samples.jsonl after two resumes: step %d has %d lines, want 4 (run.log_samples): %v", s, steps[s], steps)
		}
	}
	if len(steps) != 3 {
		t.Errorf("samples.jsonl steps %v, want 1…3", steps)
	}
}

func TestCommandsDoNotReplaceWithoutForce(t *testing.T) {
	dir := t.TempDir()
	cfgPath, sft := warmModel(t, dir)

	// init over an existing model
	msg := failCode(t, "init", sft)
	if !strings.Contains(msg, "already exists") || !strings.Contains(msg, "--force") {
		t.Errorf("init over a model: %q", msg)
	}
	if _, err := os.Stat(filepath.Join(sft, "model.safetensors")); err != nil {
		t.Fatalf("the refused init touched the model: %v", err)
	}
	other := filepath.Join(dir, "other")
	cli(t, "init", other)
	cli(t, "init", other, "--force", "--seed", "9")

	// sft over its own input, and over an existing output
	msg = failCode(t, "sft", "-c", cfgPath, "--set", "models.tiny.path="+sft, "--out", filepath.Dir(sft), "--steps", "1")
	if !strings.Contains(msg, "over its own input") {
		t.Errorf("sft over its input: %q", msg)
	}
	msg = failCode(t, "sft", "-c", cfgPath, "--out", filepath.Join(dir, "sft"), "--steps", "1")
	if !strings.Contains(msg, "already exists") {
		t.Errorf("sft over an earlier output: %q", msg)
	}

	// export over the run's own export
	run := filepath.Join(dir, "run")
	cli(t, "-c", cfgPath, "-q", "--set", "models.tiny.path="+sft, "--set", "run.output_dir="+run, "--set", "run.steps=1", "--set", "checkpoint.every=1")
	ck := filepath.Join(run, "checkpoints", "step-000001")
	before := readFile(t, filepath.Join(run, "export", "solver", "model.safetensors"))
	msg = failCode(t, "export", "--checkpoint", ck, "--dtype", "bfloat16")
	if !strings.Contains(msg, filepath.Join(run, "export", "solver")) || !strings.Contains(msg, "--force") {
		t.Errorf("export over the run's export: %q", msg)
	}
	if !bytes.Equal(before, readFile(t, filepath.Join(run, "export", "solver", "model.safetensors"))) {
		t.Fatal("the refused export changed the existing one")
	}
	cli(t, "export", "--checkpoint", ck, "--dtype", "bfloat16", "--force")
	if bytes.Equal(before, readFile(t, filepath.Join(run, "export", "solver", "model.safetensors"))) {
		t.Error("export --force did not replace the export")
	}
}
