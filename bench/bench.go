package bench

// bench.go — generation and update throughput of one model on one device.
//
// What it measures, per batch size: prefill (the prompts through the
// engine, first token sampled: prompt tokens per second), decode (the
// engine's further tokens: generated tokens per second, the prefill's time
// subtracted) and one update (token log-probs, a mean negative log-prob
// loss, backward, AdamW: tokens per second). Every figure is the best of
// Reps timed repetitions after one warm-up, so a busy machine's worst
// moments do not enter it. What it is not: a sampler benchmark (decoding is
// greedy), nor the policy loss's (the loss is the plainest that reaches
// every weight; policy's own benchmarks time the clipped loss).

import (
	"fmt"
	"time"

	"troupe/model"
	"troupe/torch"
)

// Options say what to time.
type Options struct {
	Batches    []int // decode batch sizes (rows generated at once)
	PromptLen  int   // prompt tokens per row
	NewTokens  int   // generated tokens per row (≥ 2: the first comes from the prefill)
	UpdateRows int   // update batch rows (0: no update)
	UpdateLen  int   // tokens per update row
	Reps       int   // timed repetitions; the best is reported
	SkipGen    bool  // time the update only
	CPUKernels bool  // the engine's CPU generation kernels (engine.cpu_kernels)
}

// Row is one measured figure.
type Row struct {
	Phase  string  `json:"phase"` // prefill, decode or update
	Batch  int     `json:"batch"`
	Tokens int     `json:"tokens"` // tokens per repetition
	Secs   float64 `json:"secs"`   // best repetition
	TokS   float64 `json:"tok_s"`
	// FLOPs per token of the phase (2·params forward, 6·params with the
	// backward pass, plus attention), for MFU against a device's peak.
	FLOPsPerToken float64 `json:"flops_per_token"`
	PeakBytes     int64   `json:"peak_bytes"` // device peak (CUDA) or process peak resident set (CPU) so far
}

// prompts are deterministic, distinct token rows (no two rows share a
// prefix, so the engine computes every prompt).
func prompts(rows, length, vocab int) [][]int {
	out := make([][]int, rows)
	for i := range out {
		out[i] = make([]int, length)
		for j := range out[i] {
			out[i][j] = 3 + (i*7919+j*104729+i*j*31)%(vocab-3)
		}
	}
	return out
}

// Run times m under opt and returns the rows in order: for every batch
// size prefill then decode, then the update.
func Run(m *model.Model, dev torch.Device, opt Options) (rows []Row, err error) {
	defer torch.Recover(&err)
	if err := CheckSizes(m.Config, 4, opt, 0, ""); err != nil { // the counts (run.Bench checks the memory first)
		return nil, err
	}
	if !opt.SkipGen {
		if opt.NewTokens < 2 || opt.PromptLen < 1 {
			return nil, fmt.Errorf("bench: --prompt must be ≥ 1 and --new ≥ 2, got %d and %d", opt.PromptLen, opt.NewTokens)
		}
		for _, b := range opt.Batches {
			r, err := generation(m, dev, b, opt)
			if err != nil {
				return nil, err
			}
			rows = append(rows, r...)
		}
	}
	if opt.UpdateRows > 0 && opt.UpdateLen > 1 {
		r, err := update(m, dev, opt)
		if err != nil {
			return nil, err
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// generation times prefill (max_new_tokens 1) and a whole generation of
// NewTokens on one engine of batch slots; decode is the difference.
func generation(m *model.Model, dev torch.Device, batch int, opt Options) ([]Row, error) {
	cfg := m.Config
	eng, err := m.NewEngine(model.EngineConfig{SlotLen: opt.PromptLen + opt.NewTokens, MaxSlots: batch,
		NoPrefixCache: true, PrefillTokens: max(16384, batch*opt.PromptLen), CPUKernels: opt.CPUKernels})
	if err != nil {
		return nil, err
	}
	defer eng.Free()
	ps := prompts(batch, opt.PromptLen, cfg.VocabSize)
	reqs := func(n int) []model.EngineRequest {
		out := make([]model.EngineRequest, batch)
		for i := range out {
			out[i] = model.EngineRequest{GenRequest: model.GenRequest{Prompt: ps[i], MaxNewTokens: n}, Seed: uint64(i)}
		}
		return out
	}
	best := func(n int) (float64, error) {
		b := 0.0
		for rep := 0; rep <= opt.Reps; rep++ { // rep 0 warms up
			torch.Synchronize(dev)
			t0 := time.Now()
			res, err := eng.Generate(reqs(n))
			if err != nil {
				return 0, err
			}
			torch.Synchronize(dev)
			s := time.Since(t0).Seconds()
			for _, r := range res {
				if len(r.Tokens) != n {
					return 0, fmt.Errorf("bench: a row generated %d tokens, want %d", len(r.Tokens), n)
				}
			}
			if rep > 0 && (b == 0 || s < b) {
				b = s
			}
		}
		return b, nil
	}
	pre, err := best(1)
	if err != nil {
		return nil, err
	}
	whole, err := best(opt.NewTokens)
	if err != nil {
		return nil, err
	}
	// decode is a difference of two best times; on a busy machine it can
	// come out ≤ 0, and the row then says 0 tok/s (not measured) rather
	// than a rate from noise
	dec := whole - pre
	params := float64(cfg.NumParams())
	attn := func(ctx float64) float64 { // scores and weighted sum, per token
		return 4 * float64(cfg.NumLayers*cfg.NumHeads*cfg.HeadDim) * ctx
	}
	pTok, dTok := batch*opt.PromptLen, batch*(opt.NewTokens-1)
	peak := PeakBytes(dev)
	return []Row{
		{Phase: "prefill", Batch: batch, Tokens: pTok, Secs: pre, TokS: float64(pTok) / pre,
			FLOPsPerToken: 2*params + attn(float64(opt.PromptLen)/2), PeakBytes: peak},
		{Phase: "decode", Batch: batch, Tokens: dTok, Secs: max(dec, 0), TokS: rate(dTok, dec),
			FLOPsPerToken: 2*params + attn(float64(opt.PromptLen)+float64(opt.NewTokens)/2), PeakBytes: peak},
	}, nil
}

// rate is tokens per second, 0 when secs is not positive (not measured).
func rate(tokens int, secs float64) float64 {
	if secs <= 0 {
		return 0
	}
	return float64(tokens) / secs
}

// update times one train step on UpdateRows × UpdateLen tokens: token
// log-probs of every next token, loss −mean, backward, AdamW.
func update(m *model.Model, dev torch.Device, opt Options) (Row, error) {
	cfg := m.Config
	B, T := opt.UpdateRows, opt.UpdateLen
	in, err := model.Pack(prompts(B, T, cfg.VocabSize), model.PadRight, dev)
	if err != nil {
		return Row{}, err
	}
	defer in.Free()
	targets := model.ShiftTargets(in)
	defer targets.Free()
	mask := torch.Cat([]*torch.Tensor{in.Valid.Narrow(1, 0, int64(T-1)), torch.Zeros([]int64{int64(B), 1}, torch.Bool, dev)}, 1).Untrack()
	defer mask.Free()
	m.SetRequiresGrad(true)
	defer m.SetRequiresGrad(false)
	opt2 := torch.NewAdamW([]torch.AdamWGroup{{Params: m.Parameters(), LR: 1e-6, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}}, dev.IsCUDA())
	defer opt2.Free()
	best := 0.0
	for rep := 0; rep <= opt.Reps; rep++ {
		torch.Synchronize(dev)
		t0 := time.Now()
		s := torch.NewScope()
		lp, _, err := m.TokenLogProbs(in, targets, mask, model.LogProbOptions{})
		if err != nil {
			s.Close()
			return Row{}, err
		}
		lp.Sum().DivScalar(float64(B * (T - 1))).Neg().Backward()
		opt2.Step()
		opt2.ZeroGrad()
		s.Close()
		torch.Synchronize(dev)
		sec := time.Since(t0).Seconds()
		if rep > 0 && (best == 0 || sec < best) {
			best = sec
		}
	}
	n := B * (T - 1)
	params := float64(cfg.NumParams())
	return Row{Phase: "update", Batch: B, Tokens: n, Secs: best, TokS: float64(n) / best,
		FLOPsPerToken: 6*params + 12*float64(cfg.NumLayers*cfg.NumHeads*cfg.HeadDim)*float64(T)/2,
		PeakBytes:     PeakBytes(dev)}, nil
}
