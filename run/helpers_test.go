package run

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"troupe/config"
)

// tinyConfigYAML is a two-agent math-refine run over a tiny model (OUT and
// MODEL are replaced); cmd/train's end-to-end tests run the same config.
const tinyConfigYAML = `
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

// initTiny writes a tiny random model as `train init DIR --seed SEED` does
// with its default flags.
func initTiny(t *testing.T, dir string, seed uint64) {
	t.Helper()
	c := &Init{Family: "qwen3", Hidden: 64, Layers: 2, Heads: 4, KvHeads: 2, HeadDim: 16, Intermediate: 128,
		Merges: 1500, Seed: seed, Dtype: "float32", Text: "math"}
	if err := c.Run(io.Discard, []string{dir}); err != nil {
		t.Fatal(err)
	}
}

// tinyTeam builds the team of tinyConfigYAML (with the given overrides) over
// a tiny random model made with seed, in a temporary directory; the caller
// frees it.
func tinyTeam(t *testing.T, seed uint64, sets ...string) *team {
	t.Helper()
	dir := t.TempDir()
	base := filepath.Join(dir, "base")
	initTiny(t, base, seed)
	yaml := strings.ReplaceAll(strings.ReplaceAll(tinyConfigYAML, "OUT", filepath.Join(dir, "out")), "MODEL", base)
	cfgPath := filepath.Join(dir, "run.yaml")
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath, sets)
	if err != nil {
		t.Fatal(err)
	}
	team, err := buildTeam(cfg, false, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	return team
}
