package model

import (
	"fmt"
	"os"
	"runtime"
	"slices"
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
					m.hidden(in.IDs, in.Positions, in.Valid, nil, route{})
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

// qwen25HalfB is Qwen2.5-0.5B's architecture (random weights).
func qwen25HalfB() Config {
	return Config{Family: Qwen2, VocabSize: 151936, HiddenSize: 896, IntermediateSize: 4864, NumLayers: 24,
		NumHeads: 14, NumKVHeads: 2, HeadDim: 64, RopeTheta: 1e6, RMSNormEps: 1e-6, MaxPositions: 32768,
		InitializerRange: 0.02, TieEmbeddings: true, AttentionBias: true}
}

// BenchmarkDecodeCUDA reports decode tokens/s of a Qwen2.5-0.5B-sized random
// model in bf16 on cuda:0 (TROUPE_CUDA=1), the figure to set beside
// transformers' generate on the same shape (scripts/gpu/hf_reference.py time):
// 128-token prompts, 128 new tokens per row, greedy, cache reused.
func BenchmarkDecodeCUDA(b *testing.B) {
	if os.Getenv("TROUPE_CUDA") != "1" || !torch.CUDAAvailable() {
		b.Skip("set TROUPE_CUDA=1 on a GPU machine")
	}
	dev := torch.CUDA(0)
	m, err := New(qwen25HalfB(), 1, Options{DType: torch.BFloat16, Device: dev})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Free()
	for _, batch := range []int{1, 32} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			var reqs []GenRequest
			for _, p := range prompts(batch, 128) {
				reqs = append(reqs, GenRequest{Prompt: p, MaxNewTokens: 128})
			}
			cache, err := m.NewCache(batch, 256)
			if err != nil {
				b.Fatal(err)
			}
			defer cache.Free()
			m.Generate(reqs, cache, nil) // warm-up: kernels, allocator
			torch.Synchronize(dev)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := m.Generate(reqs, cache, nil); err != nil {
					b.Fatal(err)
				}
			}
			torch.Synchronize(dev)
			b.ReportMetric(float64(batch*128*b.N)/b.Elapsed().Seconds(), "tok/s")
		})
	}
}

// groupRequests is a GRPO-shaped workload: prompts × n rows, n sharing
// each 128-token prompt, sampled at T = 1 with 64 new tokens.
func groupRequests(groups, n int) []EngineRequest {
	var reqs []EngineRequest
	for g, p := range prompts(groups, 128) {
		for j := range n {
			reqs = append(reqs, EngineRequest{GenRequest: GenRequest{Prompt: p, MaxNewTokens: 64, Sampling: Sampling{Temperature: 1}},
				Seed: uint64(g*n + j)})
		}
	}
	return reqs
}

// BenchmarkEngine sets the engine beside the plain Generate on CPU: greedy
// decode at batch 1 and 32 (32-token prompts, 64 new tokens), and a group
// workload of 8 prompts × 8 samples where the engine prefills each prompt
// once.
func BenchmarkEngine(b *testing.B) {
	m := benchModel(b)
	for _, batch := range []int{1, 32} {
		b.Run(fmt.Sprintf("decode/batch=%d", batch), func(b *testing.B) {
			var reqs []EngineRequest
			for _, p := range prompts(batch, 32) {
				reqs = append(reqs, EngineRequest{GenRequest: GenRequest{Prompt: p, MaxNewTokens: 64}})
			}
			// no prefix cache: every iteration prefills, as the first does
			e, err := m.NewEngine(EngineConfig{SlotLen: 96, MaxSlots: batch, NoPrefixCache: true})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Free()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := e.Generate(reqs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(batch*64*b.N)/b.Elapsed().Seconds(), "tok/s")
		})
	}
	reqs := groupRequests(8, 8)
	b.Run("group-8x8/plain", func(b *testing.B) {
		plain := make([]GenRequest, len(reqs))
		for i, r := range reqs {
			plain[i] = r.GenRequest
		}
		cache, _ := m.NewCache(len(plain), 192)
		defer cache.Free()
		g := torch.NewGenerator(torch.CPU, 1)
		defer g.Free()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := m.Generate(plain, cache, g); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(reqs)*64*b.N)/b.Elapsed().Seconds(), "tok/s")
	})
	b.Run("group-8x8/engine", func(b *testing.B) {
		e, err := m.NewEngine(EngineConfig{SlotLen: 192, MaxSlots: 64, NoPrefixCache: true})
		if err != nil {
			b.Fatal(err)
		}
		defer e.Free()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := e.Generate(reqs); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(reqs)*64*b.N)/b.Elapsed().Seconds(), "tok/s")
	})
	// two turns of 16 conversations: the second turn's prompt is the first
	// turn's prompt and response and 16 more tokens; with the prefix cache
	// it computes only those 16 (and the response's last token)
	for _, cached := range []bool{false, true} {
		b.Run(fmt.Sprintf("multiturn-16/prefix_cache=%v", cached), func(b *testing.B) {
			e, err := m.NewEngine(EngineConfig{SlotLen: 256, MaxSlots: 16, NoPrefixCache: !cached})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Free()
			ps := prompts(16, 128)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				m.MarkUpdated() // each iteration starts from an empty cache
				turn1 := make([]EngineRequest, len(ps))
				for j, p := range ps {
					turn1[j] = EngineRequest{GenRequest: GenRequest{Prompt: p, MaxNewTokens: 32, Sampling: Sampling{Temperature: 1}}, Seed: uint64(j)}
				}
				out, err := e.Generate(turn1)
				if err != nil {
					b.Fatal(err)
				}
				turn2 := make([]EngineRequest, len(ps))
				for j, p := range ps {
					next := slices.Concat(p, out[j].Tokens, prompts(1, 16)[0])
					turn2[j] = EngineRequest{GenRequest: GenRequest{Prompt: next, MaxNewTokens: 32, Sampling: Sampling{Temperature: 1}}, Seed: uint64(100 + j)}
				}
				if _, err := e.Generate(turn2); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(2*16*32*b.N)/b.Elapsed().Seconds(), "tok/s")
		})
	}
}

// BenchmarkEngineCUDA reports the engine's decode tokens/s on a
// Qwen2.5-0.5B-shaped random model in bf16 on cuda:0 (TROUPE_CUDA=1) at the
// batch sizes of the rollout-engine targets: 128-token prompts, 128 new
// tokens, greedy; TROUPE_BENCH_SHAPE=1.5b for the 1.5B shape. Each batch
// size runs eagerly and with the decode step replayed from CUDA graphs; the
// eager runs also report the kernels a decode step launches (counted ATen
// calls, torch.CountOps). Where the build has the fused RMSNorm kernel,
// batches 1 and 32 run with graphs once more with RMSNorm by explicit ops.
func BenchmarkEngineCUDA(b *testing.B) {
	if os.Getenv("TROUPE_CUDA") != "1" || !torch.CUDAAvailable() {
		b.Skip("set TROUPE_CUDA=1 on a GPU machine")
	}
	dev := torch.CUDA(0)
	cfg := qwen25HalfB()
	if os.Getenv("TROUPE_BENCH_SHAPE") == "1.5b" {
		cfg.HiddenSize, cfg.IntermediateSize, cfg.NumLayers, cfg.NumHeads, cfg.HeadDim = 1536, 8960, 28, 12, 128
	}
	m, err := New(cfg, 1, Options{DType: torch.BFloat16, Device: dev})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Free()
	runtime.LockOSThread() // graph captures need one OS thread
	defer runtime.UnlockOSThread()
	type run struct {
		batch    int
		graphs   bool
		explicit bool // RMSNorm by explicit ops rather than the fused kernel
	}
	var runs []run
	for _, batch := range []int{1, 32, 64, 256} {
		runs = append(runs, run{batch, false, false}, run{batch, true, false})
	}
	if torch.FusedRMSNorm() { // what the fused RMSNorm kernel gains
		runs = append(runs, run{1, true, true}, run{32, true, true})
	}
	for _, r := range runs {
		name := fmt.Sprintf("batch=%d/graphs=%v", r.batch, r.graphs)
		if r.explicit {
			name += "/norm=explicit"
		}
		b.Run(name, func(b *testing.B) {
			defer torch.SetFusedRMSNorm(torch.SetFusedRMSNorm(!r.explicit))
			var reqs []EngineRequest
			for _, p := range prompts(r.batch, 128) {
				reqs = append(reqs, EngineRequest{GenRequest: GenRequest{Prompt: p, MaxNewTokens: 128}})
			}
			// no prefix cache: every iteration prefills, as the first does
			e, err := m.NewEngine(EngineConfig{SlotLen: 256, MaxSlots: r.batch, NoPrefixCache: true, CUDAGraphs: r.graphs})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Free()
			if _, err := e.Generate(reqs); err != nil { // warm-up: kernels, allocator, graph capture
				b.Fatal(err)
			}
			if err := e.GraphError(); err != nil {
				b.Fatal(err)
			}
			torch.Synchronize(dev)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := e.Generate(reqs); err != nil {
					b.Fatal(err)
				}
			}
			torch.Synchronize(dev)
			b.StopTimer()
			b.ReportMetric(float64(r.batch*128*b.N)/b.Elapsed().Seconds(), "tok/s")
			st := e.Stats()
			b.ReportMetric(float64(st.GraphReplays)/float64(max(1, st.DecodeSteps)), "replayed/step")
			if !r.graphs { // a replay dispatches no ATen calls to count
				_, kernels := decodeStepOps(b, m, r.batch, false)
				b.ReportMetric(kernels, "kernels/step")
			}
		})
	}
}

// decodeStepOps counts the ATen operator calls of one engine decode step at
// batch rows: a generation of 17 tokens less one of 1 (the same prefill and
// first sample), over 16. Leaves approximate kernel launches on a GPU.
func decodeStepOps(b *testing.B, m *Model, batch int, static bool) (ops, leaves float64) {
	count := func(newTokens int) torch.OpCount {
		var reqs []EngineRequest
		for _, p := range prompts(batch, 16) {
			reqs = append(reqs, EngineRequest{GenRequest: GenRequest{Prompt: p, MaxNewTokens: newTokens}})
		}
		e, err := m.NewEngine(EngineConfig{SlotLen: 64, MaxSlots: batch, NoPrefixCache: true, StaticBatches: static})
		if err != nil {
			b.Fatal(err)
		}
		defer e.Free()
		if _, err := e.Generate(reqs); err != nil { // warm-up: first-call work stays out of the count
			b.Fatal(err)
		}
		var n torch.OpCount
		n = torch.CountOps(func() {
			if _, err = e.Generate(reqs); err != nil {
				b.Fatal(err)
			}
		})
		return n
	}
	one, many := count(1), count(17)
	return float64(many.Ops-one.Ops) / 16, float64(many.Leaves-one.Leaves) / 16
}

// BenchmarkDecodeStepOps reports the ATen operator calls ("ops") and the
// leaf calls ("leaves", roughly the kernels a GPU launches) of one engine
// decode step at batch 4, per layer and in all, for the 4-layer bench model
// as Qwen2 and as Qwen3 (per-head q/k norms), in float32 and bfloat16; with
// TROUPE_BENCH_SHAPE=0.5b also for the Qwen2.5-0.5B shape in bfloat16
// (random weights, ~1 GB). A count, not a timing: the same on every run of
// a build.
func BenchmarkDecodeStepOps(b *testing.B) {
	type shape struct {
		name string
		cfg  Config
		dt   torch.DType
	}
	var shapes []shape
	for _, family := range []Family{Qwen2, Qwen3} {
		for _, dt := range []torch.DType{torch.Float32, torch.BFloat16} {
			cfg := benchConfig()
			cfg.Family = family
			shapes = append(shapes, shape{fmt.Sprintf("%s/%v", family, dt), cfg, dt})
		}
	}
	if os.Getenv("TROUPE_BENCH_SHAPE") == "0.5b" {
		shapes = append(shapes, shape{"qwen2.5-0.5b/bfloat16", qwen25HalfB(), torch.BFloat16})
	}
	for _, sh := range shapes {
		b.Run(sh.name, func(b *testing.B) {
			m, err := New(sh.cfg, 1, Options{DType: sh.dt, Device: torch.CPU})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Free()
			var ops, leaves float64
			for range b.N {
				ops, leaves = decodeStepOps(b, m, 4, false)
			}
			b.ReportMetric(ops, "ops/step")
			b.ReportMetric(leaves, "leaves/step")
			b.ReportMetric(leaves/float64(sh.cfg.NumLayers), "leaves/step/layer")
		})
	}
}
