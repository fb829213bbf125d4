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
		Long: `check answers "would this run start?" without loading a weight: it makes every
check a run makes before it loads the weights, the run's own checks, and refuses
with the run's own line — the config's keys and values, the files it names, an
output directory that already holds a run, each model's config.json and
tokenizer (its vocabulary against the model's), the agents' chat templates and
chat_date, the environment's datasets read and parsed record by record, the
workflow (a program-running team probes its interpreter in the sandbox), the
estimator, and the GPUs' memory and devices of this machine. Then it prints
the config fully resolved — each agent's inherited optimizer, sampling and
length settings with their effective values — and the plan: the models each
agent trains, the workflow, the estimator, steps and batch, evaluation and
checkpoint cadence, and the memory per device (as train plan). It writes
nothing; train --dry-run does the same with the root command's flags. What
only the run finds: weights that do not load (dtype, NaN, shapes) and the
engines' and trainers' allocations.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return c.Run(cmd.OutOrStdout()) },
	}
	f := cmd.Flags()
	f.StringVarP(&c.Config, "config", "c", "", "run config (YAML)")
	f.StringArrayVar(&c.Sets, "set", nil, "override a config key (repeatable)")
	f.Float64Var(&c.GpuGiB, "gpu-gib", 80, "memory of each GPU for the memory plan, GiB")
	f.IntVar(&c.Prompt, "prompt-tokens", 1024, "prompt length the memory plan assumes")
	f.IntVar(&c.Ranks, "nproc", 1, "data-parallel ranks the memory plan assumes (models.<name>.shard spreads state over them)")
	return cmd
}
