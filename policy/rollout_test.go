package policy

// Tests of rollout.go: the truncated importance weights against values
// worked out here from verl's definition, the mismatch metrics of an update
// against offsets the test puts on the update's own log-probs, and the
// fused head's entropy backward running only with an entropy term.

import (
	"math"
	"strings"
	"testing"

	"troupe/model"
	"troupe/optim"
	"troupe/torch"
)

// rolloutCase: Δ = old − rollout per token, (2, 4); the third column is
// off the mask and holds garbage. Row 0 has a Δ above the threshold's log
// (0.9 > ln 2), row 1 one below −20 (clamped before exp).
var (
	rolloutOld   = [][]float64{{-1.0, -2.0, -7.0, -0.5}, {-30.0, -1.5, 3.0, -4.0}}
	rolloutDelta = [][]float64{{0.1, -0.3, 5.0, 0.9}, {-25.0, 0.5, -9.0, 0.0}}
	rolloutMaskV = [][]bool{{true, true, false, true}, {true, true, false, false}}
)

func rolloutTensors() (old, rollout, mask *torch.Tensor) {
	var roll [][]float64
	for b, row := range rolloutOld {
		var r []float64
		for t, o := range row {
			r = append(r, o-rolloutDelta[b][t])
		}
		roll = append(roll, r)
	}
	return tensor2(rolloutOld).ToDType(torch.Float32), tensor2(roll).ToDType(torch.Float32), boolTensor(rolloutMaskV)
}

// The weights of both modes, by hand: w = min(exp(clamp(Δ, −20, 20)), 2)
// per token, or of the row's Σ Δ over its masked tokens; 0 off the mask.
func TestRolloutISWeightsHandValues(t *testing.T) {
	checkLeaks(t)
	e := math.Exp
	want := map[string][]float64{
		optim.RolloutISToken: {
			e(0.1), e(-0.3), 0, 2, // e(0.9) = 2.46 is truncated to 2
			e(-20), e(0.5), 0, 0, // Δ −25 clamped to −20
		},
		optim.RolloutISSequence: {
			2, 2, 0, 2, // Σ Δ = 0.1 − 0.3 + 0.9 = 0.7: e(0.7) = 2.01, truncated
			e(-20), e(-20), 0, 0, // Σ Δ = −24.5, clamped
		},
	}
	for _, mode := range []string{optim.RolloutISToken, optim.RolloutISSequence} {
		scoped(func() {
			old, roll, mask := rolloutTensors()
			got := RolloutISWeights(old, roll, mask, mode, 2).Float64s()
			for i, x := range got {
				if w := want[mode][i]; math.Abs(x-w) > 1e-6*w { // relative: e(−20) is 2e-9, and 0 is exact
					t.Errorf("%s weight %d: %.9g, want %.9g", mode, i, x, w)
				}
			}
		})
	}
	scoped(func() {
		old, roll, mask := rolloutTensors()
		err := func() (err error) {
			defer torch.Recover(&err)
			RolloutISWeights(old, roll, mask, "geometric", 2)
			return nil
		}()
		if err == nil || !strings.Contains(err.Error(), "geometric") {
			t.Fatalf("an unknown mode: %v", err)
		}
	})
}

// With rollout_is on, the loss's policy term is the one without it times
// the weights, token by token, and the KL and entropy terms are not
// weighted; the metrics' columns see the weights and the truncations.
func TestLossWeighsOnlyThePolicyTerm(t *testing.T) {
	checkLeaks(t)
	for _, mode := range []string{optim.RolloutISToken, optim.RolloutISSequence} {
		scoped(func() {
			old, roll, mask := rolloutTensors()
			logp := old.Add(torch.FromFloat64([]float64{0.05, -0.1, 0, 0.2, 0.01, 0.3, 0, 0}, 2, 4).ToDType(torch.Float32))
			ent := torch.FromFloat64([]float64{1, 2, 3, 4, 5, 6, 7, 8}, 2, 4).ToDType(torch.Float32)
			in := LossInput{LogProbs: logp, OldLogProbs: old, RefLogProbs: old.SubScalar(0.2), Entropy: ent,
				Advantages: torch.FromFloat64([]float64{1, -1}, 2, 1).ToDType(torch.Float32), Mask: mask, RolloutLogProbs: roll}
			s := optim.DefaultSettings()
			s.KLCoef, s.EntropyCoef = 0.1, 0.01
			plain := Loss(in, s)
			s.RolloutIS = mode
			weighted := Loss(in, s)
			w := RolloutISWeights(old, roll, mask, mode, 2)
			nearAll(t, mode+" policy term", weighted.Policy.Float64s(), plain.Policy.Mul(w).Float64s(), 1e-6)
			nearAll(t, mode+" KL and entropy terms", weighted.Total.Sub(weighted.Policy).Float64s(), plain.Total.Sub(plain.Policy).Float64s(), 1e-6)
			if plain.ISWeights != nil {
				t.Fatal("weights without rollout_is")
			}
			stats := rowStats(weighted, in, mask).Float64s()
			wantTrunc := map[string][]float64{optim.RolloutISToken: {1, 0}, optim.RolloutISSequence: {3, 0}}[mode]
			for b := range 2 {
				row := stats[b*numStats : (b+1)*numStats]
				if row[statISTruncated] != wantTrunc[b] {
					t.Errorf("%s row %d: %g truncated tokens, want %g", mode, b, row[statISTruncated], wantTrunc[b])
				}
				near(t, mode+" Σ weights", row[statISWeight], w.Narrow(0, int64(b), 1).Sum().Item(), 1e-6)
			}
		})
	}
}

// tokenLogProbs is m's log-prob of each response token of seq (no grad).
func tokenLogProbs(t *testing.T, m *model.Model, seq Sequence) []float32 {
	t.Helper()
	s := torch.NewScope()
	defer s.Close()
	b, err := Pack([]Sequence{seq}, m.Device())
	if err != nil {
		t.Fatal(err)
	}
	var lp *torch.Tensor
	torch.NoGrad(func() { lp, _, err = b.LogProbs(m, model.LogProbOptions{}) })
	if err != nil {
		t.Fatal(err)
	}
	all := lp.Float32s()
	return all[len(seq.Prompt)-1 : len(seq.Prompt)-1+len(seq.Response)]
}

// The mismatch metrics of an update, against offsets put on the update's
// own log-probs: the sampler's are log π_old + off, so |Δ| = |off|, −Δ = off
// and k3 = exp(−off) + off − 1 token by token. A row without sampler
// log-probs is left out; an agent with none has no such metrics. Both the
// one-step update (its forward is the old policy) and the old-log-prob
// pass (two mini-batches) compare.
func TestRolloutMismatchMetrics(t *testing.T) {
	for _, updates := range []int{1, 2} {
		m := tinyModel(t, 41, torch.Float32)
		s := trainSettings()
		s.UpdatesPerStep = updates
		tr := newTrainer(t, TrainerConfig{Group: group("m", s, "a", "b"), Policy: m, Temperature: 1})
		rows := append(contrast("a"), Sequence{Agent: "a", Prompt: []int{4, 5}, Response: []int{6, 7, 8}, Advantage: 0.5},
			Sequence{Agent: "b", Prompt: []int{9}, Response: []int{30, 31}, Advantage: 1})
		offsets := [][]float64{{0.01, -0.02, 0.003, 0}, {-0.05, 0.04, 0.001}}
		var abs, k1, k3, worst float64
		n := 0
		for i, off := range offsets {
			lp := tokenLogProbs(t, m, rows[i])
			rows[i].SampleLogProbs = make([]float32, len(lp))
			for j, o := range off {
				rows[i].SampleLogProbs[j] = lp[j] + float32(o)
				abs, k1, k3 = abs+math.Abs(o), k1+o, k3+math.Exp(-o)+o-1
				worst = math.Max(worst, math.Abs(o))
				n++
			}
		}
		got := update(t, tr, rows, 0)
		tol := 2e-6 // float32 log-probs of about −6, from two packings
		near(t, "diff_mean", got[MetricKey("a", "rollout_logp_diff_mean")], abs/float64(n), tol)
		near(t, "diff_max", got[MetricKey("a", "rollout_logp_diff_max")], worst, tol)
		near(t, "kl", got[MetricKey("a", "rollout_kl")], k1/float64(n), tol)
		near(t, "k3", got[MetricKey("a", "rollout_k3_kl")], k3/float64(n), tol)
		for _, name := range []string{"rollout_logp_diff_mean", "rollout_logp_diff_max", "rollout_kl", "rollout_k3_kl", "rollout_is_weight_mean"} {
			if _, ok := got[MetricKey("b", name)]; ok {
				t.Errorf("agent b has no sampler log-probs but reports %s", name)
			}
		}
		if _, ok := got[MetricKey("a", "rollout_is_weight_mean")]; ok {
			t.Error("rollout_is is off but its weights are reported")
		}
	}
}

// rollout_is refuses rows without sampler log-probs, and the checks refuse
// sampler log-probs that cannot be a sampled token's.
func TestSamplerLogProbsRefusals(t *testing.T) {
	m := tinyModel(t, 42, torch.Float32)
	s := trainSettings()
	s.RolloutIS = optim.RolloutISToken
	tr := newTrainer(t, TrainerConfig{Group: group("m", s, "a"), Policy: m, Temperature: 1})
	if _, err := tr.Update(contrast("a"), 0); err == nil || !strings.Contains(err.Error(), "rollout_is") {
		t.Fatalf("rollout_is without sampler log-probs: %v", err)
	}
	for _, c := range []struct {
		lp   []float32
		want string
	}{
		{[]float32{-1, -2}, "2 sampler log-probs for 4"},
		{[]float32{-1, float32(math.NaN()), -1, -1}, "token 1"},
		{[]float32{-1, -1, 0.5, -1}, "token 2"},
		{[]float32{-1, -1, -1, float32(math.Inf(-1))}, "token 3"},
	} {
		rows := contrast("a")
		rows[0].SampleLogProbs = c.lp
		if err := CheckSequences(rows, nil, 300); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("sampler log-probs %v: %v, want an error naming %q", c.lp, err, c.want)
		}
	}
}

// The fused head's entropy backward runs only when the loss has an entropy
// term: with entropy_coef 0 the forward still computes the entropy (for the
// metric) and the shim's counter of entropy-grad rows stays put; with 0.01
// it grows by the trained tokens. Both the one-step update and the old-pass
// path.
func TestEntropyBackwardOnlyWithAnEntropyTerm(t *testing.T) {
	rows := contrast("a")
	tokens := int64(0)
	for _, r := range rows {
		tokens += int64(len(r.Response))
	}
	for _, updates := range []int{1, 2} {
		for _, coef := range []float64{0, 0.01} {
			m := tinyModel(t, 43, torch.Float32)
			s := trainSettings()
			s.UpdatesPerStep, s.EntropyCoef = updates, coef
			tr := newTrainer(t, TrainerConfig{Group: group("m", s, "a"), Policy: m, Temperature: 1})
			before := torch.EntropyBackwardRows()
			got := update(t, tr, rows, 0)
			rowsRun := torch.EntropyBackwardRows() - before
			want := int64(0)
			if coef > 0 {
				want = tokens
			}
			if rowsRun != want {
				t.Errorf("%d mini-batches, entropy_coef %g: the entropy's backward ran over %d rows, want %d", updates, coef, rowsRun, want)
			}
			if e := got[MetricKey("a", "entropy")]; !(e > 0) {
				t.Errorf("%d mini-batches, entropy_coef %g: entropy metric %g", updates, coef, e)
			}
		}
	}
}
