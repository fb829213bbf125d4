package main

// generate.go — `train generate`: chat with or sample from a model directory,
// or from a base model through a PEFT LoRA adapter (--adapter).

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"troupe/config"
	"troupe/model"
	"troupe/tokenizer"
	"troupe/torch"
)

type generateCmd struct {
	model       string
	adapter     string
	tokenizer   string
	system      string
	raw         bool
	noThink     bool
	n           int
	maxNew      int
	temperature float64
	topP        float64
	topK        int
	seed        uint64
	device      string
	dtype       string
}

func newGenerate() *cobra.Command {
	c := &generateCmd{}
	cmd := &cobra.Command{
		Use:   "generate --model DIR [flags] PROMPT...",
		Short: "Generate from a model directory: the prompt as a chat user message, or raw text with --raw",
		Args:  cobra.MinimumNArgs(1),
		RunE:  c.run,
	}
	f := cmd.Flags()
	f.StringVar(&c.model, "model", "", "Hugging Face model directory (required); with --adapter, the base model")
	f.StringVar(&c.adapter, "adapter", "", "a PEFT LoRA adapter directory (adapter_config.json, adapter_model.safetensors) to sample through")
	f.StringVar(&c.tokenizer, "tokenizer", "", "tokenizer directory (default: the model directory)")
	f.StringVar(&c.system, "system", "", "system message")
	f.BoolVar(&c.raw, "raw", false, "continue the prompt text as is, without the chat template")
	f.BoolVar(&c.noThink, "no-think", false, "Qwen3 enable_thinking=false")
	f.IntVarP(&c.n, "samples", "n", 1, "samples to draw")
	f.IntVar(&c.maxNew, "max-new-tokens", 256, "tokens to generate at most")
	f.Float64Var(&c.temperature, "temperature", 0.7, "sampling temperature (0 = greedy)")
	f.Float64Var(&c.topP, "top-p", 0.95, "nucleus sampling mass (1 = off)")
	f.IntVar(&c.topK, "top-k", 0, "top-k sampling (0 = off)")
	f.Uint64Var(&c.seed, "seed", 1, "sampling seed")
	f.StringVar(&c.device, "device", "cpu", "cpu, cuda or cuda:N")
	f.StringVar(&c.dtype, "dtype", "float32", "float32 or bfloat16")
	cmd.MarkFlagRequired("model")
	return cmd
}

func (c *generateCmd) run(cmd *cobra.Command, args []string) (err error) {
	defer torch.Recover(&err)
	switch {
	case !(c.temperature >= 0) || math.IsInf(c.temperature, 0):
		return fmt.Errorf("generate: --temperature must be a finite number ≥ 0 (0 = greedy), got %g", c.temperature)
	case !(c.topP > 0 && c.topP <= 1):
		return fmt.Errorf("generate: --top-p must be in (0, 1] (1 = off), got %g", c.topP)
	case c.topK < 0:
		return fmt.Errorf("generate: --top-k must be ≥ 0 (0 = off), got %d", c.topK)
	case c.n < 1:
		return fmt.Errorf("generate: --samples must be ≥ 1, got %d", c.n)
	case c.maxNew < 1:
		return fmt.Errorf("generate: --max-new-tokens must be ≥ 1, got %d", c.maxNew)
	}
	opt, err := loadOptions(config.Model{Device: c.device, DType: c.dtype})
	if err != nil {
		return fmt.Errorf("generate: --device/--dtype: %w", err)
	}
	if _, err := os.Stat(filepath.Join(c.model, "config.json")); err != nil {
		return fmt.Errorf("generate: --model %s has no config.json (%v); point it at a Hugging Face model directory", c.model, errors.Unwrap(err))
	}
	if c.tokenizer == "" {
		c.tokenizer = c.model
	}
	tok, err := tokenizer.Load(c.tokenizer)
	if err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	m, err := model.Load(c.model, opt)
	if err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	defer m.Free()
	if c.adapter != "" {
		a, err := m.LoadAdapter(c.adapter)
		if err != nil {
			return fmt.Errorf("generate: --adapter: %w", err)
		}
		m = a.Model() // freed with the base
	}
	if tok.VocabSize() > m.Config.VocabSize {
		return fmt.Errorf("generate: the tokenizer has %d tokens but the model's vocabulary is %d; is --tokenizer the model's own?", tok.VocabSize(), m.Config.VocabSize)
	}
	text := strings.Join(args, " ")
	if !c.raw {
		var msgs []tokenizer.Message
		if c.system != "" {
			msgs = append(msgs, tokenizer.Message{Role: "system", Content: c.system})
		}
		msgs = append(msgs, tokenizer.Message{Role: "user", Content: text})
		if text, err = tok.ApplyChatTemplate(msgs, tokenizer.ChatOptions{AddGenerationPrompt: true, DisableThinking: c.noThink}); err != nil {
			return err
		}
	}
	prompt := tok.Encode(text)
	if err := m.Config.FitLength(len(prompt), c.maxNew); err != nil {
		return fmt.Errorf("generate: --max-new-tokens %d: %w", c.maxNew, err)
	}
	reqs := make([]model.GenRequest, c.n)
	for i := range reqs {
		reqs[i] = model.GenRequest{Prompt: prompt, MaxNewTokens: c.maxNew, Stop: stopIDs(tok, m.Config),
			Sampling: model.Sampling{Temperature: c.temperature, TopP: c.topP, TopK: c.topK}}
	}
	g := torch.NewGenerator(opt.Device, c.seed)
	defer g.Free()
	out, err := m.Generate(reqs, nil, g)
	if err != nil {
		return err
	}
	for i, o := range out {
		if c.n > 1 {
			fmt.Fprintf(cmd.OutOrStdout(), "--- sample %d (%d tokens, %v)\n", i+1, len(o.Tokens), o.Finish)
		}
		fmt.Fprintln(cmd.OutOrStdout(), tok.DecodeSkipSpecial(o.Tokens))
	}
	return nil
}

// stopIDs are the ids that end a response: the tokenizer's EOS and
// <|im_end|>, and the model config's eos_token_id list.
func stopIDs(tok *tokenizer.Tokenizer, cfg model.Config) []int {
	sp := tok.Special()
	seen := map[int]bool{}
	var out []int
	for _, id := range append([]int{sp.EOS, sp.IMEnd, sp.Pad}, cfg.EOSTokenIDs...) {
		if id >= 0 && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
