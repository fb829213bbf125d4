package policy

// reference_test.go — the clipped loss in every aggregation mode, and the KL
// estimators, against verl's and TRL's own code on the hand-built case of
// loss_test.go (every clip branch on a masked token; a k3 estimate beyond
// its clamp), through scripts/pyref/rl_reference.py and the Python
// reference environment (internal/pyref; skipped without it):
//
//	verl  core_algos.compute_policy_loss_vanilla (dual clip 3) in each
//	      loss_agg_mode, loss_scale_factor = dr_grpo_length; kl_penalty
//	      k1 and low_var_kl
//	TRL   GRPOTrainer._compute_loss (no dual clip) with loss_type
//	      grpo = seq-mean-token-mean, bnpo = dapo = token-mean,
//	      dr_grpo = seq-mean-token-sum-norm (max_completion_length =
//	      dr_grpo_length), luspo = seq-mean-token-sum
//
// The loss and its gradient by log π agree within 1e-6 absolute. A second
// case adds a row without response tokens: TRL and troupe still agree; verl
// averages the seq-mean modes over the rows that have tokens (agg_loss's
// global_batch_size), troupe over all rows, so there troupe's value is
// verl's × (rows with tokens)/B — loss.go's departure 2, checked as such.

import (
	"math"
	"testing"

	"troupe/internal/pyref"
	"troupe/optim"
)

const (
	refLossTol   = 1e-6
	refDrGRPOLen = 8
)

// pyLoss is one reference loss and its gradient by log π, (B, T).
type pyLoss struct {
	Loss float64
	Grad [][]float64
}

// trlLossTypes maps TRL's loss_type to the aggregation mode it equals.
var trlLossTypes = map[string]string{
	"grpo": optim.SeqMeanTokenMean, "bnpo": optim.TokenMean, "dapo": optim.TokenMean,
	"dr_grpo": optim.SeqMeanTokenSumNorm, "luspo": optim.SeqMeanTokenSum,
}

func TestLossMatchesVerlAndTRL(t *testing.T) {
	full := newLossCase()
	empty := newLossCase() // plus a row whose tokens are all masked out
	empty.logp = append(empty.logp, []float64{-1, -2, -0.5, -0.1, -3})
	empty.old = append(empty.old, []float64{-1.2, -1, -0.5, -0.4, -2})
	empty.ref = append(empty.ref, []float64{-1, -2, -0.5, -0.1, -3})
	empty.ent = append(empty.ent, []float64{1, 1, 1, 1, 1})
	empty.adv = append(empty.adv, 0.9)
	empty.mask = append(empty.mask, []bool{false, false, false, false, false})
	cases := []lossCase{full, empty}

	var in struct {
		Losses []map[string]any `json:"losses"`
	}
	for _, c := range cases {
		mask := make([][]float64, len(c.mask))
		for b, row := range c.mask {
			for _, m := range row {
				mask[b] = append(mask[b], map[bool]float64{false: 0, true: 1}[m])
			}
		}
		in.Losses = append(in.Losses, map[string]any{"logp": c.logp, "old": c.old, "ref": c.ref, "adv": c.adv, "mask": mask,
			"clip_low": testClipLow, "clip_high": testClipHigh, "dual_clip": testDual, "length": refDrGRPOLen})
	}
	var out struct {
		Versions map[string]string
		Losses   []struct {
			Verl   map[string]pyLoss
			TRL    map[string]pyLoss      `json:"trl"`
			VerlKL map[string][][]float64 `json:"verl_kl"`
		}
	}
	pyref.RunJSON(t, "scripts/pyref/rl_reference.py", in, &out)
	if len(out.Losses) != len(cases) {
		t.Fatalf("rl_reference.py: %d results for %d cases", len(out.Losses), len(cases))
	}
	t.Logf("references: %v", out.Versions)

	for ci, c := range cases {
		ref := out.Losses[ci]
		rowsWithTokens := 0
		for _, row := range c.mask {
			for _, m := range row {
				if m {
					rowsWithTokens++
					break
				}
			}
		}
		share := float64(rowsWithTokens) / float64(len(c.mask))
		for _, mode := range []string{optim.TokenMean, optim.SeqMeanTokenSum, optim.SeqMeanTokenMean, optim.SeqMeanTokenSumNorm} {
			scale := 1.0
			if mode != optim.TokenMean {
				scale = share // departure 2 of loss.go; 1 when every row has tokens
			}
			checkRefLoss(t, ci, "verl "+mode, c, mode, testDual, ref.Verl[mode], scale)
		}
		for lossType, mode := range trlLossTypes {
			checkRefLoss(t, ci, "TRL "+lossType, c, mode, 0, ref.TRL[lossType], 1)
		}
		for _, est := range []string{optim.KLK1, optim.KLLowVarKL} {
			var got []float64
			scoped(func() { got = KLPenalty(tensor2(c.logp), tensor2(c.ref), est).Float64s() })
			want := flat(ref.VerlKL[est])
			if len(want) != len(got) {
				t.Fatalf("case %d: verl %s: %d values for %d tokens", ci, est, len(want), len(got))
			}
			for i := range got {
				if !(math.Abs(got[i]-want[i]) <= refLossTol) {
					t.Errorf("case %d: KL %s at token %d: troupe %.9g, verl %.9g", ci, est, i, got[i], want[i])
				}
			}
		}
	}
}

// checkRefLoss compares troupe's loss in one mode (and its gradient by
// log π) with a reference's, which troupe's equals times scale.
func checkRefLoss(t *testing.T, ci int, name string, c lossCase, mode string, dual float64, want pyLoss, scale float64) {
	t.Helper()
	if want.Grad == nil {
		t.Fatalf("case %d: no reference for %s", ci, name)
	}
	s := optim.DefaultSettings()
	s.Loss, s.ClipLow, s.ClipHigh, s.DualClip = optim.LossClipped, testClipLow, testClipHigh, dual
	s.LossAgg, s.DrGRPOLength, s.KLCoef, s.EntropyCoef = mode, refDrGRPOLen, 0, 0
	loss, dLogp, _ := lossUnderTest(c, s)
	if !(math.Abs(loss-scale*want.Loss) <= refLossTol) {
		t.Errorf("case %d: %s (troupe %s): loss %.9g, reference %.9g × %g", ci, name, mode, loss, want.Loss, scale)
	}
	wantGrad := flat(want.Grad)
	worst := 0.0
	for i := range dLogp {
		d := math.Abs(dLogp[i] - scale*wantGrad[i])
		if !(d <= refLossTol) {
			t.Errorf("case %d: %s: d loss / d log π at token %d: troupe %.9g, reference %.9g × %g", ci, name, i, dLogp[i], wantGrad[i], scale)
		}
		worst = math.Max(worst, d)
	}
	t.Logf("case %d: %s = troupe %s: loss %.6f, gradient within %.2g", ci, name, mode, loss, worst)
}
