package main

// check.go — `train check` (also `train --dry-run`): flags for run.Check.

import (
	"github.com/spf13/cobra"

	"troupe/run"
)

func newCheck() *cobra.Command {
	c := &run.Check{}
	cmd := &cobra.Command{
		Use:   "check --config run.yaml [--set key=value]...",
		Short: "Validate a config and print it fully resolved with the run's plan, without loading weights",
		Long: `check reads the config as a run would (every key, value and file it names),
prints it fully resolved — each agent's inherited optimizer, sampling and
length settings with their effective values — and the plan: the models each
agent trains, the workflow, the estimator, steps and batch, evaluation and
checkpoint cadence, and the memory per device (as train plan). It loads no
weights; train --dry-run does the same with the root command's flags.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return c.Run(cmd.OutOrStdout()) },
	}
	f := cmd.Flags()
	f.StringVarP(&c.Config, "config", "c", "", "run config (YAML)")
	f.StringArrayVar(&c.Sets, "set", nil, "override a config key (repeatable)")
	f.Float64Var(&c.GpuGiB, "gpu-gib", 80, "memory of each GPU for the memory plan, GiB")
	f.IntVar(&c.Prompt, "prompt-tokens", 1024, "prompt length the memory plan assumes")
	return cmd
}
