package run

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"troupe/config"
	"troupe/model"
)

// Qwen3-8B's and Qwen3-14B's config.json (8,190,735,360 and 14,768,307,200
// parameters; untied heads).
const (
	qwen3_8B = `{"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "head_dim": 128, "hidden_size": 4096,
 "intermediate_size": 12288, "max_position_embeddings": 40960, "num_attention_heads": 32, "num_hidden_layers": 36,
 "num_key_value_heads": 8, "rms_norm_eps": 1e-06, "rope_theta": 1000000, "tie_word_embeddings": false,
 "vocab_size": 151936, "torch_dtype": "bfloat16"}`
	qwen3_14B = `{"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "head_dim": 128, "hidden_size": 5120,
 "intermediate_size": 17408, "max_position_embeddings": 40960, "num_attention_heads": 40, "num_hidden_layers": 40,
 "num_key_value_heads": 8, "rms_norm_eps": 1e-06, "rope_theta": 1000000, "tie_word_embeddings": false,
 "vocab_size": 151936, "torch_dtype": "bfloat16"}`
)

// shardPlan is one rank's plan of 8 on 80 GiB GPUs for two agents on model
// body (assignment and shard level given), Dr. MAS math's shape with
// micro-batches of 2 rows and activation checkpointing.
func shardPlan(t *testing.T, body, assignment string, level int) *devicePlan {
	t.Helper()
	dir := t.TempDir()
	for name, b := range map[string]string{"config.json": body, "tokenizer.json": "{}"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	y := fmt.Sprintf("run: {device: cuda, dtype: bfloat16}\nmodels:\n  qwen: {path: %s, shard: %d}\nassignment: %s\n", dir, level, assignment) +
		"agents:\n  - {name: solver, model: qwen, preset: math-solver}\n  - {name: verifier, model: qwen, preset: math-verifier}\n" +
		"max_new_tokens: 4096\nbatch: {prompts_per_step: 32, n: 8}\noptim: {activation_checkpointing: true, grad_accum_dtype: param, micro_batch_size: 2}\n"
	path := filepath.Join(dir, "run.yaml")
	if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := memoryPlan(cfg, 80<<30, 1024, 8)
	if err != nil {
		t.Fatal(err)
	}
	if len(p) != 1 {
		t.Fatalf("plan devices: %v", p)
	}
	return p[0]
}

// What docs/scaling.md's sharded table says fits one 8 × 80 GB node, per
// rank, row by row: two Qwen3-4B copies and one Qwen3-8B fit from level 1;
// two Qwen3-8B copies do not fit at level 1 (the whole bf16 grads, the
// head's backward and both models' weights: 75 GiB, with the allocator's
// and CUDA context's slack more than 80) and fit from level 2;
// Qwen3-14B shared fits from level 2, separate at no level (both copies are
// whole for the rollout); no level holds more than the one before (levels
// whose peak is the rollout's hold the same), and the optimizer state is 12
// bytes per parameter over 8.
func TestShardedPlanFits(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(qwen3_8B), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg8, err := model.LoadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	const capacity = 80 << 30
	for _, c := range []struct {
		name, body, assignment string
		fits                   [4]bool
	}{
		{"Qwen3-4B separate", qwen3_4B, "separate", [4]bool{false, true, true, true}},
		{"Qwen3-8B shared", qwen3_8B, "shared", [4]bool{false, true, true, true}},
		{"Qwen3-8B separate", qwen3_8B, "separate", [4]bool{false, false, true, true}},
		{"Qwen3-14B shared", qwen3_14B, "shared", [4]bool{false, false, true, true}},
		{"Qwen3-14B separate", qwen3_14B, "separate", [4]bool{false, false, false, false}},
	} {
		var last int64
		for level := range 4 {
			d := shardPlan(t, c.body, c.assignment, level)
			peak := d.peak()
			t.Logf("%s, shard %d: peak %s", c.name, level, gib(peak))
			fits := peak+planSlack(capacity) <= capacity // as the plan's verdict counts it (planfit.go)
			if fits != c.fits[level] {
				var out strings.Builder
				plan{d}.print(&out)
				t.Fatalf("%s, shard %d: fits %v, want %v:\n%s", c.name, level, fits, c.fits[level], out.String())
			}
			if level > 0 && (peak > last || level == 1 && peak == last) {
				t.Fatalf("%s: shard %d peaks at %s, above shard %d's %s", c.name, level, gib(peak), level-1, gib(last))
			}
			last = peak
		}
	}
	// the optimizer state of one Qwen3-8B on one rank of 8, shard 1
	d := shardPlan(t, qwen3_8B, "shared", 1)
	P := cfg8.NumParams()
	for _, p := range d.resident {
		if strings.Contains(p.what, "optimizer state") && p.bytes != 12*((P+7)/8) {
			t.Fatalf("%s: %d bytes, want 12 × %d / 8", p.what, p.bytes, P)
		}
	}
}
