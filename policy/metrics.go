package policy

// metrics.go — what one update reports per agent, and how it is reduced.
//
// Every row is seen by exactly one training forward per step (mini-batches
// partition the rows), so each row gets one set of per-row sums: response
// tokens, Σ total loss, Σ policy term, clip counts, Σ approx-KL, Σ KL to the
// reference, Σ entropy from the forward that also produced the old log-probs
// (the policy at the start of the step: the no-grad pass, or with one
// optimizer step the grad forward itself, the entropy detached), and the
// sampler-against-update sums (rollout.go). The per-agent numbers are
// reductions of those sums over the agent's rows of the whole step (max for
// rollout_logp_diff_max):
//
//	loss, pg_loss              the configured aggregation over the agent's rows
//	                           (token-mean: Σ sums / Σ tokens; seq modes: mean over rows)
//	clip_frac_low/high, dual_clip_frac, approx_kl, kl_ref, entropy
//	                           token means over the agent's response tokens
//	tokens, rows               counts
//	adv_mean, adv_std          over the agent's rows (population std)
//	lr                         this step's learning rate
//	grad_norm, grad_norm_max   pre-clip total norm: mean and max over the step's
//	                           mini-batches (the model's norm, the same for every
//	                           agent of a shared model; Inf or NaN when a step was skipped)
//	updates                    optimizer steps applied this train step
//	skipped_steps              optimizer steps skipped so far for a non-finite norm
//	rollout_logp_diff_mean/_max, rollout_kl, rollout_k3_kl
//	                           the sampler's log-probs against the old ones
//	                           (rollout.go), over the response tokens that have
//	                           them; absent when none has
//	rollout_is_weight_mean, rollout_is_truncated_frac
//	                           with rollout_is on: the weights' token mean and the
//	                           share of tokens the threshold bounded
//
// approx_kl is KL(π_old ‖ π) by the k3 estimator, (ρ − 1) − log ρ, which is
// never negative; it is exactly 0 on the first mini-batch of a step.
//
// Departure from verl: verl averages per-micro-batch values, so its numbers
// depend on the micro-batch split; these do not.

import (
	"math"
	"troupe/optim"

	"troupe/torch"
)

// Metrics are one update's numbers, keyed "policy/<agent>/<name>".
type Metrics map[string]float64

// MetricKey is the key of an agent's metric.
func MetricKey(agent, name string) string { return "policy/" + agent + "/" + name }

// Columns of the per-row statistics read back from each micro-batch.
const (
	statTokens = iota
	statLoss
	statPolicy
	statClipLow
	statClipHigh
	statDual
	statApproxKL
	statKLRef
	statRolloutTokens  // tokens with a sampler log-prob (rollout.go)
	statRolloutAbsDiff // Σ |Δ|
	statRolloutMaxDiff // max |Δ| (reduced by max, not sum)
	statRolloutKL      // Σ −Δ
	statRolloutK3      // Σ exp(Δ) − Δ − 1
	statISWeight       // Σ rollout_is weights
	statISTruncated    // tokens whose weight the threshold bounded
	numStats
)

// rowStats returns (B, numStats) float32 per-row sums over the response
// tokens of one micro-batch's forward, from the loss's input and output.
// OldLogProbs may be nil (no approx-KL), RolloutLogProbs too (no rollout
// columns; rolloutMask: where it has values).
func rowStats(out LossOutput, in LossInput, rolloutMask *torch.Tensor) (stats *torch.Tensor) {
	logp, oldLogp, mask := in.LogProbs, in.OldLogProbs, in.Mask
	torch.NoGrad(func() {
		m := mask.ToDType(torch.Float32)
		rowSum := func(x *torch.Tensor) *torch.Tensor { return x.Detach().ToDType(torch.Float32).Mul(m).SumDim(1, false) }
		rowCount := func(b *torch.Tensor) *torch.Tensor {
			if b == nil {
				return torch.Zeros([]int64{m.Size(0)}, torch.Float32, m.Device())
			}
			return b.LogicalAnd(mask).ToDType(torch.Float32).SumDim(1, false)
		}
		zeros := torch.Zeros([]int64{m.Size(0)}, torch.Float32, m.Device())
		cols := make([]*torch.Tensor, numStats)
		cols[statTokens] = m.SumDim(1, false)
		cols[statLoss] = rowSum(out.Total)
		cols[statPolicy] = rowSum(out.Policy)
		cols[statClipLow] = rowCount(out.Clipped.Low)
		cols[statClipHigh] = rowCount(out.Clipped.High)
		cols[statDual] = rowCount(out.Clipped.Dual)
		cols[statApproxKL], cols[statKLRef] = zeros, zeros
		if oldLogp != nil {
			logRatio := logp.Detach().Sub(oldLogp)
			cols[statApproxKL] = rowSum(logRatio.Exp().SubScalar(1).Sub(logRatio))
		}
		if out.KL != nil {
			cols[statKLRef] = rowSum(out.KL)
		}
		for _, c := range []int{statRolloutTokens, statRolloutAbsDiff, statRolloutMaxDiff, statRolloutKL, statRolloutK3, statISWeight, statISTruncated} {
			cols[c] = zeros
		}
		if oldLogp != nil && in.RolloutLogProbs != nil {
			cols[statRolloutTokens], cols[statRolloutAbsDiff], cols[statRolloutMaxDiff], cols[statRolloutKL], cols[statRolloutK3] =
				rolloutColumns(oldLogp, in.RolloutLogProbs, rolloutMask.LogicalAnd(mask))
		}
		if out.ISWeights != nil {
			cols[statISWeight] = rowSum(out.ISWeights)
			cols[statISTruncated] = rowCount(out.ISTruncated)
		}
		stats = torch.Stack(cols, 1)
	})
	return stats
}

// rowRecord is one row's share of the step's metrics.
type rowRecord struct {
	agent      string
	advantage  float64
	stats      [numStats]float64
	entropySum float64
}

// stepReport is everything Update reduces into Metrics.
type stepReport struct {
	rows      []rowRecord
	gradNorms []float64
	lr        float64
	updates   int
	skipped   int64 // cumulative
	settings  optim.Settings
}

// metrics reduces the report per agent, for every agent of the model (an
// agent without rows this step reports rows 0 and the model-level numbers).
func (r stepReport) metrics(agents []string) Metrics {
	out := Metrics{}
	normMean, normMax := math.NaN(), math.NaN()
	if n := len(r.gradNorms); n > 0 {
		normMean, normMax = 0, math.Inf(-1)
		for _, g := range r.gradNorms {
			normMean += g / float64(n)
			normMax = math.Max(normMax, g)
			if math.IsNaN(g) {
				normMax = g
			}
		}
	}
	for _, agent := range agents {
		put := func(name string, v float64) { out[MetricKey(agent, name)] = v }
		put("lr", r.lr)
		put("grad_norm", normMean)
		put("grad_norm_max", normMax)
		put("updates", float64(r.updates))
		put("skipped_steps", float64(r.skipped))
		var rows []rowRecord
		for _, row := range r.rows {
			if row.agent == agent {
				rows = append(rows, row)
			}
		}
		put("rows", float64(len(rows)))
		if len(rows) == 0 {
			put("tokens", 0)
			continue
		}
		var total [numStats]float64
		var entropy, advSum float64
		for _, row := range rows {
			for k := range total {
				if k == statRolloutMaxDiff {
					total[k] = math.Max(total[k], row.stats[k])
				} else {
					total[k] += row.stats[k]
				}
			}
			entropy += row.entropySum
			advSum += row.advantage
		}
		tokens := total[statTokens]
		put("tokens", tokens)
		put("loss", r.aggregate(rows, statLoss))
		put("pg_loss", r.aggregate(rows, statPolicy))
		put("clip_frac_low", total[statClipLow]/tokens)
		put("clip_frac_high", total[statClipHigh]/tokens)
		put("dual_clip_frac", total[statDual]/tokens)
		put("approx_kl", total[statApproxKL]/tokens)
		put("entropy", entropy/tokens)
		if r.settings.KLCoef > 0 {
			put("kl_ref", total[statKLRef]/tokens)
		}
		if n := total[statRolloutTokens]; n > 0 {
			put("rollout_logp_diff_mean", total[statRolloutAbsDiff]/n)
			put("rollout_logp_diff_max", total[statRolloutMaxDiff])
			put("rollout_kl", total[statRolloutKL]/n)
			put("rollout_k3_kl", total[statRolloutK3]/n)
		}
		if r.settings.RolloutIS != "" && r.settings.RolloutIS != optim.RolloutISOff {
			put("rollout_is_weight_mean", total[statISWeight]/tokens)
			put("rollout_is_truncated_frac", total[statISTruncated]/tokens)
		}
		mean := advSum / float64(len(rows))
		var ss float64
		for _, row := range rows {
			ss += (row.advantage - mean) * (row.advantage - mean)
		}
		put("adv_mean", mean)
		put("adv_std", math.Sqrt(ss/float64(len(rows))))
	}
	return out
}

// aggregate applies the configured loss aggregation to one column of rows.
func (r stepReport) aggregate(rows []rowRecord, col int) float64 {
	var sum, tokens, perRow float64
	for _, row := range rows {
		sum += row.stats[col]
		tokens += row.stats[statTokens]
		perRow += row.stats[col] / math.Max(row.stats[statTokens], 1)
	}
	n := float64(len(rows))
	switch r.settings.LossAgg {
	case optim.SeqMeanTokenSum:
		return sum / n
	case optim.SeqMeanTokenMean:
		return perRow / n
	case optim.SeqMeanTokenSumNorm:
		return sum / n / float64(r.settings.DrGRPOLength)
	default:
		return sum / math.Max(tokens, 1)
	}
}
