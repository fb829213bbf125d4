package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"troupe/internal/metrics"
)

const jointConfig = `
run: {name: magrpo-e2e, output_dir: OUT, seed: 5, steps: 1, log_samples: 2}
models:
  tiny: {path: MODEL}
assignment: separate
agents:
  - {name: first, model: tiny, preset: FIRST, max_new_tokens: 24}
  - {name: second, model: tiny, preset: SECOND, max_new_tokens: 24}
workflow: {name: joint, joint: {agents: [first, second], samples: 2, turns: 2, mode: aligned}}
env: {name: ENV}
batch: {prompts_per_step: 2, n: 1, max_batch_rows: 32}
max_new_tokens: 24
advantage: {estimator: magrpo, magrpo: {joint: aligned, gamma: 0.9}}
optim: {lr: 1e-3, loss: magrpo, micro_batch_size: 8}
eval: {every: 1, tasks: 2, n: 1, ks: [1]}
checkpoint: {every: 0}
export: {at_end: false}
`

// MAGRPO end to end on both cooperative environments: joint-action rows
// reach the estimator and MAGRPO's loss, every reward term is a metric, and
// the coding runs go through the sandbox.
func TestEndToEndMAGRPO(t *testing.T) {
	dir := t.TempDir()
	for _, env := range []struct{ name, first, second string }{
		{"writing", "writing-summary", "writing-expansion"},
		{"coding", "coding-helper", "coding-main"},
	} {
		t.Run(env.name, func(t *testing.T) {
			base := filepath.Join(dir, env.name+"-base")
			cli(t, "init", base, "--text", env.name, "--seed", "3")
			out := filepath.Join(dir, env.name)
			cfg := strings.NewReplacer("OUT", out, "MODEL", base, "FIRST", env.first, "SECOND", env.second, "ENV", env.name).Replace(jointConfig)
			path := filepath.Join(dir, env.name+".yaml")
			if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			cli(t, "-c", path)
			recs, err := metrics.ReadJSONL(filepath.Join(out, "metrics.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			v := recs[len(recs)-1].Values
			// per prompt: 2 root joint actions + 2 × 2 children, 2 agents each = 12 rows
			if v["adv/rows"] != 24 {
				t.Errorf("rows %g, want 24", v["adv/rows"])
			}
			want := map[string][]string{
				"writing": {"eval/reward/structure", "eval/reward/length_ratio", "eval/reward/unique_words", "eval/reward/transitions", "eval/reward/overlap", "eval/joint_reward"},
				"coding":  {"eval/reward/structure", "eval/reward/syntax", "eval/reward/tests", "eval/reward/aux_used", "eval/joint_reward"},
			}[env.name]
			for _, k := range append(want, "policy/first/loss", "policy/second/loss") {
				if _, ok := v[k]; !ok {
					t.Errorf("no %s in the metrics", k)
				}
			}
		})
	}
	// a joint workflow with batch.n > 1 or a mismatched mode is refused
	base := filepath.Join(dir, "writing-base")
	cfg := strings.NewReplacer("OUT", filepath.Join(dir, "bad"), "MODEL", base, "FIRST", "writing-summary", "SECOND", "writing-expansion", "ENV", "writing").Replace(jointConfig)
	path := filepath.Join(dir, "bad.yaml")
	os.WriteFile(path, []byte(cfg), 0o644)
	if msg := failing(t, "-c", path, "--set", "batch.n=2"); !strings.Contains(msg, "batch.n") {
		t.Errorf("batch.n 2: %q", msg)
	}
	if msg := failing(t, "-c", path, "--set", "advantage.magrpo.joint=cross"); !strings.Contains(msg, "workflow.joint.mode") {
		t.Errorf("mode mismatch: %q", msg)
	}
}
