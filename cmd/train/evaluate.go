package main

// evaluate.go — `train eval`: flags for run.Eval.

import (
	"github.com/spf13/cobra"

	"troupe/run"
)

func newEval() *cobra.Command {
	c := &run.Eval{}
	cmd := &cobra.Command{
		Use:   "eval --config run.yaml [--checkpoint DIR] [--set key=value]...",
		Short: "Evaluate the team on the test split: accuracy, avg@n, pass@k, validity, turns, tokens",
		Long: `eval plays eval.n samples of eval.tasks test tasks with the configured workflow
and eval.sampling, using the models of the config (or of a training checkpoint),
and prints accuracy, avg@n and pass@k. Evaluate a plain model on the single-agent
baseline with --set workflow.name=single and one agent.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return c.Run(cmd.OutOrStdout(), args) },
	}
	f := cmd.Flags()
	f.StringVarP(&c.Config, "config", "c", "", "run config (YAML); default: the checkpoint's")
	f.StringArrayVar(&c.Sets, "set", nil, "override a config key (repeatable)")
	f.StringVar(&c.Checkpoint, "checkpoint", "", "evaluate the weights of a training checkpoint directory")
	f.BoolVar(&c.JSON, "json", false, "print the result as one JSON object on stdout (the metric keys of metrics.jsonl), nothing else")
	return cmd
}
