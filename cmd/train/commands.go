package main

// commands.go — the subcommands around a run: each binds its flags to an
// option struct of package run and calls its Run method (train sft, eval,
// export, generate, init, plan, compare, plot). train itself is train.go;
// index and serve are retrieve.go.

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"troupe/internal/metrics"
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
	f.BoolVar(&c.Redraw, "redraw", false, "draw new demonstrations for every pass over the tasks (below --p-correct 1: the model learns how often to slip, not which questions to get wrong)")
	f.Uint64Var(&c.Seed, "seed", 1, "seed of the demonstrations and of the batch order")
	f.IntVar(&c.LogEvery, "log-every", 25, "print the loss every this many steps")
	f.BoolVar(&c.Force, "force", false, "replace existing model directories under --out")
	cmd.MarkFlagRequired("config")
	cmd.MarkFlagRequired("out")
	return cmd
}

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
	f.IntVar(&c.Vocab, "vocab", 0, "rows of the embedding and head (0: the tokenizer's size; more pads them as real checkpoints do, e.g. 151936 for a Qwen-shaped model; ids past the tokenizer decode to nothing)")
	f.IntVar(&c.Merges, "merges", 1500, "BPE merges to learn at most (0: a pure byte tokenizer)")
	f.Uint64Var(&c.Seed, "seed", 1, "initialisation seed")
	f.StringVar(&c.Dtype, "dtype", "float32", "dtype of the saved weights: float32 or bfloat16")
	f.BoolVar(&c.Force, "force", false, "replace DIR if it exists")
	f.StringVar(&c.Text, "text", "math", "the environment whose prompts and tasks the merges are learned from (math, search, plan-path, sokoban, sudoku, writing, coding, …)")
	return cmd
}

func newPlan() *cobra.Command {
	c := &run.Plan{}
	cmd := &cobra.Command{
		Use:   "plan --config run.yaml [--gpu-gib 80] [--prompt-tokens 1024] [--nproc N] [--set key=value]...",
		Short: "Work out a run's GPU memory per device from the config, without loading weights: resident, rollout and update peaks",
		Long: `plan reads the config and each model's config.json and prints, per device:
what stays resident for the whole run (weights, float32 masters and AdamW
moments, KL references; exact), the key/value arena each generation engine
allocates (exact for the budget; with engine.kv_budget_gib 0 the budget is
engine.kv_fraction of what --gpu-gib leaves free), and the update at its
peak phase — grads, float32 grad sums, the head's backward, the
collectives' buffers, activations of one micro-batch with prompts of
--prompt-tokens — which is an estimate.
With --nproc N the plan is one rank's device among N: a model with
models.<name>.shard keeps 1/N of its optimizer state (and at level 2 of its
grads; at level 3 it also gives back its layers' weights for the update).
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
	f.IntVar(&c.Ranks, "nproc", 1, "data-parallel ranks (train --nproc N): the plan is one rank's device, with models.<name>.shard spreading state over the ranks")
	return cmd
}

func newCompare() *cobra.Command {
	var out string
	var force bool
	cmd := &cobra.Command{
		Use:   "compare --out DIR RUN_DIR...",
		Short: "Compare runs: per-agent grad-norm curves and spikes, amplification, reward and accuracy (Markdown + PNG)",
		Long: `compare reads metrics.jsonl of every RUN_DIR and writes DIR/report.md with one
row per run and one per group of seeds (runs whose config.yaml files agree
but for run.seed and where they write, log and run; the group is named
after its first run, NAME-sN giving NAME; the report says which runs it
grouped and why others were not), and PNG charts of each agent's pre-clip gradient norm and
amplification factor, the mean reward and the held-out accuracy, one line
per run; when a group has several seeds, also the reward and accuracy per
group (reward-by-group.png, accuracy-by-group.png): the mean over its seeds,
shaded from the lowest seed to the highest. A spike is a step whose gradient
norm exceeds 3× the median of that agent's earlier norms in the run.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("compare: --out DIR is required")
			}
			if err := run.RefuseInputAsOutput("compare", out, "--out", args...); err != nil {
				return err
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

func newPlot() *cobra.Command {
	var out string
	var force bool
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
			if err := run.RefuseInputAsOutput("plot", out, "--out", args[0]); err != nil {
				return err
			}
			if err := run.RefuseForeignFile("plot", out, "--out", "PNG image", force, run.IsPNG); err != nil {
				return err
			}
			if err := metrics.PlotJSONL(args[0], out, run.DefaultCharts, metrics.PlotOptions{}); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "plot: wrote %s\n", out)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "PNG path (default: metrics.png beside the metrics file)")
	cmd.Flags().BoolVar(&force, "force", false, "replace an existing file that is not a PNG image")
	return cmd
}
