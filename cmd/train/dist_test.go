package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"troupe/ckpt"
	"troupe/dist"
	"troupe/internal/metrics"
	"troupe/safetensors"
	"troupe/torch"
)

// TestMain lets `train --nproc` start this test binary as its ranks: with
// TROUPE_AS_TRAIN set it runs the command line instead of the tests.
func TestMain(m *testing.M) {
	if os.Getenv(asTrainEnv) == "1" {
		os.Exit(execute(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// tensorsOf reads every tensor of a safetensors file as float32.
func tensorsOf(t *testing.T, path string) map[string][]float32 {
	t.Helper()
	f, err := safetensors.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]float32{}
	for _, n := range f.Names() {
		info, _ := f.Info(n)
		b, err := f.Bytes(n)
		if err != nil {
			t.Fatal(err)
		}
		if out[n], err = safetensors.DecodeFloat32s(info.DType, b); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// Two ranks with Gloo on loopback train the same weights as one process
// with the same global batch (float32, 1e-6 relative: the ranks' grads are
// summed in another order); checkpoints of two ranks resume bit-identically
// with two ranks; a rank that dies mid-step stops the run with an error
// naming it and leaves the last checkpoint intact.
func TestDataParallelTwoRanks(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end training runs; skipped with -short")
	}
	dir := t.TempDir()
	cfgPath, sft := warmModel(t, dir)
	common := []string{"-c", cfgPath, "-q", "--set", "models.tiny.path=" + sft, "--set", "batch.prompts_per_step=4",
		"--set", "checkpoint.every=1", "--set", "export.at_end=false", "--set", "run.steps=3",
		// evaluation after steps 2 and 3 over 5 tasks: the ranks play 2 and 3
		"--set", "eval.every=2", "--set", "eval.tasks=5", "--set", "eval.n=2"}
	one, two, resumed := filepath.Join(dir, "one"), filepath.Join(dir, "two"), filepath.Join(dir, "resumed")
	// every process computes with one thread, the one-process run included:
	// BLAS sums differently with another thread count, which alone moves
	// the weights by ~1e-6 in three steps
	t.Setenv("TROUPE_THREADS", "1")
	threads := torch.NumThreads()
	torch.SetNumThreads(1)
	cli(t, append(common, "--set", "run.output_dir="+one)...)
	torch.SetNumThreads(threads)
	out := cli(t, append(common, "--nproc", "2", "--set", "run.output_dir="+two)...)
	if !strings.Contains(out, "data parallel: 2 ranks; this is rank 0") {
		t.Fatalf("rank 0 did not report the group:\n%s", tail(out, 800))
	}

	// same weights after 3 steps; the rollouts were the same
	last := filepath.Join("checkpoints", ckpt.DirName(3), "models")
	for _, m := range []string{"solver", "verifier"} {
		a := tensorsOf(t, filepath.Join(one, last, m, "model.safetensors"))
		b := tensorsOf(t, filepath.Join(two, last, m, "model.safetensors"))
		var num, den, moved float64
		base := tensorsOf(t, filepath.Join(sft, "model.safetensors"))
		for name, x := range a {
			y := b[name]
			for i := range x {
				num += float64(x[i]-y[i]) * float64(x[i]-y[i])
				den += float64(x[i]) * float64(x[i])
				moved = math.Max(moved, math.Abs(float64(x[i]-base[name][i])))
			}
		}
		t.Logf("%s: W=2 vs W=1 relative difference %.3g", m, math.Sqrt(num/den))
		if rel := math.Sqrt(num / den); rel > 1e-6 {
			t.Fatalf("%s: W=2 weights differ from W=1 by %g relative", m, rel)
		}
		if moved == 0 {
			t.Fatalf("%s: training left the weights unchanged; the comparison shows nothing", m)
		}
	}
	r1, err := metrics.ReadJSONL(filepath.Join(one, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	r2, err := metrics.ReadJSONL(filepath.Join(two, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r1) != 3 || len(r2) != 3 {
		t.Fatalf("metrics records: %d and %d, want 3 each (rank 0 alone writes)", len(r1), len(r2))
	}
	if _, ok := r2[1].Values["eval/tasks"]; !ok || r2[1].Values["eval/tasks"] != 5 {
		t.Fatalf("step 2 of the two-rank run evaluated %v tasks, want 5 (both ranks' episodes)", r2[1].Values["eval/tasks"])
	}
	for i := range r1 {
		for _, k := range []string{"reward/mean", "adv/rows", "reward/agent/solver", "policy/solver/loss",
			"eval/tasks", "eval/accuracy", "eval/mean_reward", "eval/response_tokens", "eval/turns"} {
			if d := math.Abs(r1[i].Values[k] - r2[i].Values[k]); d > 1e-5*math.Max(1, math.Abs(r1[i].Values[k])) {
				t.Fatalf("step %d: %s is %g with one process, %g with two", r1[i].Step, k, r1[i].Values[k], r2[i].Values[k])
			}
		}
	}

	// W=2: 2 steps, resume to 3, bit-identical to 3 straight
	if err := os.CopyFS(resumed, os.DirFS(two)); err != nil {
		t.Fatal(err)
	}
	for _, step := range []int{3} {
		os.RemoveAll(filepath.Join(resumed, "checkpoints", ckpt.DirName(step)))
	}
	cli(t, "--resume="+filepath.Join(resumed, "checkpoints", ckpt.DirName(2)), "-q", "--nproc", "2")
	for _, m := range []string{"solver", "verifier"} {
		for _, f := range []string{"model.safetensors", "optimizer.safetensors"} {
			if !bytes.Equal(readFile(t, filepath.Join(two, last, m, f)), readFile(t, filepath.Join(resumed, last, m, f))) {
				t.Fatalf("%s/%s: W=2 resumed at step 2 differs from W=2 straight", m, f)
			}
		}
	}

	// a rank dies in step 2: the run stops naming it; step 1's checkpoint stays
	dead := filepath.Join(dir, "dead")
	t.Setenv(dist.RankExitEnv, "2:1")
	msg := failCode(t, append(common, "--nproc", "2", "--set", "run.output_dir="+dead)...)
	if !strings.Contains(msg, "rank 1 of 2 failed first") {
		t.Fatalf("the error does not name the dead rank:\n%s", msg)
	}
	cp, err := ckpt.Latest(filepath.Join(dead, "checkpoints"))
	if err != nil || cp.Step != 1 {
		t.Fatalf("after the death the newest checkpoint should be step 1, intact: %+v, %v", cp, err)
	}
	os.Unsetenv(dist.RankExitEnv)

	// a batch the ranks cannot split is refused
	if msg := failCode(t, append(common, "--nproc", "2", "--set", "batch.prompts_per_step=3", "--set", "run.output_dir="+filepath.Join(dir, "odd"))...); !strings.Contains(msg, "multiple of 2") {
		t.Fatalf("prompts_per_step 3 over 2 ranks: %q", msg)
	}
}
