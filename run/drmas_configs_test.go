package run

// drmas_configs_test.go — the shipped Dr. MAS GPU configs keep the
// reference scripts' shape (examples/drmas_trainer/run_math.sh and
// run_search.sh of langfengQ/DrMAS): one trained model per agent
// (model_sharing=False), micro-batches of 4 sequences per agent, and
// `train plan` says each device fits, worked out from the real models'
// config.json.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"troupe/config"
)

// qwen25_3B is Qwen2.5-3B's config.json (3,085,938,688 parameters).
const qwen25_3B = `{"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 2048,
 "intermediate_size": 11008, "max_position_embeddings": 32768, "num_attention_heads": 16, "num_hidden_layers": 36,
 "num_key_value_heads": 2, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "tie_word_embeddings": true,
 "vocab_size": 151936, "torch_dtype": "bfloat16", "use_sliding_window": false, "max_window_layers": 36}`

// drmasPlan loads a shipped config with its models (names) at a directory
// holding only body as config.json, and returns its resolved config and
// printed plan for GPUs of gib GiB and prompts of promptTokens.
func drmasPlan(t *testing.T, file string, names []string, body string, gib int64, promptTokens int) (*config.Config, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	var sets []string
	for _, name := range names {
		sets = append(sets, "models."+name+".path="+dir)
	}
	cfg, err := config.LoadForPlan(filepath.Join("..", "configs", file), sets)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Models) != len(names) {
		t.Fatalf("%s has models %v, want %v", file, cfg.Models, names)
	}
	p, err := memoryPlan(cfg, gib<<30, promptTokens, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	p.print(&out)
	return cfg, out.String()
}

// checkOneModelPerAgent: every agent trains a model of its own, in full,
// with micro-batches of 4.
func checkOneModelPerAgent(t *testing.T, cfg *config.Config, agents int) {
	t.Helper()
	tr := cfg.Trained()
	if len(tr) != agents || len(cfg.Agents) != agents {
		t.Fatalf("%d agents train %d models, want one model per agent (the reference's model_sharing=False)", len(cfg.Agents), len(tr))
	}
	for _, m := range tr {
		if len(m.Agents) != 1 || m.LoRA != nil {
			t.Errorf("model %s: agents %v, adapter %v; want one agent training full weights", m.Name, m.Agents, m.LoRA != nil)
		}
		if s := cfg.Settings(m); s.MicroBatchSize != 4 {
			t.Errorf("model %s: micro_batch_size %d, want the reference's 4", m.Name, s.MicroBatchSize)
		}
	}
}

func TestDrMASSearchConfigOneModelPerAgent(t *testing.T) {
	cfg, out := drmasPlan(t, "drmas-search-qwen2.5-3b.yaml", []string{"verifier_3b", "search_3b", "answer_3b"}, qwen25_3B, 80, 4096)
	checkOneModelPerAgent(t, cfg, 3)
	devices := map[string]string{}
	for _, m := range cfg.Trained() {
		if other, ok := devices[m.Model.Device]; ok {
			t.Errorf("models %s and %s share %s; each 3B model with its AdamW state takes its own GPU", other, m.Name, m.Model.Device)
		}
		devices[m.Model.Device] = m.Name
		if s := cfg.Settings(m); s.UpdatesPerStep != 5 {
			t.Errorf("model %s: updates_per_step %d, want the reference's ppo_mini_update_num 5", m.Name, s.UpdatesPerStep)
		}
	}
	if n := strings.Count(out, ": fits"); n != 3 || strings.Contains(out, "NOT fit") {
		t.Fatalf("with 4096-token prompts each of three 80 GiB GPUs should fit its model (%d fit):\n%s", n, out)
	}
	t.Logf("\n%s", out)
}

func TestDrMASMathConfigMicroBatches(t *testing.T) {
	cfg, out := drmasPlan(t, "drmas-math-qwen3-4b.yaml", []string{"qwen3_4b"}, qwen3_4B, 139, 1024)
	checkOneModelPerAgent(t, cfg, 2)
	if !strings.Contains(out, ": fits") || strings.Contains(out, "NOT fit") {
		t.Fatalf("two Qwen3-4B models with micro-batches of 4 should fit one H200:\n%s", out)
	}
	t.Logf("\n%s", out)
}
