package main

// plot.go — `train plot`: PNG charts of a run's metrics.jsonl (run.DefaultCharts).

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"troupe/internal/metrics"
	"troupe/run"
)

func newPlot() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "plot METRICS.jsonl",
		Short: "Render a run's charts (evaluation, rewards, grad norms, losses, amplification, KL, clipping, time, memory) to PNG",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if recs, err := metrics.ReadJSONL(args[0]); err == nil && len(recs) == 0 {
				return fmt.Errorf("plot: %s is empty: no step has been logged yet (a run appends one line per step); plot it after the first step", args[0])
			}
			if out == "" {
				out = filepath.Join(filepath.Dir(args[0]), "metrics.png")
			}
			if err := metrics.PlotJSONL(args[0], out, run.DefaultCharts, metrics.PlotOptions{}); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "plot: wrote %s\n", out)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "PNG path (default: metrics.png beside the metrics file)")
	return cmd
}
