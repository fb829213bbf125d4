package main

// generate.go — `train generate`: flags for run.Generate.

import (
	"github.com/spf13/cobra"

	"troupe/run"
)

func newGenerate() *cobra.Command {
	c := &run.Generate{}
	cmd := &cobra.Command{
		Use:   "generate --model DIR [flags] PROMPT...",
		Short: "Generate from a model directory: the prompt as a chat user message, or raw text with --raw",
		Args:  cobra.MinimumNArgs(1),
		RunE:  func(cmd *cobra.Command, args []string) error { return c.Run(cmd.OutOrStdout(), args) },
	}
	f := cmd.Flags()
	f.StringVar(&c.Model, "model", "", "Hugging Face model directory (required); with --adapter, the base model")
	f.StringVar(&c.Adapter, "adapter", "", "a PEFT LoRA adapter directory (adapter_config.json, adapter_model.safetensors) to sample through")
	f.StringVar(&c.Tokenizer, "tokenizer", "", "tokenizer directory (default: the model directory)")
	f.StringVar(&c.System, "system", "", "system message")
	f.BoolVar(&c.Raw, "raw", false, "continue the prompt text as is, without the chat template")
	f.BoolVar(&c.NoThink, "no-think", false, "Qwen3 enable_thinking=false")
	f.IntVarP(&c.N, "samples", "n", 1, "samples to draw")
	f.IntVar(&c.MaxNew, "max-new-tokens", 256, "tokens to generate at most")
	f.Float64Var(&c.Temperature, "temperature", 0.7, "sampling temperature (0 = greedy)")
	f.Float64Var(&c.TopP, "top-p", 0.95, "nucleus sampling mass (1 = off)")
	f.IntVar(&c.TopK, "top-k", 0, "top-k sampling (0 = off)")
	f.Uint64Var(&c.Seed, "seed", 1, "sampling seed")
	f.StringVar(&c.Device, "device", "cpu", "cpu, cuda or cuda:N")
	f.StringVar(&c.Dtype, "dtype", "float32", "float32 or bfloat16")
	cmd.MarkFlagRequired("model")
	return cmd
}
