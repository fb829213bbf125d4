package policy

import (
	"fmt"
	"math"
	"testing"

	"troupe/model"
	"troupe/optim"
	"troupe/torch"
)

// packRows are rows of very different lengths, one with a loss mask, so the
// padded layout carries much padding and the packed one none.
func packRows() []Sequence {
	return []Sequence{
		{Agent: "a", Prompt: []int{1, 2, 3, 4, 5, 6, 7}, Response: []int{10, 11, 12, 13, 14, 15, 16, 17, 18}, Advantage: 1.5},
		{Agent: "a", Prompt: []int{9}, Response: []int{20, 21}, Advantage: -0.7},
		{Agent: "a", Prompt: []int{3, 4, 5}, Response: []int{30, 31, 32, 33}, Mask: []bool{true, false, true, true}, Advantage: 0.3},
		{Agent: "a", Prompt: []int{8, 8}, Response: []int{40}, Advantage: -1.1},
	}
}

// The packed and the padded layout give the same loss and the same grads
// (float32, 1e-6 relative) under every aggregation mode, with the entropy
// and KL terms on, and with dual clip — packing changes only which
// positions the forward visits.
func TestPackedEqualsPaddedLossAndGrads(t *testing.T) {
	checkLeaks(t)
	m := tinyModel(t, 21, torch.Float32)
	ref := tinyModel(t, 22, torch.Float32)
	m.SetRequiresGrad(true)
	rows := packRows()
	s := torch.NewScope()
	defer s.Close()
	// old and reference log-probs from the padded layout, shared by both runs
	padded, err := Pad(rows, torch.CPU)
	if err != nil {
		t.Fatal(err)
	}
	var old, refLP *torch.Tensor
	torch.NoGrad(func() {
		old, _, err = padded.LogProbs(m, model.LogProbOptions{Temperature: 0.9})
		if err == nil {
			refLP, _, err = padded.LogProbs(ref, model.LogProbOptions{Temperature: 0.9})
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	old = old.Add(torch.Randn(old.Shape(), torch.Float32, torch.CPU, nil).MulScalar(0.05)) // ratios away from 1, some clipped
	for _, agg := range []string{optim.TokenMean, optim.SeqMeanTokenSum, optim.SeqMeanTokenMean, optim.SeqMeanTokenSumNorm} {
		set := optim.DefaultSettings()
		set.LossAgg, set.DrGRPOLength, set.EntropyCoef, set.KLCoef, set.DualClip = agg, 16, 0.01, 0.05, 3
		run := func(build func([]Sequence, torch.Device) (Batch, error)) (loss float64, grads [][]float32) {
			b, err := build(rows, torch.CPU)
			if err != nil {
				t.Fatal(err)
			}
			lp, ent, err := b.LogProbs(m, model.LogProbOptions{Temperature: 0.9, Entropy: true})
			if err != nil {
				t.Fatal(err)
			}
			out := Loss(LossInput{LogProbs: lp, OldLogProbs: old, RefLogProbs: refLP, Entropy: ent, Advantages: b.Advantages, Mask: b.Mask}, set)
			out.Loss.Backward()
			for _, p := range m.Parameters() {
				grads = append(grads, p.Grad().Float32s())
				p.ZeroGrad()
			}
			return out.Loss.Item(), grads
		}
		lossA, gradA := run(Pad)
		lossB, gradB := run(Pack)
		// relative to max(|loss|, 1): a loss near zero is a sum of terms of order 1
		// that cancel, and float32 resolves it only to ~1e-7 of those terms
		if d := math.Abs(lossA-lossB) / math.Max(math.Abs(lossA), 1); d > 1e-6 {
			t.Fatalf("%s: loss padded %.9g, packed %.9g (relative %g)", agg, lossA, lossB, d)
		}
		var num, den float64
		for i := range gradA {
			for j := range gradA[i] {
				d := float64(gradA[i][j] - gradB[i][j])
				num += d * d
				den += float64(gradA[i][j]) * float64(gradA[i][j])
			}
		}
		if rel := math.Sqrt(num / den); rel > 1e-6 || den == 0 {
			t.Fatalf("%s: grads differ by %g relative (norm² %g)", agg, rel, den)
		}
		t.Logf("%s: loss %.6f; packed vs padded grads within %.2g relative", agg, lossA, math.Sqrt(num/den))
	}
}

// Micro-batches by tokens: each holds rows up to the budget (a longer row
// alone), in the permuted order, and every row appears once.
func TestSplitTokens(t *testing.T) {
	lengths := []int{10, 3, 7, 7, 20, 1, 5, 9}
	split := SplitTokens(lengths, 2, 12, 4, 0)
	seen := map[int]bool{}
	for i, micros := range split {
		for j, rows := range micros {
			total := 0
			for _, r := range rows {
				if seen[r] {
					t.Fatalf("row %d twice", r)
				}
				seen[r] = true
				total += lengths[r]
			}
			if total > 12 && len(rows) > 1 {
				t.Fatalf("mini %d micro %d: %d tokens over the budget of 12 in %d rows", i, j, total, len(rows))
			}
		}
	}
	if len(seen) != len(lengths) {
		t.Fatalf("%d rows split, want %d", len(seen), len(lengths))
	}
	// the same permutation and mini-batches as Split by rows
	byRows := Split(len(lengths), 2, 100, 4, 0)
	for i := range byRows {
		var a, b []int
		for _, m := range byRows[i] {
			a = append(a, m...)
		}
		for _, m := range split[i] {
			b = append(b, m...)
		}
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Fatalf("mini-batch %d: rows %v by tokens, %v by rows", i, b, a)
		}
	}
}

// An update with activation checkpointing moves the weights as one without
// (float32, 1e-6 relative), entropy bonus on.
func TestCheckpointedUpdateEqualsPlain(t *testing.T) {
	checkLeaks(t)
	weights := func(checkpoint bool) [][]float32 {
		m := tinyModel(t, 23, torch.Float32)
		set := trainSettings()
		set.MicroBatchSize, set.UpdatesPerStep, set.EntropyCoef, set.ActivationCheckpointing = 2, 2, 0.01, checkpoint
		tr := newTrainer(t, TrainerConfig{Group: group("m", set, "a"), Policy: m, Temperature: 1})
		if _, err := tr.Update(packRows(), 0); err != nil {
			t.Fatal(err)
		}
		var out [][]float32
		for _, p := range m.Parameters() {
			out = append(out, p.Float32s())
		}
		return out
	}
	plain, ckpt := weights(false), weights(true)
	base := tinyModel(t, 23, torch.Float32).Parameters()
	moved := false
	for i := range plain {
		var num, den float64
		for j := range plain[i] {
			d := float64(plain[i][j] - ckpt[i][j])
			num, den = num+d*d, den+float64(plain[i][j])*float64(plain[i][j])
		}
		if math.Sqrt(num/den) > 1e-6 {
			t.Fatalf("parameter %d: checkpointed update differs by %g relative", i, math.Sqrt(num/den))
		}
		b := base[i].Float32s()
		for j := range b {
			moved = moved || b[j] != plain[i][j]
		}
	}
	if !moved {
		t.Fatal("the update moved nothing")
	}
}

// The update reports what the trained parameters hold between steps: f32
// weights and two f32 moments are 12 bytes per parameter; bf16 weights with
// f32 masters and moments 14 (the grads' 2 more exist only during a step).
func TestBytesPerParamMetric(t *testing.T) {
	for _, c := range []struct {
		dt   torch.DType
		want float64
	}{{torch.Float32, 12}, {torch.BFloat16, 14}} {
		m := tinyModel(t, 24, c.dt)
		tr := newTrainer(t, TrainerConfig{Group: group("m", trainSettings(), "a"), Policy: m, Temperature: 1})
		met, err := tr.Update(packRows(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := met["memory/m/bytes_per_param"]; got != c.want {
			t.Fatalf("%v: %g bytes per parameter, want %g", c.dt, got, c.want)
		}
	}
}
