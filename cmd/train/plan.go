package main

// plan.go — `train plan`: flags for run.Plan.

import (
	"github.com/spf13/cobra"

	"troupe/run"
)

func newPlan() *cobra.Command {
	c := &run.Plan{}
	cmd := &cobra.Command{
		Use:   "plan --config run.yaml [--gpu-gib 80] [--prompt-tokens 1024] [--set key=value]...",
		Short: "Work out a run's GPU memory per device from the config, without loading weights: resident, rollout and update peaks",
		Long: `plan reads the config and each model's config.json and prints, per device:
what stays resident for the whole run (weights, float32 masters and AdamW
moments, KL references; exact), the key/value arena each generation engine
allocates (exact for the budget; with engine.kv_budget_gib 0 the budget is
engine.kv_fraction of what --gpu-gib leaves free), and the update's
transient memory — grads, float32 grad sums, activations of one micro-batch
with prompts of --prompt-tokens, one log-prob chunk — which is an estimate.
A run's metrics memory/<device>/rollout_peak_gib and update_peak_gib are the
measured figures to compare with.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return c.Run(cmd.OutOrStdout(), args) },
	}
	f := cmd.Flags()
	f.StringVarP(&c.Config, "config", "c", "", "run config (YAML)")
	f.StringArrayVar(&c.Sets, "set", nil, "override a config key (repeatable)")
	f.Float64Var(&c.GpuGiB, "gpu-gib", 80, "memory of each GPU, GiB")
	f.IntVar(&c.Prompt, "prompt-tokens", 1024, "prompt length assumed for the update's micro-batches")
	return cmd
}
