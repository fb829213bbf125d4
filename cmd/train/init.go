package main

// init.go — `train init DIR`: flags for run.Init.

import (
	"github.com/spf13/cobra"

	"troupe/run"
)

func newInit() *cobra.Command {
	c := &run.Init{}
	cmd := &cobra.Command{
		Use:   "init DIR",
		Short: "Write a tiny random model and tokenizer (Hugging Face layout) for tests and CPU demos",
		Long: `init writes DIR/config.json, DIR/model.safetensors, DIR/tokenizer.json and
DIR/tokenizer_config.json: a randomly initialised network and a byte-level BPE
tokenizer (256 byte tokens, merges learned from troupe's own prompts and math
problems). --family picks the architecture and the tokenizer's layout:
  qwen3, qwen2  Qwen's special tokens and a ChatML chat template
  llama         LlamaForCausalLM with Llama 3.2's llama3 rope scaling
                (x32 from 8192 positions), tied embeddings; Llama 3's split
                pattern, header tokens, BOS and a Llama 3.1-style template
  mistral       MistralForCausalLM (no sliding window) with the ChatML
                tokenizer: real Mistral tokenizers are SentencePiece BPE,
                which troupe does not read
transformers and tokenizers load the directory as they load a real model of
that family.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return c.Run(cmd.OutOrStdout(), args) },
	}
	f := cmd.Flags()
	f.StringVar(&c.Family, "family", "qwen3", "architecture: qwen3, qwen2, llama or mistral")
	f.IntVar(&c.Hidden, "hidden", 64, "hidden size")
	f.IntVar(&c.Layers, "layers", 2, "decoder layers")
	f.IntVar(&c.Heads, "heads", 4, "attention heads")
	f.IntVar(&c.KvHeads, "kv-heads", 2, "key/value heads (grouped-query attention)")
	f.IntVar(&c.HeadDim, "head-dim", 16, "head dimension (qwen2: hidden/heads whatever is given)")
	f.IntVar(&c.Intermediate, "intermediate", 128, "MLP intermediate size")
	f.IntVar(&c.Merges, "merges", 1500, "BPE merges to learn at most (0: a pure byte tokenizer)")
	f.Uint64Var(&c.Seed, "seed", 1, "initialisation seed")
	f.StringVar(&c.Dtype, "dtype", "float32", "dtype of the saved weights: float32 or bfloat16")
	f.BoolVar(&c.Force, "force", false, "replace DIR if it exists")
	f.StringVar(&c.Text, "text", "math", "the environment whose prompts and tasks the merges are learned from (math, search, plan-path, sokoban, sudoku, writing, coding, …)")
	return cmd
}
