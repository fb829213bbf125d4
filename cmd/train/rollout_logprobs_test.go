package main

import (
	"fmt"
	"path/filepath"
	"testing"

	"troupe/internal/metrics"
)

// The demo's run (configs/magrpo-writing-tiny.yaml, float32 on the CPU,
// the engine sampling) reports the sampler's log-probs against the
// update's every step, for both agents, and they agree to rounding: below
// 1e-4 at every token, the second step's after an optimizer step has moved
// the weights the engine samples from. The model is `train init`'s, without
// the demo's warm-up, and the run is two steps of two prompts without
// evaluations, checkpoints or the export.
func TestDemoRolloutLogProbsMatchTheUpdate(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "tiny")
	cli(t, "init", base, "--text", "writing", "--seed", "1")
	out := filepath.Join(dir, "run")
	cli(t, "-c", "../../configs/magrpo-writing-tiny.yaml", "--set", "models.tiny.path="+base, "--set", "run.output_dir="+out,
		"--set", "run.steps=2", "--set", "batch.prompts_per_step=2", "--set", "eval.at_start=false", "--set", "eval.every=0",
		"--set", "checkpoint.every=0", "--set", "export.at_end=false")
	recs, err := metrics.ReadJSONL(filepath.Join(out, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("%d steps in the metrics, want 2", len(recs))
	}
	for _, r := range recs {
		for _, agent := range []string{"first", "second"} {
			key := func(name string) string { return fmt.Sprintf("policy/%s/%s", agent, name) }
			worst, ok := r.Values[key("rollout_logp_diff_max")]
			if !ok {
				t.Fatalf("step %d: no %s in the metrics", r.Step, key("rollout_logp_diff_max"))
			}
			for _, name := range []string{"rollout_logp_diff_mean", "rollout_kl", "rollout_k3_kl"} {
				if _, ok := r.Values[key(name)]; !ok {
					t.Errorf("step %d: no %s in the metrics", r.Step, key(name))
				}
			}
			if !(worst < 1e-4) {
				t.Errorf("step %d, %s: the sampler's and the update's log-probs differ by up to %.3g (want < 1e-4)", r.Step, agent, worst)
			}
			t.Logf("step %d, %s: |Δ log-prob| mean %.2g, max %.2g; KL %.2g (k3 %.2g)", r.Step, agent,
				r.Values[key("rollout_logp_diff_mean")], worst, r.Values[key("rollout_kl")], r.Values[key("rollout_k3_kl")])
		}
	}
}
