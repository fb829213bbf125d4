package main

// compare.go — `train compare`: flags for run.CompareRuns (one report over several runs).

import (
	"fmt"

	"github.com/spf13/cobra"

	"troupe/run"
)

func newCompare() *cobra.Command {
	var out string
	var force bool
	cmd := &cobra.Command{
		Use:   "compare --out DIR RUN_DIR...",
		Short: "Compare runs: per-agent grad-norm curves and spikes, amplification, reward and accuracy (Markdown + PNG)",
		Long: `compare reads metrics.jsonl of every RUN_DIR and writes DIR/report.md with one
row per run and one per group of runs (runs named NAME-sN are seeds of
group NAME), and PNG charts of each agent's pre-clip gradient norm and
amplification factor, the mean reward and the held-out accuracy, one line
per run. A spike is a step whose gradient norm exceeds 3× the median of that
agent's earlier norms in the run.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("compare: --out DIR is required")
			}
			if err := run.RefuseReplace("compare", out, "--out", force); err != nil {
				return err
			}
			return run.CompareRuns(cmd.OutOrStdout(), out, args)
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "report directory (report.md and PNG charts)")
	cmd.Flags().BoolVar(&force, "force", false, "replace an existing report directory")
	return cmd
}
