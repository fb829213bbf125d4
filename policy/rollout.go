package policy

// rollout.go — the sampler's log-probs against the update's: how far apart
// they are (statistics every update reports) and, when asked, the
// truncated importance weights that correct the policy term for the gap
// (verl's rollout_is).
//
// troupe samples in the process that trains, from the weights it trains,
// so the two differ only by how each computes: the engine's decode steps
// (KV cache, CUDA graphs, one row among many) against the update's packed
// forward and fused head. On the CPU in float32 the gap is rounding
// (TestRolloutLogProbsMatchTheUpdate: below 1e-4 on the demo's model);
// elsewhere the metrics show it every step.
//
// Per response token that has a sampler log-prob (the loss mask's tokens
// of rows with Sequence.SampleLogProbs), with Δ = log π_old − log μ, π_old
// the update's log-prob under the weights the rollout sampled from (the
// old log-probs) and μ the sampler's:
//
//	rollout_logp_diff_mean, _max   mean and max of |Δ|
//	rollout_kl                     mean of −Δ: KL(μ ‖ π_old) by the k1
//	                               estimator (verl's rollout_corr/kl)
//	rollout_k3_kl                  mean of exp(Δ) − Δ − 1 (verl's
//	                               rollout_corr/k3_kl), never negative;
//	                               summed in float64 from expm1, since at the
//	                               Δ of rounding (1e-7) it is 1e-14
//
// The truncated importance weights (optim rollout_is, off by default),
// after verl's compute_rollout_correction_weights
// (verl/trainer/ppo/rollout_corr_helper.py) and its use in
// compute_policy_loss_vanilla (pg_losses · rollout_is_weights):
//
//	token:     w_t = min(exp(clamp(Δ_t, −20, 20)), threshold)
//	sequence:  w_t = min(exp(clamp(Σ_t' Δ_t', −20, 20)), threshold)
//	           for every token t of the row, the sum over its tokens
//
// carrying no gradient, zero off the mask; Loss multiplies the per-token
// policy term by w before aggregating it. The KL and entropy terms are not
// weighted, as in verl. Departure: k3 clamps Δ to [−20, 20] as the weights
// do, so one token whose sampler and update disagree wildly makes the
// metric large rather than infinite.
//
// What this file is not: the sampler (model/sample.go reports μ) or the
// rejection of rows by their ratio (verl's rollout_rs), which troupe does
// not offer.

import (
	"fmt"

	"troupe/optim"
	"troupe/torch"
)

// isLogRatioBound clamps the log-ratios before exp (verl's SAFETY_BOUND).
const isLogRatioBound = 20

// RolloutISWeights returns the truncated importance weights of the policy
// term, (B, T) float32 without grad, zero where mask is false: oldLogp is
// the update's log-probs under the sampling weights, rolloutLogp the
// sampler's, mask the positions that have both; mode is optim's
// RolloutISToken or RolloutISSequence.
func RolloutISWeights(oldLogp, rolloutLogp, mask *torch.Tensor, mode string, threshold float64) (w *torch.Tensor) {
	torch.NoGrad(func() {
		m := mask.ToDType(torch.Float32)
		delta := oldLogp.Detach().ToDType(torch.Float32).Sub(rolloutLogp).Mul(m) // (B,T), 0 off the mask
		switch mode {
		case optim.RolloutISToken:
		case optim.RolloutISSequence:
			delta = delta.SumDim(1, true).Expand(delta.Shape()...) // (B,1) → (B,T)
		default:
			panic(&torch.Error{Op: "policy.RolloutISWeights", Msg: fmt.Sprintf("rollout_is %q is not one of %s, %s", mode, optim.RolloutISToken, optim.RolloutISSequence)})
		}
		w = delta.Clamp(-isLogRatioBound, isLogRatioBound).Exp().ClampMax(threshold).Mul(m)
	})
	return w
}

// rolloutColumns are the per-row sums of the mismatch statistics, (B)
// float32 each: tokens compared, Σ|Δ|, max |Δ|, Σ −Δ, Σ k3.
func rolloutColumns(oldLogp, rolloutLogp, mask *torch.Tensor) (tokens, absSum, absMax, k1, k3 *torch.Tensor) {
	m := mask.ToDType(torch.Float32)
	delta := oldLogp.Detach().ToDType(torch.Float32).Sub(rolloutLogp).Mul(m) // (B,T), 0 off the mask
	abs := delta.Abs()
	d := delta.Clamp(-isLogRatioBound, isLogRatioBound).ToDType(torch.Float64) // k3 ≈ Δ²/2: float32 would round it to 0
	k3Tok := d.Expm1().Sub(d).Mul(m.ToDType(torch.Float64))
	return m.SumDim(1, false), abs.SumDim(1, false), abs.AmaxDim(1, false), delta.Neg().SumDim(1, false), k3Tok.SumDim(1, false).ToDType(torch.Float32)
}
