// Command gentiny writes the tiny random Qwen2/Qwen3 models that the
// independent PyTorch reference (scripts/model/reference.py) and
// model/reference_test.go share, into testdata/model/<name>/ as Hugging Face
// directories (config.json + model.safetensors).
//
// Regenerate all fixtures, from the repository root:
//
//	go run ./scripts/model/gentiny                    # the models (this program)
//	/usr/bin/python3 scripts/model/reference.py       # their expected logits
//
// (the second step needs Debian's python3-torch and python3-numpy; the
// fixtures are committed, so neither is needed to run the tests).
//
// What it deliberately is not: a test. It only writes weights; the expected
// values come from the Python script, which never runs Go code.
//
// Where it departs from model.New: model.New initialises like transformers
// (norm weights one, biases zero), which would let a forward that ignores the
// norm weights or the biases pass. Here every norm weight is redrawn as
// 1 + 0.2·N(0,1) and every bias as 0.2·N(0,1), and InitializerRange is 0.15
// instead of 0.02, so the logits spread over a few units and a wrong formula
// moves them by far more than the tolerance.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"troupe/model"
	"troupe/torch"
)

// tiny is one fixture model: a configuration worth covering and the dtype
// its weights are stored in.
type tiny struct {
	name    string
	cfg     model.Config
	seed    uint64
	storeAs torch.DType // dtype of model.safetensors
	covers  string
}

func base(f model.Family) model.Config {
	return model.Config{
		Family: f, VocabSize: 64, HiddenSize: 32, IntermediateSize: 48, NumLayers: 2,
		NumHeads: 4, NumKVHeads: 2, HeadDim: 8, RopeTheta: 1e6, RMSNormEps: 1e-6,
		MaxPositions: 128, InitializerRange: 0.15,
	}
}

func fixtures() []tiny {
	q2 := base(model.Qwen2)
	q2.AttentionBias = true

	q2tied := base(model.Qwen2)
	q2tied.AttentionBias = true
	q2tied.NumKVHeads = 1
	q2tied.TieEmbeddings = true
	q2tied.RopeTheta = 10000
	q2tied.RMSNormEps = 1e-5

	q3 := base(model.Qwen3)
	q3.HeadDim = 16 // ≠ hidden/heads = 8, as in Qwen3
	q3.TieEmbeddings = true

	q3untied := base(model.Qwen3)
	q3untied.HeadDim = 16
	q3untied.NumKVHeads = 4
	q3untied.AttentionBias = true // Qwen3's attention_bias: q/k/v and o biases

	return []tiny{
		{"qwen2-tiny", q2, 11, torch.Float32,
			"Qwen2: q/k/v bias, GQA 4 heads / 2 kv heads, untied lm_head, rope_theta 1e6"},
		{"qwen2-tiny-tied", q2tied, 12, torch.BFloat16,
			"Qwen2: MQA (1 kv head), tied embeddings, rope_theta 1e4, eps 1e-5, bf16 weights on disk"},
		{"qwen3-tiny", q3, 13, torch.BFloat16,
			"Qwen3: q_norm/k_norm, head_dim 16 ≠ hidden/heads, GQA 4/2, tied, rope_theta 1e6, bf16 weights on disk"},
		{"qwen3-tiny-untied", q3untied, 14, torch.Float32,
			"Qwen3: attention_bias (q/k/v/o), MHA 4/4, head_dim 16, untied lm_head"},
	}
}

// spreadNormsAndBiases redraws norm weights and biases (see the file comment).
func spreadNormsAndBiases(m *model.Model, seed uint64) error {
	var err error
	defer torch.Recover(&err)
	gen := torch.NewGenerator(torch.CPU, seed)
	defer gen.Free()
	s := torch.NewScope()
	defer s.Close()
	for _, p := range m.Params() {
		switch {
		case strings.HasSuffix(p.Name, "norm.weight"):
			p.T.CopyFrom(torch.Randn(p.T.Shape(), torch.Float32, torch.CPU, gen).MulScalar(0.2).AddScalar(1))
		case strings.HasSuffix(p.Name, ".bias"):
			p.T.CopyFrom(torch.Randn(p.T.Shape(), torch.Float32, torch.CPU, gen).MulScalar(0.2))
		}
	}
	return err
}

func write(out string, f tiny) error {
	m, err := model.New(f.cfg, f.seed, model.Options{DType: torch.Float32, Device: torch.CPU})
	if err != nil {
		return fmt.Errorf("%s: %w", f.name, err)
	}
	defer m.Free()
	if err := spreadNormsAndBiases(m, f.seed+1000); err != nil {
		return fmt.Errorf("%s: redrawing norms and biases: %w", f.name, err)
	}
	dir := filepath.Join(out, f.name)
	if err := m.Save(dir, f.storeAs, 0); err != nil {
		return fmt.Errorf("%s: %w", f.name, err)
	}
	fmt.Printf("%-18s %6d params, %s weights: %s\n", f.name, m.NumParams(), f.storeAs, f.covers)
	return nil
}

func main() {
	out := flag.String("out", "testdata/model", "directory to write the model folders into")
	flag.Parse()
	for _, f := range fixtures() {
		if err := write(*out, f); err != nil {
			fmt.Fprintln(os.Stderr, "gentiny:", err)
			os.Exit(1)
		}
	}
}
