package run

// generate.go — `train generate`: chat with or sample from a model directory,
// or from a base model through a PEFT LoRA adapter (--adapter).

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"troupe/config"
	"troupe/model"
	"troupe/tokenizer"
	"troupe/torch"

	"troupe/internal/suggest"
)

type Generate struct {
	Model       string
	Adapter     string
	Tokenizer   string
	System      string
	Raw         bool
	NoThink     bool
	N           int
	MaxNew      int
	Temperature float64
	TopP        float64
	TopK        int
	Seed        uint64
	Device      string
	Dtype       string
}

func (c *Generate) Run(out io.Writer, args []string) (err error) {
	defer torch.Recover(&err)
	switch {
	case !(c.Temperature >= 0) || math.IsInf(c.Temperature, 0):
		return fmt.Errorf("generate: --temperature must be a finite number ≥ 0 (0 = greedy), got %g", c.Temperature)
	case !(c.TopP > 0 && c.TopP <= 1):
		return fmt.Errorf("generate: --top-p must be in (0, 1] (1 = off), got %g", c.TopP)
	case c.TopK < 0:
		return fmt.Errorf("generate: --top-k must be ≥ 0 (0 = off), got %d", c.TopK)
	case c.N < 1:
		return fmt.Errorf("generate: --samples must be ≥ 1, got %d", c.N)
	case c.MaxNew < 1:
		return fmt.Errorf("generate: --max-new-tokens must be ≥ 1, got %d", c.MaxNew)
	}
	opt, err := loadOptions(config.Model{Device: c.Device, DType: c.Dtype})
	if err != nil {
		return fmt.Errorf("generate: --device/--dtype: %w", err)
	}
	if _, err := os.Stat(filepath.Join(c.Model, "config.json")); err != nil {
		hint := suggest.ModelDir(c.Model)
		if hint == "" {
			hint = "point it at a Hugging Face model directory (config.json, model.safetensors, tokenizer.json)"
		}
		return fmt.Errorf("generate: --model %s has no config.json (%v); %s", c.Model, errors.Unwrap(err), hint)
	}
	if c.Tokenizer == "" {
		c.Tokenizer = c.Model
	}
	tok, err := tokenizer.Load(c.Tokenizer)
	if err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	m, err := model.Load(c.Model, opt)
	if err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	defer m.Free()
	if c.Adapter != "" {
		a, err := m.LoadAdapter(c.Adapter)
		if err != nil {
			return fmt.Errorf("generate: --adapter: %w", err)
		}
		m = a.Model() // freed with the base
	}
	if err := tok.CheckModel(m.Config.VocabSize, m.Config.EOSTokenIDs, m.Config.BOSTokenID, "is --tokenizer the model's own?"); err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	text := strings.Join(args, " ")
	if !c.Raw {
		var msgs []tokenizer.Message
		if c.System != "" {
			msgs = append(msgs, tokenizer.Message{Role: "system", Content: c.System})
		}
		msgs = append(msgs, tokenizer.Message{Role: "user", Content: text})
		if text, err = tok.ApplyChatTemplate(msgs, tokenizer.ChatOptions{AddGenerationPrompt: true, DisableThinking: c.NoThink}); err != nil {
			return err
		}
	}
	prompt := tok.Encode(text)
	if err := m.Config.FitLength(len(prompt), c.MaxNew); err != nil {
		return fmt.Errorf("generate: --max-new-tokens %d: %w", c.MaxNew, err)
	}
	reqs := make([]model.GenRequest, c.N)
	for i := range reqs {
		reqs[i] = model.GenRequest{Prompt: prompt, MaxNewTokens: c.MaxNew, Stop: stopIDs(tok, m.Config),
			Sampling: model.Sampling{Temperature: c.Temperature, TopP: c.TopP, TopK: c.TopK}}
	}
	g := torch.NewGenerator(opt.Device, c.Seed)
	defer g.Free()
	outs, err := m.Generate(reqs, nil, g)
	if err != nil {
		return err
	}
	for i, o := range outs {
		if c.N > 1 {
			fmt.Fprintf(out, "--- sample %d (%d tokens, %v)\n", i+1, len(o.Tokens), o.Finish)
		}
		fmt.Fprintln(out, tok.DecodeSkipSpecial(o.Tokens))
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
