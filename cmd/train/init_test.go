package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"troupe/model"
	"troupe/tokenizer"
)

// TestInitFamilies: each --family writes a directory that loads as that
// architecture, with the tokenizer layout and chat template of its family,
// and a Llama model and tokenizer agree on BOS and end-of-turn ids.
func TestInitFamilies(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		flag     string
		family   model.Family
		template tokenizer.ChatTemplate
	}{
		{"qwen3", model.Qwen3, tokenizer.ChatTemplateQwen3},
		{"qwen2", model.Qwen2, tokenizer.ChatTemplateQwen3},
		{"llama", model.Llama, tokenizer.ChatTemplateLlama31},
		{"mistral", model.Mistral, tokenizer.ChatTemplateQwen3},
	} {
		out := filepath.Join(dir, c.flag)
		cli(t, "init", out, "--family", c.flag, "--merges", "50", "--layers", "1")
		cfg, err := model.LoadConfig(out)
		if err != nil {
			t.Fatal(err)
		}
		tok, err := tokenizer.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Family != c.family || cfg.VocabSize != tok.VocabSize() {
			t.Errorf("--family %s: config %s with vocab %d, tokenizer %d tokens", c.flag, cfg.Family, cfg.VocabSize, tok.VocabSize())
		}
		if f, err := tok.DetectChatTemplate(); err != nil || f != c.template {
			t.Errorf("--family %s: chat template %v (%v), want %v", c.flag, f, err, c.template)
		}
		if c.family != model.Llama {
			continue
		}
		sp := tok.Special()
		eot, _ := tok.TokenID("<|eot_id|>")
		if cfg.RopeScaling == nil || cfg.BOSTokenID == nil || *cfg.BOSTokenID != sp.BOS || sp.EOS != eot || !slices.Contains(cfg.EOSTokenIDs, eot) {
			t.Errorf("--family llama: rope scaling %+v, bos %v (tokenizer %d), eos ids %v (tokenizer EOS %d, <|eot_id|> %d)", cfg.RopeScaling, cfg.BOSTokenID, sp.BOS, cfg.EOSTokenIDs, sp.EOS, eot)
		}
	}
	if msg := failing(t, "init", filepath.Join(dir, "x"), "--family", "gemma"); !strings.Contains(msg, "want qwen3, qwen2, llama or mistral") {
		t.Errorf("unknown family: %q", msg)
	}
}

// --vocab pads the embedding and head past the tokenizer, as real
// checkpoints do (Qwen's 151936 rows for 151669 tokens), so a random model
// can take a real model's shapes; the padded model still generates.
func TestInitPadsTheVocabulary(t *testing.T) {
	out := filepath.Join(t.TempDir(), "padded")
	cli(t, "init", out, "--merges", "50", "--layers", "1", "--vocab", "4096")
	cfg, err := model.LoadConfig(out)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.VocabSize != 4096 || tok.VocabSize() >= 4096 {
		t.Fatalf("--vocab 4096: config vocab %d, tokenizer %d tokens", cfg.VocabSize, tok.VocabSize())
	}
	cli(t, "generate", "--model", out, "--max-new-tokens", "4", "hello")
}
