package ckpt

import (
	"path/filepath"
	"testing"

	"troupe/model"
	"troupe/torch"
)

// benchConfig is a 21M-parameter Qwen3 (84 MB of float32 weights, 252 MB
// with AdamW's two moments), big enough for file throughput to dominate.
func benchConfig() model.Config {
	c := tinyConfig()
	c.VocabSize, c.HiddenSize, c.IntermediateSize, c.NumLayers, c.NumHeads, c.NumKVHeads, c.HeadDim = 8192, 512, 1408, 4, 8, 4, 64
	return c
}

// stepped returns a benchmark model whose optimizer has state for every
// parameter (filled by loading moments of ones, no training needed).
func stepped(b *testing.B, dt torch.DType, master bool) (*model.Model, *torch.AdamW) {
	m, err := model.New(benchConfig(), 1, model.Options{DType: dt, Device: torch.CPU})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(m.Free)
	opt := torch.NewAdamW([]torch.AdamWGroup{{Params: m.Parameters(), LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}}, master)
	b.Cleanup(opt.Free)
	for i, p := range opt.Params() {
		s := torch.NewScope()
		ones := torch.Ones(p.Shape(), torch.Float32, torch.CPU)
		st := torch.AdamWState{Step: 1, ExpAvg: ones, ExpAvgSq: ones}
		if master {
			st.Master = p.ToDType(torch.Float32)
		}
		opt.LoadState(i, st)
		s.Close()
	}
	return m, opt
}

func stateBytesOf(m *model.Model, master bool) int64 {
	var n int64
	for _, p := range m.Params() {
		n += p.T.Numel() * int64(p.T.DType().Size()+8)
		if master {
			n += p.T.Numel() * 4
		}
	}
	return n
}

// BenchmarkSaveModelState measures writing weights and optimizer state into
// a checkpoint directory (including fsync), and BenchmarkLoadModelState
// reading them back into a live model and optimizer.
func BenchmarkSaveModelState(b *testing.B) {
	for _, tc := range []struct {
		name   string
		dt     torch.DType
		master bool
	}{{"f32", torch.Float32, false}, {"bf16-master", torch.BFloat16, true}} {
		b.Run(tc.name, func(b *testing.B) {
			m, opt := stepped(b, tc.dt, tc.master)
			dir := filepath.Join(b.TempDir(), "m")
			b.SetBytes(stateBytesOf(m, tc.master))
			for b.Loop() {
				if err := SaveModelState(dir, m, opt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkLoadModelState(b *testing.B) {
	for _, tc := range []struct {
		name   string
		dt     torch.DType
		master bool
	}{{"f32", torch.Float32, false}, {"bf16-master", torch.BFloat16, true}} {
		b.Run(tc.name, func(b *testing.B) {
			m, opt := stepped(b, tc.dt, tc.master)
			dir := filepath.Join(b.TempDir(), "m")
			if err := SaveModelState(dir, m, opt); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(stateBytesOf(m, tc.master))
			for b.Loop() {
				if err := LoadModelState(dir, m, opt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkExport measures a bf16 export of a float32 model (conversion,
// write, fsync, rename, tokenizer files); bytes are the f32 weights read.
func BenchmarkExport(b *testing.B) {
	m, err := model.New(benchConfig(), 1, model.Options{DType: torch.Float32, Device: torch.CPU})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Free()
	tok := writeTokenizer(b)
	dst := filepath.Join(b.TempDir(), "export")
	b.SetBytes(m.NumParams() * 4)
	for b.Loop() {
		if err := Export(dst, m, tok, ExportOptions{DType: "bfloat16"}); err != nil {
			b.Fatal(err)
		}
	}
}
