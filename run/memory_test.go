package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"troupe/config"
	"troupe/model"
	"troupe/torch"
)

// qwen3_4B is Qwen3-4B's config.json (4,022,468,096 parameters).
const qwen3_4B = `{"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "head_dim": 128, "hidden_size": 2560,
 "intermediate_size": 9728, "max_position_embeddings": 40960, "num_attention_heads": 32, "num_hidden_layers": 36,
 "num_key_value_heads": 8, "rms_norm_eps": 1e-06, "rope_theta": 1000000, "tie_word_embeddings": true,
 "vocab_size": 151936, "torch_dtype": "bfloat16"}`

// The resident memory of a run is worked out from config.json before any
// weight loads: two separately trained Qwen3-4B in bf16 hold 14 bytes per
// parameter each (weights, float32 masters and moments) and do not fit an
// 80 GB GPU; one shared model does; evaluation holds the weights alone;
// adapters share one frozen base; a KL reference on another GPU counts
// there.
func TestResidentMemoryPlan(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(qwen3_4B), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), []byte("{}"), 0o644); err != nil { // config checks it exists
		t.Fatal(err)
	}
	const P = 4_022_468_096
	load := func(assignment string, extra ...string) *config.Config {
		t.Helper()
		y := "run: {device: cuda:0, dtype: bfloat16}\nmodels:\n  qwen: {path: " + dir + "}\nassignment: " + assignment + "\n" +
			"agents:\n  - {name: solver, model: qwen, preset: math-solver}\n  - {name: verifier, model: qwen, preset: math-verifier}\n" + strings.Join(extra, "\n") + "\n"
		path := filepath.Join(t.TempDir(), "run.yaml")
		if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	on := func(parts []residentPart, dev torch.Device) (n int64) {
		for _, p := range parts {
			if p.dev == dev {
				n += p.bytes
			}
		}
		return n
	}
	h100 := func(int) (uint64, uint64, error) { return 79 << 30, 80 << 30, nil }

	sep, err := residentPlan(load("separate"), true, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := on(sep, torch.CUDA(0)); got != 2*P*(2+4+8) {
		t.Fatalf("separate: %d bytes on cuda:0, want 2 models × 14 bytes × %d", got, P)
	}
	err = checkResident(sep, h100)
	if err == nil || !strings.Contains(err.Error(), "cuda:0 cannot hold this run") || !strings.Contains(err.Error(), "model verifier: optimizer state") ||
		!strings.Contains(err.Error(), "assignment: shared") {
		t.Fatalf("two 4B models on one 80 GB GPU: %v", err)
	}
	if evalOnly, _ := residentPlan(load("separate"), false, 0); checkResident(evalOnly, h100) != nil || on(evalOnly, torch.CUDA(0)) != 2*P*2 {
		t.Fatalf("evaluation holds the weights alone: %d bytes", on(evalOnly, torch.CUDA(0)))
	}

	// optim.state_dtype model (PettingLLMs', CoMLRL's AdamW over bf16
	// weights): no master, bf16 moments — 2 + 2 bytes per parameter where
	// float32 state holds 12; the plan's line says what it holds and saves
	pure, err := residentPlan(load("separate", "optim: {state_dtype: model}"), true, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := on(pure, torch.CUDA(0)); got != 2*P*(2+4) || checkResident(pure, h100) != nil {
		t.Fatalf("state_dtype model: %d bytes on cuda:0, want 2 models × 6 bytes × %d, and it fits", got, P)
	}
	saves := false
	for _, p := range pure {
		saves = saves || strings.Contains(p.what, "optimizer state (4 bytes per parameter: two moments in the weights' dtype, no master (state_dtype model), 8 fewer than float32 state)")
	}
	if !saves {
		t.Errorf("state_dtype model: no plan line names the 4 bytes per parameter and the 8 it saves: %+v", pure)
	}

	shared, _ := residentPlan(load("shared"), true, 0)
	if got := on(shared, torch.CUDA(0)); got != P*14 || checkResident(shared, h100) != nil {
		t.Fatalf("shared: %d bytes, want %d, and it fits", got, P*14)
	}

	lora, err := residentPlan(load("lora", "lora: {rank: 16, alpha: 32}"), true, 0)
	if err != nil {
		t.Fatal(err)
	}
	// one frozen base, and two small adapters (their count is model's, tested there)
	var base, adapters int64
	for _, p := range lora {
		if strings.Contains(p.what, "frozen base") {
			base += p.bytes
		} else {
			adapters += p.bytes
		}
	}
	mc, err := model.ParseConfig([]byte(qwen3_4B))
	if err != nil {
		t.Fatal(err)
	}
	if A := mc.LoRAParams(16, model.LoRATargets); base != P*2 || adapters != 2*A*14 {
		t.Fatalf("lora: base %d bytes (want %d, once), adapters %d (want 2 × 14 bytes × %d)", base, P*2, adapters, A)
	}

	cfg := load("shared", "optim: {kl_coef: 0.01}")
	m := cfg.Models["qwen"]
	m.ReferenceDevice = "cuda:1"
	cfg.Models["qwen"] = m
	withRef, err := residentPlan(cfg, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	if on(withRef, torch.CUDA(1)) != P*2 || on(withRef, torch.CUDA(0)) != P*14 {
		t.Fatalf("a KL reference on cuda:1: %d bytes there, %d on cuda:0", on(withRef, torch.CUDA(1)), on(withRef, torch.CUDA(0)))
	}
	// an unreadable device is not checked
	if err := checkResident(sep, func(int) (uint64, uint64, error) { return 0, 0, os.ErrNotExist }); err != nil {
		t.Fatalf("no NVML: %v", err)
	}
}

// The plan sizes each engine's arena as a run does — kv_fraction of what
// the resident part leaves free on the GPU — and says when a step's
// trajectories outnumber the slots or the run does not fit.
func TestMemoryPlanArenasAndPeaks(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"config.json": qwen3_4B, "tokenizer.json": "{}"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	y := "run: {device: cuda:0, dtype: bfloat16}\nmodels:\n  qwen: {path: " + dir + "}\nassignment: shared\n" +
		"agents:\n  - {name: solver, model: qwen, preset: math-solver}\n  - {name: verifier, model: qwen, preset: math-verifier}\n" +
		"max_new_tokens: 4096\nbatch: {prompts_per_step: 32, n: 8}\noptim: {activation_checkpointing: true, grad_accum_dtype: param}\n"
	path := filepath.Join(dir, "run.yaml")
	if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	const capacity = 80 << 30
	p, err := memoryPlan(cfg, capacity, 1024, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(p) != 1 || p[0].dev != torch.CUDA(0) {
		t.Fatalf("plan devices: %v", p)
	}
	d := p[0]
	const P = 4_022_468_096
	resident := int64(P * 14)
	perToken := int64(36 * 2 * 8 * 128 * 2) // layers × K,V × KV heads × head_dim × bf16
	slotLen := int64(4096 + 2048)
	slots := int64(0.3*float64(capacity-resident)) / (slotLen * perToken)
	// the arena, then the decode step's logits and top-p sampling (Dr. MAS's
	// evaluation sampling has top-p 0.95): 48 bytes per vocabulary entry and slot
	if d.sum(d.resident) != resident || len(d.arenas) != 2 || d.arenas[0].bytes != slots*slotLen*(perToken+16) ||
		d.arenas[1].bytes != slots*151936*48 {
		t.Fatalf("resident %d (want %d), arenas %v (want %d slots of %d tokens)", d.sum(d.resident), resident, d.arenas, slots, slotLen)
	}
	if len(d.notes) != 1 || !strings.Contains(d.notes[0], "at most 9 of a step's 256 trajectories") {
		t.Fatalf("notes: %q", d.notes)
	}
	// printed returns the plan of cfg as `train plan` prints it
	printed := func() string {
		t.Helper()
		p, err := memoryPlan(cfg, capacity, 1024, 0)
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		p.print(&out)
		return out.String()
	}
	if out := printed(); !strings.Contains(out, ": fits") {
		t.Fatalf("a shared 4B model fits 80 GiB:\n%s", out)
	}
	// with float32 grad sums (auto: 64 micro-batches of 4 rows, the reference
	// scripts' micro-batch) it no longer does
	s := cfg.Optim
	s.GradAccumDType = "auto"
	cfg.Optim = s
	if out := printed(); !strings.Contains(out, "at least 64 micro-batches") || !strings.Contains(out, "does NOT fit") {
		t.Fatalf("float32 sums of a 4B model:\n%s", out)
	}
	// mini-batches of 16 rows (mini_batch_rows) hold 4 micro-batches of 4:
	// no float32 sums under auto
	s.MiniBatchRows = 16
	cfg.Optim = s
	if out := printed(); strings.Contains(out, "at least") || !strings.Contains(out, "if a mini-batch has more than 16 micro-batches") {
		t.Fatalf("mini_batch_rows 16 with micro-batches of 4:\n%s", out)
	}
	s.MiniBatchRows = 0
	cfg.Optim = s
	// two separate copies do not
	cfg.Assignment = "separate"
	if out := printed(); !strings.Contains(out, "does NOT fit") || !strings.Contains(out, "cannot start") {
		t.Fatalf("two 4B models on 80 GiB:\n%s", out)
	}
}
