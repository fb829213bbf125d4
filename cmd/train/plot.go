package main

// plot.go — `train plot`: PNG charts of a run's metrics.jsonl.

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"troupe/internal/metrics"
)

// defaultCharts are the panels a run writes at its end.
var defaultCharts = []metrics.Chart{
	{Title: "reward (mean over rows)", Keys: []string{"reward/mean"}},
	{Title: "reward per agent", Keys: []string{"reward/agent/*"}},
	{Title: "pre-clip grad norm per agent", Keys: []string{"grad_norm/*"}},
	{Title: "policy loss per agent", Keys: []string{"loss/*"}},
	{Title: "Dr. MAS amplification factor per agent", Keys: []string{"amplification/*"}},
}

func newPlot() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "plot METRICS.jsonl",
		Short: "Render reward, grad-norm, loss and amplification charts of a run to PNG",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				out = filepath.Join(filepath.Dir(args[0]), "metrics.png")
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
