package policy

// loss.go — the per-token policy losses and their aggregation over one
// micro-batch (algorithms.md §5 and §6). Every function takes (B, T) tensors
// whose masked-out positions hold finite values (the model's TokenLogProbs
// writes zeros there) and works in whatever float dtype it is given (float32
// in training, float64 in the tests).
//
// Per token, with ρ = exp(log π − log π_old) and A the row's advantage:
//
//	clipped:  L = max(−A·ρ, −A·clip(ρ, 1 − ε_low, 1 + ε_high))
//	          and, for A < 0 with dual clip c > 0, L = min(L, −A·c)
//	magrpo:   L = −A·log π                          (no ratio, no clipping)
//	KL:       k1 = log π − log π_ref
//	          k3 = exp(ref − log π) − (ref − log π) − 1, clamped to [−10, 10]
//	total:    w·L + kl_coef·KL − entropy_coef·H
//
// and the micro-batch loss is Aggregate(total) with the configured mode; w
// is 1, or with rollout_is the truncated importance weight of the sampler's
// log-probs against the old ones (rollout.go).
//
// Departures, each deliberate:
//  1. The entropy bonus and the KL term are aggregated with the same mode as
//     the policy term, as verl's actor does (algorithms.md writes the entropy
//     term with token-mean, which is the default mode, so the two agree there).
//     By linearity this equals aggregating the three terms separately.
//  2. The seq-mean modes average over all B rows of the micro-batch, a row
//     without response tokens counting as 0, as TRL's GRPOTrainer does;
//     verl 0.9's agg_loss averages over the rows that have tokens, so with
//     such a row troupe's loss is verl's × (rows with tokens)/B.
//     seq-mean-token-sum-norm is Dr. GRPO's (1/B)·Σ_b (token sum / L) with
//     L the configured constant (verl's loss_scale_factor, TRL's
//     max_completion_length). reference_test.go checks both against verl
//     0.9.1 and TRL 1.16.0.
//  3. Denominators (token counts) are clamped at 1, so a micro-batch or row
//     without response tokens contributes 0 instead of NaN.
//
// What this file is not: the forward pass (model.TokenLogProbs), the update
// loop (trainer.go) or the metrics (metrics.go).

import (
	"fmt"
	"troupe/optim"

	"troupe/torch"
)

// LossInput holds the per-token tensors of one micro-batch, all (B, T)
// except Advantages, which may be (B, 1).
type LossInput struct {
	LogProbs    *torch.Tensor // log π under the parameters being trained; differentiable
	OldLogProbs *torch.Tensor // log π_old, no grad; required by the clipped loss
	RefLogProbs *torch.Tensor // log π_ref of the frozen reference; required when KLCoef > 0
	Entropy     *torch.Tensor // per-token entropy, differentiable; required when EntropyCoef > 0
	Advantages  *torch.Tensor // A per row (B, 1) or per token (B, T)
	Mask        *torch.Tensor // bool or float, true at the positions that predict response tokens
	// RolloutLogProbs are the sampler's log-probs (Batch.RolloutLogProbs);
	// required, with OldLogProbs, when RolloutIS is on, and then present at
	// every position of Mask.
	RolloutLogProbs *torch.Tensor
}

// LossOutput is the micro-batch loss and the per-token pieces the metrics
// read. Tensors are (B, T) unless noted.
type LossOutput struct {
	Loss    *torch.Tensor // scalar: Aggregate(Total), differentiable
	Total   *torch.Tensor // per-token total loss
	Policy  *torch.Tensor // per-token policy term (clipped or magrpo)
	KL      *torch.Tensor // per-token KL estimate; nil when KLCoef == 0
	Ratio   *torch.Tensor // ρ; nil for magrpo
	Clipped ClipIndicators
	// ISWeights are rollout_is's weights w of the policy term and
	// ISTruncated where the threshold bounded them; nil when it is off.
	ISWeights, ISTruncated *torch.Tensor
}

// ClipIndicators mark (bool, (B, T)) where each clip was the active branch;
// they are nil for the magrpo loss. Low and High partition verl's
// pg_clipfrac; Dual is its pg_clipfrac_lower.
type ClipIndicators struct {
	Low  *torch.Tensor // A < 0 and ρ < 1 − ε_low: the lower clip bounds the loss
	High *torch.Tensor // A > 0 and ρ > 1 + ε_high: the upper clip bounds the loss
	Dual *torch.Tensor // A < 0 and the dual clip −A·c bounds the loss
}

// Loss computes the configured per-token loss and aggregates it. s must be
// valid (Settings.Validate).
func Loss(in LossInput, s optim.Settings) LossOutput {
	var out LossOutput
	switch s.Loss {
	case optim.LossMAGRPO:
		out.Policy = MAGRPOLoss(in.LogProbs, in.Advantages)
	default:
		out.Policy, out.Ratio, out.Clipped = ClippedLoss(in.LogProbs, in.OldLogProbs, in.Advantages, s.ClipLow, s.ClipHigh, s.DualClip)
	}
	if s.RolloutIS != "" && s.RolloutIS != optim.RolloutISOff {
		if in.OldLogProbs == nil || in.RolloutLogProbs == nil {
			panic(&torch.Error{Op: "policy.Loss", Msg: fmt.Sprintf("rollout_is %s needs the old and the sampler's log-probs", s.RolloutIS)})
		}
		out.ISWeights = RolloutISWeights(in.OldLogProbs, in.RolloutLogProbs, in.Mask, s.RolloutIS, s.RolloutISThreshold)
		out.ISTruncated = out.ISWeights.GeScalar(s.RolloutISThreshold)
		out.Policy = out.Policy.Mul(out.ISWeights)
	}
	out.Total = out.Policy
	if s.KLCoef > 0 {
		out.KL = KLPenalty(in.LogProbs, in.RefLogProbs, s.KLEstimator)
		out.Total = out.Total.Add(out.KL.MulScalar(s.KLCoef))
	}
	if s.EntropyCoef > 0 {
		out.Total = out.Total.Sub(in.Entropy.MulScalar(s.EntropyCoef))
	}
	out.Loss = Aggregate(out.Total, in.Mask, s.LossAgg, s.DrGRPOLength)
	return out
}

// ClippedLoss is the PPO clipped surrogate with separate clip ratios and
// dual clip (c ≤ 0 turns the dual clip off), per token. It returns the loss,
// the ratio and where each clip was active.
func ClippedLoss(logp, oldLogp, adv *torch.Tensor, clipLow, clipHigh, dualClip float64) (loss, ratio *torch.Tensor, clipped ClipIndicators) {
	ratio = logp.Sub(oldLogp).Exp()                                     // (B,T)
	unclipped := adv.Neg().Mul(ratio)                                   // −A·ρ
	bounded := adv.Neg().Mul(ratio.Clamp(1-clipLow, 1+clipHigh))        // −A·clip(ρ)
	loss = unclipped.Maximum(bounded)                                   // (B,T)
	negative := adv.LtScalar(0).Expand(loss.Shape()...)                 // (B,T) bool
	positive := adv.GtScalar(0).Expand(loss.Shape()...)                 // (B,T) bool
	clipped.Low = negative.LogicalAnd(ratio.LtScalar(1 - clipLow))      // bounded > unclipped, A < 0
	clipped.High = positive.LogicalAnd(ratio.GtScalar(1 + clipHigh))    // bounded > unclipped, A > 0
	clipped.Dual = torch.Zeros(loss.Shape(), torch.Bool, loss.Device()) // none unless dual clip is on
	if dualClip > 0 {
		ceiling := adv.Neg().MulScalar(dualClip) // −A·c, (B,1) or (B,T)
		clipped.Dual = negative.LogicalAnd(loss.Gt(ceiling))
		loss = torch.Where(negative, loss.Minimum(ceiling), loss)
	}
	return loss, ratio, clipped
}

// MAGRPOLoss is MAGRPO's per-token objective −A·log π.
func MAGRPOLoss(logp, adv *torch.Tensor) *torch.Tensor {
	return adv.Neg().Mul(logp)
}

// KLPenalty estimates KL(π ‖ π_ref) per token from the sampled tokens'
// log-probs: k1 (log π − log π_ref) or k3 / low_var_kl
// (exp(ref − log π) − (ref − log π) − 1, clamped to [−10, 10]).
func KLPenalty(logp, refLogp *torch.Tensor, estimator string) *torch.Tensor {
	switch estimator {
	case optim.KLK1:
		return logp.Sub(refLogp)
	case optim.KLK3, optim.KLLowVarKL:
		d := refLogp.Sub(logp)
		return d.Exp().Sub(d).SubScalar(1).Clamp(-10, 10)
	}
	panic(&torch.Error{Op: "policy.KLPenalty", Msg: fmt.Sprintf("kl_estimator %q is not one of k1, k3, low_var_kl", estimator)})
}

// Aggregate reduces a per-token loss (B, T) to a scalar over the positions
// where mask is true:
//
//	token-mean               Σ_bt m·x / Σ_bt m
//	seq-mean-token-sum       (1/B) Σ_b Σ_t m·x
//	seq-mean-token-mean      (1/B) Σ_b (Σ_t m·x / Σ_t m)
//	seq-mean-token-sum-norm  (1/B) Σ_b Σ_t m·x / length
//
// length is used by seq-mean-token-sum-norm only.
func Aggregate(x, mask *torch.Tensor, mode string, length int) *torch.Tensor {
	m := mask.ToDType(x.DType())
	masked := x.Mul(m)
	switch mode {
	case optim.TokenMean:
		return masked.Sum().Div(m.Sum().ClampMin(1))
	case optim.SeqMeanTokenSum:
		return masked.SumDim(1, false).Mean()
	case optim.SeqMeanTokenMean:
		return masked.SumDim(1, false).Div(m.SumDim(1, false).ClampMin(1)).Mean()
	case optim.SeqMeanTokenSumNorm:
		if length <= 0 {
			panic(&torch.Error{Op: "policy.Aggregate", Msg: fmt.Sprintf("%s needs a length > 0, got %d", mode, length)})
		}
		return masked.SumDim(1, false).Mean().DivScalar(float64(length))
	}
	panic(&torch.Error{Op: "policy.Aggregate", Msg: fmt.Sprintf("loss_agg %q is not one of %s, %s, %s, %s", mode, optim.TokenMean, optim.SeqMeanTokenSum, optim.SeqMeanTokenMean, optim.SeqMeanTokenSumNorm)})
}
