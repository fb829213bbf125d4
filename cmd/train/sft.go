package main

// sft.go — `train sft`: flags for run.SFT.

import (
	"github.com/spf13/cobra"

	"troupe/run"
)

func newSFT() *cobra.Command {
	c := &run.SFT{}
	cmd := &cobra.Command{
		Use:   "sft --config run.yaml --out DIR",
		Short: "Supervised warm-up on oracle demonstrations of the configured workflow (format and roles)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return c.Run(cmd.OutOrStdout(), args) },
	}
	f := cmd.Flags()
	f.StringVarP(&c.Config, "config", "c", "", "run config (YAML) whose models, agents, workflow and env define the demonstrations (required)")
	f.StringArrayVar(&c.Sets, "set", nil, "override a config key (repeatable)")
	f.StringVarP(&c.Out, "out", "o", "", "output directory: one Hugging Face directory per source model (required)")
	f.IntVar(&c.Tasks, "tasks", 384, "train tasks to demonstrate (one episode each)")
	f.IntVar(&c.Steps, "steps", 300, "optimizer steps")
	f.IntVar(&c.Batch, "batch", 16, "sequences per step")
	f.Float64Var(&c.Lr, "lr", 2e-3, "AdamW learning rate (constant, after 10 warm-up steps)")
	f.Float64Var(&c.PCorrect, "p-correct", 0.6, "probability that a demonstrated answer is right")
	f.Uint64Var(&c.Seed, "seed", 1, "seed of the demonstrations and of the batch order")
	f.IntVar(&c.LogEvery, "log-every", 25, "print the loss every this many steps")
	f.BoolVar(&c.Force, "force", false, "replace existing model directories under --out")
	cmd.MarkFlagRequired("config")
	cmd.MarkFlagRequired("out")
	return cmd
}
