package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"troupe/internal/metrics"
)

const planPathConfig = `
run: {name: planpath-e2e, output_dir: OUT, seed: 4, steps: 1, log_samples: 2}
models:
  tiny: {path: MODEL}
assignment: ASSIGNMENT
agents:
  - {name: tool, model: tiny, preset: plan-path-tool, format_penalty: 0.1}
  - {name: plan, model: tiny, preset: plan-path-plan, format_penalty: 0.1, reward_scale: 2}
workflow: {name: tree, tree: {agents: [tool, plan], candidates: 2, max_turns: 1, simulate: [tool]}}
env: {name: plan-path, plan_path: {rows: 4, cols: 4, train_size: 20, test_size: 4}}
batch: {prompts_per_step: 2, n: 1, max_batch_rows: 16}
max_new_tokens: 16
advantage: {estimator: atgrpo}
optim: {lr: 1e-3, micro_batch_size: 8}
eval: {every: 1, tasks: 2, n: 1, ks: [1]}
checkpoint: {every: 0}
export: {at_end: true}
`

// AT-GRPO end to end on Plan-Path, with one model shared by both roles and
// with one model per role: tree-sampled rows reach the estimator and the
// update, evaluation reports success and per-turn figures.
func TestEndToEndATGRPOPlanPath(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base")
	cli(t, "init", base, "--text", "plan-path", "--seed", "2")
	for _, regime := range []string{"shared", "separate"} {
		t.Run(regime, func(t *testing.T) {
			out := filepath.Join(dir, regime)
			cfg := strings.NewReplacer("OUT", out, "MODEL", base, "ASSIGNMENT", regime).Replace(planPathConfig)
			path := filepath.Join(dir, regime+".yaml")
			if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			cli(t, "-c", path)
			recs, err := metrics.ReadJSONL(filepath.Join(out, "metrics.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			v := recs[len(recs)-1].Values
			// 2 prompts × 1 turn × 2 agents × 2 candidates = 8 rows in 4 groups
			if v["adv/rows"] != 8 || v["adv/groups"] != 4 {
				t.Errorf("rows %g groups %g, want 8 and 4", v["adv/rows"], v["adv/groups"])
			}
			for _, k := range []string{"eval/accuracy", "eval/game_turns", "eval/moves", "eval/invalid_moves", "eval/unparsed_actions", "reward/agent/tool", "reward/agent/plan"} {
				if _, ok := v[k]; !ok {
					t.Errorf("no %s in the metrics", k)
				}
			}
			exports, _ := os.ReadDir(filepath.Join(out, "export"))
			var names []string
			for _, e := range exports {
				names = append(names, e.Name())
			}
			want := map[string]string{"shared": "tiny", "separate": "plan,tool"}[regime]
			if strings.Join(names, ",") != want {
				t.Errorf("exported models %v, want %s", names, want)
			}
		})
	}
}

// Sokoban and Sudoku run through the same tree sampling end to end.
func TestEndToEndATGRPOSokobanAndSudoku(t *testing.T) {
	dir := t.TempDir()
	for _, game := range []struct{ env, text, options string }{
		{"sokoban", "sokoban", "sokoban: {size: 5, train_size: 20, test_size: 4}"},
		{"sudoku", "sudoku", "sudoku: {size: 4, train_size: 20, test_size: 4}"},
	} {
		t.Run(game.env, func(t *testing.T) {
			base := filepath.Join(dir, game.env+"-base")
			cli(t, "init", base, "--text", game.text, "--seed", "2")
			out := filepath.Join(dir, game.env)
			cfg := strings.NewReplacer("OUT", out, "MODEL", base, "ASSIGNMENT", "shared",
				"plan-path-tool", game.env+"-tool", "plan-path-plan", game.env+"-plan",
				"{name: plan-path, plan_path: {rows: 4, cols: 4, train_size: 20, test_size: 4}}", "{name: "+game.env+", "+game.options+"}").Replace(planPathConfig)
			path := filepath.Join(dir, game.env+".yaml")
			if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			cli(t, "-c", path)
			recs, err := metrics.ReadJSONL(filepath.Join(out, "metrics.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			v := recs[len(recs)-1].Values
			if v["adv/rows"] != 8 || v["adv/groups"] != 4 {
				t.Errorf("rows %g groups %g, want 8 and 4", v["adv/rows"], v["adv/groups"])
			}
			for _, k := range []string{"eval/accuracy", "eval/game_turns", "eval/unparsed_actions"} {
				if _, ok := v[k]; !ok {
					t.Errorf("no %s in the metrics", k)
				}
			}
		})
	}
}
