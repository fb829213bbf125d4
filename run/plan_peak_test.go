package run

// `train plan` against a rank's measured peak: a small model trained by two
// Gloo ranks at each shard level, the CPU allocator's peak of the update
// (memory/cpu/update_peak_gib) held to the plan's update phase that peaks.

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"troupe/config"
	"troupe/internal/metrics"
	"troupe/tokenizer"
)

// planPeakChildEnv makes the test binary one rank of TestPlanHoldsToTheMeasuredPeak: "config-path rank world port".
const planPeakChildEnv = "TROUPE_PLAN_PEAK_CHILD"

// planPeakYAML is one step of a two-agent math-refine run over a small
// random Qwen3 on two Gloo ranks (MODEL, OUT and LEVEL are replaced).
const planPeakYAML = `
run: {name: plan-peak, output_dir: OUT, seed: 3, steps: 2, tensorboard: false, log_samples: 64}
models:
  small: {path: MODEL, shard: LEVEL}
agents:
  - {name: solver, model: small, preset: math-solver}
  - {name: verifier, model: small, preset: math-verifier}
assignment: shared
workflow: {name: math-refine, math_refine: {solver: solver, verifier: verifier, max_loops: 1}}
env: {name: math, math: {source: procedural, procedural: {difficulty: 1, word_fraction: 0, train_size: 100, test_size: 10}}}
batch: {prompts_per_step: 4, n: 2}
max_new_tokens: 16
advantage: {estimator: drmas}
optim: {lr: 1e-3, micro_batch_tokens: MBT, activation_checkpointing: true, grad_accum_dtype: param}
eval: {every: 0}
checkpoint: {every: 0, at_end: false}
export: {at_end: false}
`

// The plan of each level's run — its resident state and the update's peak
// phase — is at least the rank's measured update peak of the second step
// (the first allocates the AdamW moments during its step), and at most 15 %
// above it. The model (hidden 128, 4 layers, 0.9 M parameters, float32) and
// micro-batches of 256 tokens make the weights, optimizer state, grads and
// collectives' buffers (exact in the plan) most of the peak, and one
// layer's activations (an estimate) the rest; the plan is given the run's
// longest prompt, as `train plan --prompt-tokens` would be.
func TestPlanHoldsToTheMeasuredPeak(t *testing.T) {
	if testing.Short() {
		t.Skip("two-rank training runs; skipped with -short")
	}
	dir := t.TempDir()
	base := filepath.Join(dir, "small")
	c := &Init{Family: "qwen3", Hidden: 128, Layers: 4, Heads: 4, KvHeads: 2, HeadDim: 32, Intermediate: 384,
		Merges: 1500, Seed: 7, Dtype: "float32", Text: "math"}
	if err := c.Run(io.Discard, []string{base}); err != nil {
		t.Fatal(err)
	}
	for level := range 4 {
		out := filepath.Join(dir, fmt.Sprintf("shard%d", level))
		y := strings.NewReplacer("MODEL", base, "OUT", out, "LEVEL", fmt.Sprint(level), "MBT", "256").Replace(planPeakYAML)
		path := filepath.Join(dir, fmt.Sprintf("shard%d.yaml", level))
		if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
		runPlanPeakRanks(t, path, 2)
		recs, err := metrics.ReadJSONL(filepath.Join(out, "metrics.jsonl"))
		if err != nil || len(recs) != 2 {
			t.Fatalf("level %d: metrics: %v (%d lines)", level, err, len(recs))
		}
		measured := recs[1].Values["memory/cpu/update_peak_gib"] * (1 << 30)
		cfg, err := config.Load(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		p, err := memoryPlan(cfg, 80<<30, longestPrompt(t, out, base), 2)
		if err != nil {
			t.Fatal(err)
		}
		d := p[0]
		planned := float64(d.sum(d.resident) + d.sum(d.update))
		t.Logf("level %d: measured %.0f bytes, planned %.0f (%.3f), at %s", level, measured, planned, planned/measured, d.updatePhase)
		if planned < measured || planned > 1.15*measured {
			for _, x := range append(append([]residentPart{}, d.resident...), d.update...) {
				t.Logf("    %10d  %s", x.bytes, x.what)
			}
			t.Fatalf("level %d: the plan says %.0f bytes, a rank's update peaked at %.0f; want the plan at least that and within 15 %%", level, planned, measured)
		}
	}
}

// runPlanPeakRanks trains cfg on world ranks, each a child process.
func runPlanPeakRanks(t *testing.T, cfg string, world int) {
	t.Helper()
	port := freePlanPort(t)
	var wg sync.WaitGroup
	outs, errs := make([]string, world), make([]error, world)
	for r := range world {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run", "^TestPlanPeakChild$", "-test.v")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s", planPeakChildEnv, cfg), fmt.Sprintf("RANK=%d", r), fmt.Sprintf("WORLD_SIZE=%d", world),
				fmt.Sprintf("LOCAL_RANK=%d", r), "MASTER_ADDR=127.0.0.1", fmt.Sprintf("MASTER_PORT=%d", port), "TROUPE_THREADS=1")
			b, err := cmd.CombinedOutput()
			outs[r], errs[r] = string(b), err
		}()
	}
	wg.Wait()
	for r := range world {
		if errs[r] != nil {
			t.Fatalf("%s, rank %d: %v\n%s", cfg, r, errs[r], outs[r])
		}
	}
}

// TestPlanPeakChild is one rank of TestPlanHoldsToTheMeasuredPeak.
func TestPlanPeakChild(t *testing.T) {
	path := os.Getenv(planPeakChildEnv)
	if path == "" {
		t.Skip("a rank process of TestPlanHoldsToTheMeasuredPeak; runs only when it starts it")
	}
	runtime.LockOSThread()
	if err := (&Train{Config: path, Quiet: true}).Run(io.Discard); err != nil {
		t.Fatal(err)
	}
}

func freePlanPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// longestPrompt is the longest prompt of a run's rows, in tokens: its
// samples' prompts encoded with the model's tokenizer.
func longestPrompt(t *testing.T, run, modelDir string) int {
	t.Helper()
	tok, err := tokenizer.Load(modelDir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(run, "samples.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	longest := 0
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var s struct{ Prompt string }
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatal(err)
		}
		longest = max(longest, len(tok.Encode(s.Prompt)))
	}
	return longest
}
