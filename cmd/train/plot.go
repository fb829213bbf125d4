package main

// plot.go — `train plot`: PNG charts of a run's metrics.jsonl.

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"troupe/internal/metrics"
)

// defaultCharts are the panels a run writes at its end (and `train plot`
// draws): held-out results first, then rewards, optimisation health, and
// where the time and memory went.
var defaultCharts = []metrics.Chart{
	{Title: "held-out evaluation: accuracy, avg@n, pass@k", Keys: []string{"eval/accuracy", "eval/avg_at_n", "eval/pass_at_*"}, YMin: 0, YMax: 1, Optional: true, Sparse: true},
	{Title: "held-out evaluation: the environment's reward and its terms", Keys: []string{"eval/mean_reward", "eval/reward/*", "eval/f1*"}, Optional: true, Sparse: true},
	{Title: "reward (mean over rows)", Keys: []string{"reward/mean"}},
	{Title: "reward per agent", Keys: []string{"reward/agent/*"}},
	{Title: "pre-clip grad norm per agent", Keys: []string{"grad_norm/*"}},
	{Title: "policy loss per agent", Keys: []string{"loss/*"}},
	{Title: "Dr. MAS amplification factor per agent", Keys: []string{"amplification/*"}},
	{Title: "KL (approximate, and to the reference) and entropy per agent", Keys: []string{"policy/*/approx_kl", "policy/*/kl_ref", "policy/*/entropy"}},
	{Title: "clip fractions per agent", Keys: []string{"policy/*/clip_frac_low", "policy/*/clip_frac_high", "policy/*/dual_clip_frac"}},
	{Title: "time per phase (s)", Keys: []string{"time/*"}},
	{Title: "peak memory (GiB)", Keys: []string{"memory/*peak*", "memory/*/peak_gib"}, Optional: true},
}

func newPlot() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "plot METRICS.jsonl",
		Short: "Render a run's charts (evaluation, rewards, grad norms, losses, amplification, KL, clipping, time, memory) to PNG",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				out = filepath.Join(filepath.Dir(args[0]), "metrics.png")
			}
			if recs, err := metrics.ReadJSONL(args[0]); err == nil && len(recs) == 0 {
				return fmt.Errorf("plot: %s is empty: no step has been logged yet (a run appends one line per step); plot it after the first step", args[0])
			}
			if err := metrics.PlotJSONL(args[0], out, defaultCharts, metrics.PlotOptions{}); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "plot: wrote %s\n", out)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "PNG path (default: metrics.png beside the metrics file)")
	return cmd
}
