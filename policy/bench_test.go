package policy

// Benchmarks: the loss on its own (forward + backward over a (8, 1024)
// micro-batch), the whole update step of a small model, and its no-grad pass
// (old log-probs and entropy) alone.
//
//	go test -run '^$' -bench . -benchtime 2s ./policy/

import (
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
			out := Loss(LossInput{LogProbs: logp, OldLogProbs: old, RefLogProbs: ref, Advantages: adv, Mask: mask}, set)
			out.Loss.Backward()
			rowStats(out, logp, old, mask).Float64s()
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
	for _, micros := range Split(len(rows), 1, 4, 0, 0) {
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
		if err := tr.beforeUpdate(minis); err != nil {
			b.Fatal(err)
		}
		is.Close()
	}
}
