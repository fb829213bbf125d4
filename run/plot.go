package run

// plot.go — the charts a run draws from its metrics.jsonl at its end (and
// `train plot` on request).

import (
	"troupe/internal/metrics"
)

// defaultCharts are the panels a run writes at its end (and `train plot`
// draws): held-out results first, then rewards, optimisation health, and
// where the time and memory went.
var DefaultCharts = []metrics.Chart{
	{Title: "held-out evaluation: accuracy, avg@n, pass@k", Keys: []string{"eval/accuracy", "eval/avg_at_n", "eval/pass_at_*"}, YMin: 0, YMax: 1, Optional: true, Sparse: true},
	{Title: "held-out evaluation: the environment's reward and its terms", Keys: []string{"eval/mean_reward", "eval/reward/*", "eval/f1*"}, Optional: true, Sparse: true},
	{Title: "reward (mean over rows)", Keys: []string{"reward/mean"}},
	{Title: "reward per agent", Keys: []string{"reward/agent/*"}},
	{Title: "pre-clip grad norm per agent", Keys: []string{"grad_norm/*"}},
	{Title: "policy loss per agent", Keys: []string{"loss/*"}},
	{Title: "Dr. MAS amplification factor per agent", Keys: []string{"amplification/*"}, OmitIfConstant: true},
	{Title: "KL (approximate, and to the reference) and entropy per agent", Keys: []string{"policy/*/approx_kl", "policy/*/kl_ref", "policy/*/entropy"}, OmitIfConstant: true},
	{Title: "clip fractions per agent", Keys: []string{"policy/*/clip_frac_low", "policy/*/clip_frac_high", "policy/*/dual_clip_frac"}, OmitIfConstant: true},
	{Title: "time per phase (s)", Keys: []string{"time/*"}},
	{Title: "peak memory (GiB)", Keys: []string{"memory/*peak*", "memory/*/peak_gib"}, Optional: true},
}
