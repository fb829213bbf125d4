package policy

// Benchmarks: the loss on its own (forward + backward over a (8, 1024)
// micro-batch), the whole update step of a small model, and its no-grad pass
// (old log-probs and entropy) alone.
//
//	go test -run '^$' -bench . -benchtime 2s ./policy/

import (
	"fmt"
	"os"
	"testing"
	"troupe/optim"

	"troupe/model"
	"troupe/torch"
)

func BenchmarkLoss(b *testing.B) {
	const B, T = 8, 1024
	s := torch.NewScope()
	defer s.Close()
	g := torch.NewGenerator(torch.CPU, 1)
	defer g.Free()
	logpData := torch.Rand([]int64{B, T}, torch.Float32, torch.CPU, g).Neg()
	old := logpData.Add(torch.Randn([]int64{B, T}, torch.Float32, torch.CPU, g).MulScalar(0.1))
	ref := logpData.Add(torch.Randn([]int64{B, T}, torch.Float32, torch.CPU, g).MulScalar(0.1))
	adv := torch.Randn([]int64{B, 1}, torch.Float32, torch.CPU, g)
	mask := torch.Rand([]int64{B, T}, torch.Float32, torch.CPU, g).GtScalar(0.2)
	set := optim.DefaultSettings()
	set.KLCoef = 0.01
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		func() {
			is := torch.NewScope()
			defer is.Close()
			logp := logpData.Detach().SetRequiresGrad(true)
			in := LossInput{LogProbs: logp, OldLogProbs: old, RefLogProbs: ref, Advantages: adv, Mask: mask}
			out := Loss(in, set)
			out.Loss.Backward()
			rowStats(out, in, nil).Float64s()
		}()
	}
	b.ReportMetric(float64(b.N*B*T)/b.Elapsed().Seconds(), "tokens/s")
}

// benchConfig is a small Qwen3: 2.2 M parameters, vocabulary 4096.
func benchConfig() model.Config {
	return model.Config{Family: model.Qwen3, VocabSize: 4096, HiddenSize: 128, IntermediateSize: 384, NumLayers: 4,
		NumHeads: 4, NumKVHeads: 2, HeadDim: 32, RopeTheta: 10000, RMSNormEps: 1e-6, MaxPositions: 1024,
		InitializerRange: 0.02}
}

// benchRows are 16 rows of 64 prompt and 128–255 response tokens.
func benchRows() []Sequence {
	var rows []Sequence
	for i := 0; i < 16; i++ {
		prompt, resp := make([]int, 64), make([]int, 128+i*8)
		for j := range prompt {
			prompt[j] = (i*31 + j*7) % 4096
		}
		for j := range resp {
			resp[j] = (i*17 + j*13 + 5) % 4096
		}
		rows = append(rows, Sequence{Agent: "a", Prompt: prompt, Response: resp, Advantage: float64(i%3) - 1})
	}
	return rows
}

// BenchmarkUpdate is one train step's update of the small model in float32
// (bf16 on the CPU goes through libtorch 1.13's slow bf16 kernels and says
// nothing about the GPU).
func BenchmarkUpdate(b *testing.B) {
	for _, layout := range []string{"packed", "padded"} {
		b.Run(layout, func(b *testing.B) { benchUpdate(b, layout == "padded") })
	}
}

func benchUpdate(b *testing.B, pad bool) {
	m, err := model.New(benchConfig(), 1, model.Options{DType: torch.Float32, Device: torch.CPU})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Free()
	s := optim.DefaultSettings()
	s.MicroBatchSize = 4
	tr, err := NewTrainer(TrainerConfig{Group: group("m", s, "a"), Policy: m, Temperature: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Free()
	tr.pad = pad
	rows := benchRows()
	tokens := 0
	for _, r := range rows {
		tokens += len(r.Prompt) + len(r.Response)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := tr.Update(rows, i); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*tokens)/b.Elapsed().Seconds(), "tokens/s")
}

// BenchmarkOldLogProbs is the no-grad pass of BenchmarkUpdate alone: its
// share of the step is what recomputing old log-probs costs.
func BenchmarkOldLogProbs(b *testing.B) {
	m, err := model.New(benchConfig(), 1, model.Options{DType: torch.Float32, Device: torch.CPU})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Free()
	s := optim.DefaultSettings()
	s.MicroBatchSize = 4
	tr, err := NewTrainer(TrainerConfig{Group: group("m", s, "a"), Policy: m, Temperature: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Free()
	rows := benchRows()
	sc := torch.NewScope()
	defer sc.Close()
	var minis [][]*microBatch
	split := Split(len(rows), 1, 4, 0, 0)
	for _, micros := range split {
		var mbs []*microBatch
		for _, idx := range micros {
			part := make([]Sequence, len(idx))
			for j, r := range idx {
				part[j] = rows[r]
			}
			bt, err := Pack(part, torch.CPU)
			if err != nil {
				b.Fatal(err)
			}
			mbs = append(mbs, &microBatch{rows: idx, batch: bt})
		}
		minis = append(minis, mbs)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		is := torch.NewScope()
		if err := tr.beforeUpdate(minis, split, true); err != nil {
			b.Fatal(err)
		}
		is.Close()
	}
}

// BenchmarkUpdateCUDA is one update (forward, backward, one optimizer step) of
// a random Qwen2.5-shaped bf16 model on cuda:0 (TROUPE_CUDA=1) over 8 rows
// of 1024 tokens (256 prompt, 768 response): the figure to set beside
// transformers' train step on the same shape (hf_reference.py time-train;
// scripts/gpu/window-bench.sh runs both). TROUPE_BENCH_SHAPE=1.5b for the
// 1.5B shape; sub-benchmarks by micro-batch rows, packed or padded, with
// activation checkpointing or without. Reports tokens/s, the model FLOP
// rate (6·N·tokens: with one optimizer step the old log-probs come from the
// forward itself, policy/trainer.go), peak memory above the weights, and the
// optimizer's bytes per parameter after the step.
func BenchmarkUpdateCUDA(b *testing.B) {
	if os.Getenv("TROUPE_CUDA") != "1" || !torch.CUDAAvailable() {
		b.Skip("set TROUPE_CUDA=1 on a GPU machine")
	}
	dev := torch.CUDA(0)
	cfg := model.Config{Family: model.Qwen2, VocabSize: 151936, HiddenSize: 896, IntermediateSize: 4864, NumLayers: 24,
		NumHeads: 14, NumKVHeads: 2, HeadDim: 64, RopeTheta: 1e6, RMSNormEps: 1e-6, MaxPositions: 32768,
		InitializerRange: 0.02, TieEmbeddings: true, AttentionBias: true}
	if os.Getenv("TROUPE_BENCH_SHAPE") == "1.5b" {
		cfg.HiddenSize, cfg.IntermediateSize, cfg.NumLayers, cfg.NumHeads, cfg.HeadDim = 1536, 8960, 28, 12, 128
	}
	var rows []Sequence
	for i := range 8 {
		prompt, resp := make([]int, 256), make([]int, 768)
		for j := range prompt {
			prompt[j] = (i*31 + j*7) % cfg.VocabSize
		}
		for j := range resp {
			resp[j] = (i*17 + j*13 + 5) % cfg.VocabSize
		}
		rows = append(rows, Sequence{Agent: "a", Prompt: prompt, Response: resp, Advantage: float64(i%3) - 1})
	}
	for _, c := range []struct {
		micro     int
		pad, ckpt bool
	}{{8, false, false}, {2, false, false}, {2, true, false}, {8, false, true}} {
		name := fmt.Sprintf("micro=%d/packed", c.micro)
		if c.pad {
			name = fmt.Sprintf("micro=%d/padded", c.micro)
		}
		if c.ckpt {
			name += "/checkpointed"
		}
		b.Run(name, func(b *testing.B) {
			m, err := model.New(cfg, 1, model.Options{DType: torch.BFloat16, Device: dev})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Free()
			n := float64(m.NumParams())
			torch.Synchronize(dev)
			weights := torch.Memory(dev).Allocated
			s := optim.DefaultSettings()
			s.MicroBatchSize, s.ActivationCheckpointing = c.micro, c.ckpt
			tr, err := NewTrainer(TrainerConfig{Group: group("m", s, "a"), Policy: m, Temperature: 1})
			if err != nil {
				b.Fatal(err)
			}
			defer tr.Free()
			tr.pad = c.pad
			if _, err := tr.Update(rows, 0); err != nil { // warm-up: kernels, allocator, optimizer state
				b.Fatal(err)
			}
			torch.Synchronize(dev)
			torch.ResetPeakMemory(dev)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := tr.Update(rows, i+1); err != nil {
					b.Fatal(err)
				}
			}
			torch.Synchronize(dev)
			sec := b.Elapsed().Seconds()
			mem := torch.Memory(dev)
			tokens := float64(8 * 1024 * b.N)
			b.ReportMetric(tokens/sec, "tokens/s")
			flops := 6.0 // forward and backward; one optimizer step takes its old log-probs from the forward
			if s.MiniBatches(len(rows))*s.Epochs > 1 {
				flops = 8 // and the no-grad old-log-prob pass
			}
			b.ReportMetric(flops*n*tokens/sec/1e12, "TFLOP/s")
			b.ReportMetric(float64(mem.PeakAllocated-weights)/(1<<30), "peak_GiB_above_weights")
			b.ReportMetric(float64(mem.Allocated-weights)/n, "state_B/param")
		})
	}
}
