package run

// init.go — `train init DIR`: a tiny random model (Qwen2, Qwen3, Llama or
// Mistral architecture) and a small byte-level BPE tokenizer as a Hugging
// Face directory, for tests and CPU demos.

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"troupe/ckpt"
	"troupe/config"
	"troupe/internal/atomicfile"
	"troupe/model"
	"troupe/rollout"
	"troupe/tokenizer"
	"troupe/torch"
)

type Init struct {
	Family       string
	Hidden       int
	Layers       int
	Heads        int
	KvHeads      int
	HeadDim      int
	Intermediate int
	Vocab        int // rows of the embedding and head; 0: the tokenizer's size
	Merges       int
	Seed         uint64
	Dtype        string
	Force        bool
	Text         string
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

func (c *Init) Run(out io.Writer, args []string) (err error) {
	defer torch.Recover(&err)
	final := args[0]
	if err := RefuseReplace("init", final, "DIR", c.Force); err != nil {
		return err
	}
	// written under a hidden name beside DIR and installed whole: a crash
	// or a signal never leaves a tokenizer without its model
	parent := filepath.Dir(filepath.Clean(final))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("init: %w", err)
	}
	dir, err := os.MkdirTemp(parent, ".tmp-init-"+filepath.Base(final)+"-")
	if err != nil {
		return fmt.Errorf("init: %w", err)
	}
	defer os.RemoveAll(dir) // gone once installed
	if err := os.Chmod(dir, 0o755); err != nil {
		return fmt.Errorf("init: %w", err)
	}
	var fam model.Family
	format := tokenizer.FormatQwen
	switch strings.ToLower(c.Family) {
	case "qwen3":
		fam = model.Qwen3
	case "qwen2", "qwen2.5":
		fam = model.Qwen2
	case "llama", "llama3":
		fam, format = model.Llama, tokenizer.FormatLlama3
	case "mistral":
		fam = model.Mistral
	default:
		return fmt.Errorf("init: --family: want qwen3, qwen2, llama or mistral, got %q", c.Family)
	}
	dt, err := torch.ParseDType(c.Dtype)
	if err != nil {
		return fmt.Errorf("init: --dtype: %w", err)
	}
	if c.Vocab < 0 {
		return fmt.Errorf("init: --vocab must be >= 0 (0: the tokenizer's size), got %d", c.Vocab)
	}
	if c.Merges < 0 {
		return fmt.Errorf("init: --merges must be >= 0 (0: a pure byte tokenizer), got %d", c.Merges)
	}
	var merges []tokenizer.Merge
	if c.Merges > 0 {
		texts, err := mergeCorpus(c.Text)
		if err != nil {
			return err
		}
		merges = tokenizer.TrainMerges(texts, c.Merges)
	}
	if err := tokenizer.WriteByteLevel(dir, tokenizer.ByteLevelOptions{Format: format, Merges: merges}); err != nil {
		return err
	}
	tok, err := tokenizer.Load(dir)
	if err != nil {
		return err
	}
	cfg := tinyConfig(fam, tok, c)
	// the weights are made in float32 and written in --dtype: refused
	// before the allocator fails, naming the flags that size them
	perParam := 4.0
	if dt != torch.Float32 {
		perParam += float64(dt.Size())
	}
	// (counted in float64: sizes this large overflow NumParams' int64)
	D, F, L := float64(cfg.HiddenSize), float64(cfg.IntermediateSize), float64(cfg.NumLayers)
	q, kv := float64(cfg.NumHeads)*float64(cfg.HeadDim), float64(cfg.NumKVHeads)*float64(cfg.HeadDim)
	params := float64(cfg.VocabSize)*D + L*(2*D*q+2*D*kv+3*D*F)
	if err := config.CheckMemory(fmt.Sprintf("init: --hidden %d, --intermediate %d, --layers %d, --heads %d × --head-dim %d, --kv-heads %d, vocabulary %d: %.4g parameters",
		c.Hidden, c.Intermediate, c.Layers, c.Heads, cfg.HeadDim, c.KvHeads, cfg.VocabSize, params), params, perParam, "bytes per parameter"); err != nil {
		return err
	}
	m, err := model.New(cfg, c.Seed, model.Options{DType: torch.Float32, Device: torch.CPU})
	if err != nil {
		return fmt.Errorf("init: %w", err)
	}
	defer m.Free()
	if err := m.Save(dir, dt, 0); err != nil {
		return err
	}
	if err := atomicfile.SyncDir(dir); err != nil {
		return fmt.Errorf("init: %w", err)
	}
	if err := ckpt.Install(dir, final); err != nil {
		return fmt.Errorf("init: %w", err)
	}
	abs, _ := filepath.Abs(final)
	fmt.Fprintf(out, "init: wrote %s\n  %s\n  %d parameters, tokenizer: %d tokens (%d merges)\n",
		abs, cfg.Describe(), m.NumParams(), tok.VocabSize(), len(merges))
	return nil
}

// tinyConfig is the network init writes: the flags' sizes with the
// family's features (family.go in package model).
func tinyConfig(fam model.Family, tok *tokenizer.Tokenizer, c *Init) model.Config {
	sp := tok.Special()
	cfg := model.Config{
		Family: fam, VocabSize: max(tok.VocabSize(), c.Vocab), HiddenSize: c.Hidden, IntermediateSize: c.Intermediate,
		NumLayers: c.Layers, NumHeads: c.Heads, NumKVHeads: c.KvHeads, HeadDim: c.HeadDim,
		RopeTheta: 1e6, RMSNormEps: 1e-6, TieEmbeddings: true, MaxPositions: 4096,
		InitializerRange: 0.02, AttentionBias: fam == model.Qwen2, EOSTokenIDs: []int{sp.EOS},
	}
	switch fam {
	case model.Qwen2:
		cfg.HeadDim = c.Hidden / c.Heads
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
