package model

import (
	"fmt"
	"testing"

	"troupe/torch"
)

// benchConfig is a small but not trivial model for CPU throughput figures:
// 4 layers, hidden 256, GQA 8/2 heads, vocab 4096 (≈ 5M parameters).
func benchConfig() Config {
	return Config{Family: Qwen3, VocabSize: 4096, HiddenSize: 256, IntermediateSize: 704, NumLayers: 4,
		NumHeads: 8, NumKVHeads: 2, HeadDim: 32, RopeTheta: 1e6, RMSNormEps: 1e-6, MaxPositions: 4096,
		InitializerRange: 0.02, TieEmbeddings: true}
}

func benchModel(b *testing.B) *Model {
	m, err := New(benchConfig(), 1, cpu32)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(m.Free)
	return m
}

func prompts(batch, length int) [][]int {
	out := make([][]int, batch)
	for i := range out {
		out[i] = make([]int, length)
		for j := range out[i] {
			out[i][j] = (i*31 + j*7) % 4096
		}
	}
	return out
}

// BenchmarkPrefill reports prompt tokens per second (no grad, 128-token prompts).
func BenchmarkPrefill(b *testing.B) {
	m := benchModel(b)
	for _, batch := range []int{1, 32} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			in, _ := Pack(prompts(batch, 128), PadRight, torch.CPU)
			defer in.Free()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				torch.NoGrad(func() {
					s := torch.NewScope()
					m.hidden(in.IDs, in.Positions, in.Valid, nil)
					s.Close()
				})
			}
			b.ReportMetric(float64(batch*128*b.N)/b.Elapsed().Seconds(), "tok/s")
		})
	}
}

// BenchmarkDecode reports generated tokens per second (greedy, 32-token
// prompts, 64 new tokens per row, cache reused).
func BenchmarkDecode(b *testing.B) {
	m := benchModel(b)
	for _, batch := range []int{1, 32} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			var reqs []GenRequest
			for _, p := range prompts(batch, 32) {
				reqs = append(reqs, GenRequest{Prompt: p, MaxNewTokens: 64})
			}
			cache, _ := m.NewCache(batch, 96)
			defer cache.Free()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := m.Generate(reqs, cache, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(batch*64*b.N)/b.Elapsed().Seconds(), "tok/s")
		})
	}
}

// BenchmarkTrainStep reports tokens per second of TokenLogProbs forward and
// backward on 8 sequences of 256 tokens.
func BenchmarkTrainStep(b *testing.B) {
	m := benchModel(b)
	m.SetRequiresGrad(true)
	in, _ := Pack(prompts(8, 256), PadRight, torch.CPU)
	defer in.Free()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := torch.NewScope()
		lp, _, err := m.TokenLogProbs(in, ShiftTargets(in), in.Valid, LogProbOptions{})
		if err != nil {
			b.Fatal(err)
		}
		lp.Sum().Backward()
		for _, p := range m.Parameters() {
			p.ZeroGrad()
		}
		s.Close()
	}
	b.ReportMetric(float64(8*256*b.N)/b.Elapsed().Seconds(), "tok/s")
}
