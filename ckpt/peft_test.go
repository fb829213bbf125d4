package ckpt

// The external check of adapter exports: PEFT loads what Export wrote for an
// adapter's view, on the exported base, and gives troupe's logits; the
// merged export loads in transformers with the same logits. Runs with the
// Python reference environment (see transformers_test.go), and is skipped
// where there is none or, outside `make test`, when peft is missing. The
// other direction, an adapter PEFT wrote loaded by troupe, is model's
// TestPEFTAdapterLoadsInTroupe; every agent's adapter of a LoRA run is
// cmd/train's TestLoRARunExportLoadsInPEFT.

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"troupe/internal/pyref"
	"troupe/model"
	"troupe/tokenizer"
	"troupe/torch"
)

func TestAdapterLoadsInPEFT(t *testing.T) {
	python := transformersPython(t)
	root := t.TempDir()
	tokDir := filepath.Join(root, "tokenizer-src")
	if err := tokenizer.WriteByteLevel(tokDir, tokenizer.ByteLevelOptions{}); err != nil {
		t.Fatal(err)
	}
	qwen2 := tinyConfig()
	qwen2.Family, qwen2.AttentionBias, qwen2.TieEmbeddings = model.Qwen2, true, true
	// Llama 3.2's structure: llama3 rope scaling (all three bands hold some
	// of the 8 frequencies), tied embeddings; and one with MLP biases, which
	// LoRA's MLP targets wrap
	llama := tinyConfig()
	llama.Family, llama.HeadDim, llama.RopeTheta, llama.TieEmbeddings = model.Llama, 16, 5e5, true
	llama.RopeScaling = &model.RopeScaling{Type: "llama3", Factor: 8, LowFreqFactor: 1, HighFreqFactor: 4, OriginalMaxPositions: 32}
	llamaBias := llama
	llamaBias.TieEmbeddings, llamaBias.AttentionBias, llamaBias.MLPBias = false, true, true
	for _, v := range []struct {
		name string
		cfg  model.Config
		lora model.LoRAConfig
	}{
		{"qwen3-all", tinyConfig(), model.LoRAConfig{Rank: 4, Alpha: 8, Targets: model.LoRATargets, Seed: 1}},
		{"qwen3-attn-rslora", tinyConfig(), model.LoRAConfig{Rank: 2, Alpha: 3, Targets: []string{"q_proj", "v_proj", "o_proj"}, RSLoRA: true, Seed: 2}},
		{"qwen2-mlp", qwen2, model.LoRAConfig{Rank: 3, Alpha: 6, Targets: []string{"gate_proj", "up_proj", "down_proj"}, Seed: 3}},
		{"llama3.2-all", llama, model.LoRAConfig{Rank: 4, Alpha: 8, Targets: model.LoRATargets, Seed: 4}},
		{"llama-bias-mlp-rslora", llamaBias, model.LoRAConfig{Rank: 2, Alpha: 3, Targets: []string{"o_proj", "gate_proj", "down_proj"}, RSLoRA: true, Seed: 5}},
	} {
		sub := filepath.Join(root, v.name)
		base := newModel(t, v.cfg, 4, torch.Float32)
		spread(t, base)
		if err := Export(filepath.Join(sub, "base"), base, tokDir, ExportOptions{}); err != nil {
			t.Fatal(err)
		}
		a, err := base.NewAdapter(v.lora)
		if err != nil {
			t.Fatal(err)
		}
		func() { // a trained adapter's B is not zero
			defer torch.Recover(&err)
			g := torch.NewGenerator(torch.CPU, 9)
			defer g.Free()
			torch.NoGrad(func() {
				for _, p := range a.Params() {
					if strings.HasSuffix(p.Name, "lora_B.weight") {
						s := torch.NewScope()
						p.T.CopyFrom(torch.Randn(p.T.Shape(), torch.Float32, torch.CPU, g).MulScalar(0.3))
						s.Close()
					}
				}
			})
		}()
		if err != nil {
			t.Fatal(err)
		}
		a.BaseModel = "base"
		if err := Export(filepath.Join(sub, "adapter"), a.Model(), tokDir, ExportOptions{}); err != nil {
			t.Fatal(err)
		}
		merged, err := a.Merged()
		if err != nil {
			t.Fatal(err)
		}
		if err := Export(filepath.Join(sub, "adapter-merged"), merged, tokDir, ExportOptions{}); err != nil {
			t.Fatal(err)
		}
		merged.Free()
		ref := exportReference{Sequences: [][]int{{1, 2, 3, 257, 100, 258}, {72, 105, 33}}}
		for _, seq := range ref.Sequences {
			ref.Logits = append(ref.Logits, logitsRows(t, a.Model(), seq))
		}
		if err := SaveJSON(filepath.Join(sub, "adapter.reference.json"), ref); err != nil {
			t.Fatal(err)
		}
		script, err := filepath.Abs(filepath.Join("..", "testdata", "ckpt", "check_peft.py"))
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(python, script, sub).CombinedOutput()
		t.Logf("%s: %s %s %s:\n%s", v.name, python, script, sub, out)
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 3 && !pyref.Required() {
			t.Skip("peft is not installed beside transformers")
		}
		if err != nil {
			t.Fatalf("%s: PEFT check failed: %v", v.name, err)
		}
	}
}
