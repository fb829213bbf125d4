package main

// export.go — `train export`: flags for run.Export.

import (
	"github.com/spf13/cobra"

	"troupe/run"
)

func newExport() *cobra.Command {
	c := &run.Export{}
	cmd := &cobra.Command{
		Use:   "export --checkpoint DIR [--out DIR]",
		Short: "Write every trained model of a checkpoint as a Hugging Face directory (transformers/vLLM load it)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return c.Run(cmd.OutOrStdout(), args) },
	}
	f := cmd.Flags()
	f.StringVar(&c.Checkpoint, "checkpoint", "", "training checkpoint directory (required)")
	f.StringVarP(&c.Out, "out", "o", "", "output directory; one subdirectory per model (default: <checkpoint>/../../export)")
	f.StringVar(&c.Dtype, "dtype", "", "dtype of the exported weights: float32 or bfloat16 (default: the config's export.dtype, else the model's)")
	f.Int64Var(&c.Shard, "max-shard-bytes", 0, "shard the weights above this many bytes (default: the config's, else 5 GB)")
	f.BoolVar(&c.Force, "force", false, "replace existing model directories under the output directory")
	f.BoolVar(&c.Merge, "merge", false, "also write every adapter merged into its base as a full model (<name>-merged); default: the config's export.merge_adapters")
	cmd.MarkFlagRequired("checkpoint")
	return cmd
}
