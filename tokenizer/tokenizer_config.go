// tokenizer_config.json: the transformers-level settings beside
// tokenizer.json that this package needs, the BOS, EOS and pad tokens and the
// chat template (or the chat_template.jinja file newer transformers write
// instead).
//
// What this file is not: a reader of every transformers option. Options that
// only matter to transformers' Python side (model_max_length, errors,
// clean_up_tokenization_spaces, …) are ignored; Qwen sets none that change
// encoding.

package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

type tokenizerConfig struct {
	path          string // "" when the directory has no tokenizer_config.json
	bos, eos, pad *string
	chatTemplate  string
}

// readTokenizerConfig reads dir/tokenizer_config.json and
// dir/chat_template.jinja when they exist.
func readTokenizerConfig(dir string) (tokenizerConfig, error) {
	var cfg tokenizerConfig
	path := filepath.Join(dir, "tokenizer_config.json")
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return cfg, err
	default:
		cfg.path = path
		if err := cfg.parse(data); err != nil {
			return cfg, fmt.Errorf("%s: %w", path, err)
		}
	}
	if cfg.chatTemplate == "" {
		jinja := filepath.Join(dir, "chat_template.jinja")
		data, err := os.ReadFile(jinja)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return cfg, err
		default:
			cfg.chatTemplate = string(data)
		}
	}
	return cfg, nil
}

func (cfg *tokenizerConfig) parse(data []byte) error {
	var f struct {
		BOS          json.RawMessage `json:"bos_token"`
		EOS          json.RawMessage `json:"eos_token"`
		Pad          json.RawMessage `json:"pad_token"`
		ChatTemplate json.RawMessage `json:"chat_template"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return fmt.Errorf("not a tokenizer_config.json: %w", err)
	}
	var err error
	if cfg.bos, err = tokenField("bos_token", f.BOS); err != nil {
		return err
	}
	if cfg.eos, err = tokenField("eos_token", f.EOS); err != nil {
		return err
	}
	if cfg.pad, err = tokenField("pad_token", f.Pad); err != nil {
		return err
	}
	cfg.chatTemplate, err = chatTemplateField(f.ChatTemplate)
	return err
}

// tokenField reads a token setting, written either as "<|im_end|>" or as
// {"content": "<|im_end|>", …}; nil when null or absent.
func tokenField(name string, raw json.RawMessage) (*string, error) {
	if isJSONNull(raw) {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return &s, nil
	}
	var obj struct {
		Content *string `json:"content"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil || obj.Content == nil {
		return nil, fmt.Errorf("%s: want a string or {\"content\": …}, got %s", name, raw)
	}
	return obj.Content, nil
}

// chatTemplateField reads "chat_template": a string, or a list of named
// templates of which the one named "default" is used.
func chatTemplateField(raw json.RawMessage) (string, error) {
	if isJSONNull(raw) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var named []struct {
		Name     string `json:"name"`
		Template string `json:"template"`
	}
	if err := json.Unmarshal(raw, &named); err != nil {
		return "", fmt.Errorf("chat_template: want a string or a list of {name, template}: %w", err)
	}
	for _, n := range named {
		if n.Name == "default" {
			return n.Template, nil
		}
	}
	return "", fmt.Errorf("chat_template: a list of %d named templates without one named \"default\"", len(named))
}

// applyConfig sets the EOS and pad ids and the chat template. Without a
// config both ids stay at <|endoftext|> (Qwen's base-model setting).
func (t *Tokenizer) applyConfig(cfg tokenizerConfig) error {
	set := func(name string, tok *string, dst *int) error {
		if tok == nil {
			return nil
		}
		id, ok := t.idByToken[*tok]
		if !ok {
			return fmt.Errorf("%s: %q is not a token of tokenizer.json; fix the config or use the tokenizer.json it belongs to", name, *tok)
		}
		*dst = id
		return nil
	}
	if err := set("bos_token", cfg.bos, &t.specialIDs.BOS); err != nil {
		return err
	}
	if err := set("eos_token", cfg.eos, &t.specialIDs.EOS); err != nil {
		return err
	}
	if err := set("pad_token", cfg.pad, &t.specialIDs.Pad); err != nil {
		return err
	}
	t.chatTemplate = cfg.chatTemplate
	return nil
}
