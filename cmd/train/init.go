package main

// init.go — `train init DIR`: a tiny random model (Qwen2, Qwen3, Llama or
// Mistral architecture) and a small byte-level BPE tokenizer as a Hugging
// Face directory, for tests and CPU demos.

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"troupe/model"
	"troupe/rollout"
	"troupe/tokenizer"
	"troupe/torch"
)

type initCmd struct {
	family       string
	hidden       int
	layers       int
	heads        int
	kvHeads      int
	headDim      int
	intermediate int
	merges       int
	seed         uint64
	dtype        string
	force        bool
	text         string
}

func newInit() *cobra.Command {
	c := &initCmd{}
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
		RunE: c.run,
	}
	f := cmd.Flags()
	f.StringVar(&c.family, "family", "qwen3", "architecture: qwen3, qwen2, llama or mistral")
	f.IntVar(&c.hidden, "hidden", 64, "hidden size")
	f.IntVar(&c.layers, "layers", 2, "decoder layers")
	f.IntVar(&c.heads, "heads", 4, "attention heads")
	f.IntVar(&c.kvHeads, "kv-heads", 2, "key/value heads (grouped-query attention)")
	f.IntVar(&c.headDim, "head-dim", 16, "head dimension (qwen2: hidden/heads whatever is given)")
	f.IntVar(&c.intermediate, "intermediate", 128, "MLP intermediate size")
	f.IntVar(&c.merges, "merges", 1500, "BPE merges to learn at most (0: a pure byte tokenizer)")
	f.Uint64Var(&c.seed, "seed", 1, "initialisation seed")
	f.StringVar(&c.dtype, "dtype", "float32", "dtype of the saved weights: float32 or bfloat16")
	f.BoolVar(&c.force, "force", false, "replace DIR if it exists")
	f.StringVar(&c.text, "text", "math", "the environment whose prompts and tasks the merges are learned from (math, search, plan-path, sokoban, sudoku, writing, coding, …)")
	return cmd
}

// mergeCorpus is the text the tokenizer's merges are learned from: the
// environment's prompt presets (named "<env>-…") and what the environment
// offers for it (rollout.EnvironmentSpec.Text: a few hundred tasks and
// demonstrations).
// The prompts are repeated so that merges can grow across their whole
// phrases: a tiny demo model then sees prompts of tens of tokens rather than
// hundreds, which is what makes CPU runs quick.
func mergeCorpus(env string) ([]string, error) {
	var texts []string
	for rep := 0; rep < 4; rep++ {
		for _, name := range rollout.PresetNames() {
			if !strings.HasPrefix(name, env+"-") {
				continue
			}
			if p, err := rollout.PresetByName(name); err == nil {
				texts = append(texts, p.System, p.Role, p.User)
			}
		}
		texts = append(texts, rollout.DefaultUserTemplate)
	}
	spec, err := rollout.EnvironmentOf(env)
	if err != nil {
		return nil, fmt.Errorf("init: --text: %q is not an environment; use one of %s", env, strings.Join(rollout.EnvironmentNames(), ", "))
	}
	if spec.Text != nil {
		more, err := spec.Text()
		if err != nil {
			return nil, err
		}
		texts = append(texts, more...)
	}
	return texts, nil
}

func (c *initCmd) run(cmd *cobra.Command, args []string) (err error) {
	defer torch.Recover(&err)
	dir := args[0]
	if c.merges < 0 {
		return fmt.Errorf("init: --merges must be >= 0 (0: a pure byte tokenizer), got %d", c.merges)
	}
	if err := refuseReplace("init", dir, "DIR", c.force); err != nil {
		return err
	}
	var fam model.Family
	format := tokenizer.FormatQwen
	switch strings.ToLower(c.family) {
	case "qwen3":
		fam = model.Qwen3
	case "qwen2", "qwen2.5":
		fam = model.Qwen2
	case "llama", "llama3":
		fam, format = model.Llama, tokenizer.FormatLlama3
	case "mistral":
		fam = model.Mistral
	default:
		return fmt.Errorf("init: --family: want qwen3, qwen2, llama or mistral, got %q", c.family)
	}
	dt, err := torch.ParseDType(c.dtype)
	if err != nil {
		return fmt.Errorf("init: --dtype: %w", err)
	}
	var merges []tokenizer.Merge
	if c.merges > 0 {
		texts, err := mergeCorpus(c.text)
		if err != nil {
			return err
		}
		merges = tokenizer.TrainMerges(texts, c.merges)
	}
	if err := tokenizer.WriteByteLevel(dir, tokenizer.ByteLevelOptions{Format: format, Merges: merges}); err != nil {
		return err
	}
	tok, err := tokenizer.Load(dir)
	if err != nil {
		return err
	}
	cfg := tinyConfig(fam, tok, c)
	m, err := model.New(cfg, c.seed, model.Options{DType: torch.Float32, Device: torch.CPU})
	if err != nil {
		return fmt.Errorf("init: %w", err)
	}
	defer m.Free()
	if err := m.Save(dir, dt, 0); err != nil {
		return err
	}
	abs, _ := filepath.Abs(dir)
	fmt.Fprintf(cmd.OutOrStdout(), "init: wrote %s\n  %s\n  %d parameters, tokenizer: %d tokens (%d merges)\n",
		abs, cfg.Describe(), m.NumParams(), tok.VocabSize(), len(merges))
	return nil
}

// tinyConfig is the network init writes: the flags' sizes with the
// family's features (family.go in package model).
func tinyConfig(fam model.Family, tok *tokenizer.Tokenizer, c *initCmd) model.Config {
	sp := tok.Special()
	cfg := model.Config{
		Family: fam, VocabSize: tok.VocabSize(), HiddenSize: c.hidden, IntermediateSize: c.intermediate,
		NumLayers: c.layers, NumHeads: c.heads, NumKVHeads: c.kvHeads, HeadDim: c.headDim,
		RopeTheta: 1e6, RMSNormEps: 1e-6, TieEmbeddings: true, MaxPositions: 4096,
		InitializerRange: 0.02, AttentionBias: fam == model.Qwen2, EOSTokenIDs: []int{sp.EOS},
	}
	switch fam {
	case model.Qwen2:
		cfg.HeadDim = c.hidden / c.heads
	case model.Llama: // Llama 3.2's settings
		cfg.RopeTheta, cfg.RMSNormEps, cfg.MaxPositions = 5e5, 1e-5, 131072
		cfg.RopeScaling = &model.RopeScaling{Type: "llama3", Factor: 32, LowFreqFactor: 1, HighFreqFactor: 4, OriginalMaxPositions: 8192}
		bos := sp.BOS
		cfg.BOSTokenID = &bos
		cfg.EOSTokenIDs = nil
		for _, t := range []string{"<|end_of_text|>", "<|eom_id|>", "<|eot_id|>"} {
			if id, ok := tok.TokenID(t); ok {
				cfg.EOSTokenIDs = append(cfg.EOSTokenIDs, id)
			}
		}
	case model.Mistral:
		cfg.MaxPositions = 32768
	}
	return cfg
}
