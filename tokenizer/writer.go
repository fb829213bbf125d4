// WriteByteLevel: write a small byte-level BPE tokenizer for tiny models (the
// CPU demo, tests) as tokenizer.json + tokenizer_config.json, in the format
// of Qwen's files, so that Load, Hugging Face's tokenizers and
// transformers.js all read it (scripts/tokenizer/check-tiny.mjs checks the
// last two; testdata/tokenizer/tiny/ is its committed output).
//
// Layout of the vocabulary: ids 0–255 are the bytes in byte order, then one
// id per merge that creates a new token, then the added tokens. Merges are
// written in the "a b" string form, which every tokenizers version reads.
//
// The chat_template written is this package's own Jinja text, not Qwen3's:
// it renders system/user/assistant/tool messages, add_generation_prompt and
// enable_thinking exactly as Qwen3's template does (checked by
// check-tiny.mjs) and leaves out tools and tool_calls.

package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Merge is one BPE merge, written in raw text: {"t", "h"} makes "th".
type Merge struct {
	Left, Right string
}

// AddedToken is a token matched literally in text before pre-tokenization.
type AddedToken struct {
	Content string
	Special bool // skipped by DecodeSkipSpecial
}

// QwenAddedTokens are the added tokens WriteByteLevel uses by default: the
// ChatML markers and end of text (special) and the think tags (not special),
// as in Qwen3.
var QwenAddedTokens = []AddedToken{
	{"<|endoftext|>", true},
	{"<|im_start|>", true},
	{"<|im_end|>", true},
	{"<think>", false},
	{"</think>", false},
}

// ByteLevelOptions configures WriteByteLevel.
type ByteLevelOptions struct {
	Merges         []Merge      // in rank order; may be empty (a pure byte tokenizer)
	AddedTokens    []AddedToken // nil: QwenAddedTokens
	EOS            string       // "": <|im_end|>
	Pad            string       // "": <|endoftext|>
	ModelMaxLength int          // 0: 32768
}

// WriteByteLevel writes dir/tokenizer.json and dir/tokenizer_config.json,
// creating dir if needed.
func WriteByteLevel(dir string, opt ByteLevelOptions) error {
	tokJSON, cfgJSON, err := byteLevelFiles(opt)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("tokenizer: %w", err)
	}
	for name, data := range map[string][]byte{"tokenizer.json": tokJSON, "tokenizer_config.json": cfgJSON} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return fmt.Errorf("tokenizer: %w", err)
		}
	}
	return nil
}

// byteLevelFiles builds the two files' contents.
func byteLevelFiles(opt ByteLevelOptions) (tokenizerJSON, configJSON []byte, err error) {
	added := opt.AddedTokens
	if added == nil {
		added = QwenAddedTokens
	}
	eos, pad := opt.EOS, opt.Pad
	if eos == "" {
		eos = "<|im_end|>"
	}
	if pad == "" {
		pad = "<|endoftext|>"
	}
	maxLen := opt.ModelMaxLength
	if maxLen == 0 {
		maxLen = 32768
	}

	// Vocabulary in raw bytes, then spelled in the byte-level alphabet.
	var vocab []string
	idOf := map[string]int{}
	for b := 0; b < 256; b++ {
		idOf[string([]byte{byte(b)})] = len(vocab)
		vocab = append(vocab, string([]byte{byte(b)}))
	}
	merges := make([]string, len(opt.Merges))
	for i, m := range opt.Merges {
		for _, part := range []string{m.Left, m.Right} {
			if _, ok := idOf[part]; !ok {
				return nil, nil, fmt.Errorf("tokenizer: ByteLevelOptions.Merges[%d] {%q, %q}: %q is not a token yet; list a merge after the merges that make its parts", i, m.Left, m.Right, part)
			}
		}
		if _, ok := idOf[m.Left+m.Right]; !ok {
			idOf[m.Left+m.Right] = len(vocab)
			vocab = append(vocab, m.Left+m.Right)
		}
		merges[i] = byteLevelEncode(m.Left) + " " + byteLevelEncode(m.Right)
	}
	used := map[string]bool{}
	var addedJSON []map[string]any
	decoderJSON := map[string]any{}
	for i, a := range added {
		if a.Content == "" || used[a.Content] {
			return nil, nil, fmt.Errorf("tokenizer: ByteLevelOptions.AddedTokens[%d]: %q is empty or repeated; each added token needs its own text", i, a.Content)
		}
		used[a.Content] = true
		id := len(vocab) + i
		addedJSON = append(addedJSON, map[string]any{
			"id": id, "content": a.Content, "single_word": false, "lstrip": false,
			"rstrip": false, "normalized": false, "special": a.Special,
		})
		decoderJSON[fmt.Sprint(id)] = map[string]any{
			"content": a.Content, "lstrip": false, "normalized": false,
			"rstrip": false, "single_word": false, "special": a.Special,
		}
	}
	for _, c := range []struct{ field, token string }{{"EOS", eos}, {"Pad", pad}} {
		if !used[c.token] {
			return nil, nil, fmt.Errorf("tokenizer: ByteLevelOptions.%s: %q is not one of the added tokens; add it to AddedTokens", c.field, c.token)
		}
	}

	var vocabJSON bytes.Buffer // an object in id order, for readable diffs
	vocabJSON.WriteByte('{')
	for id, raw := range vocab {
		if id > 0 {
			vocabJSON.WriteByte(',')
		}
		key, _ := marshalNoEscape(byteLevelEncode(raw))
		fmt.Fprintf(&vocabJSON, "%s:%d", key, id)
	}
	vocabJSON.WriteByte('}')

	byteLevel := map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false}
	doc := orderedJSON{
		{"version", "1.0"},
		{"truncation", nil},
		{"padding", nil},
		{"added_tokens", addedJSON},
		{"normalizer", map[string]any{"type": "NFC"}},
		{"pre_tokenizer", map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": qwenSplitPattern}, "behavior": "Isolated", "invert": false},
			byteLevel,
		}}},
		{"post_processor", byteLevel},
		{"decoder", byteLevel},
		{"model", orderedJSON{
			{"type", "BPE"},
			{"dropout", nil},
			{"unk_token", nil},
			{"continuing_subword_prefix", ""},
			{"end_of_word_suffix", ""},
			{"fuse_unk", false},
			{"byte_fallback", false},
			{"ignore_merges", false},
			{"vocab", json.RawMessage(vocabJSON.Bytes())},
			{"merges", merges},
		}},
	}
	if tokenizerJSON, err = marshalIndented(doc); err != nil {
		return nil, nil, err
	}
	cfg := orderedJSON{
		{"add_bos_token", false},
		{"add_prefix_space", false},
		{"added_tokens_decoder", decoderJSON},
		{"bos_token", nil},
		{"chat_template", tinyChatTemplate},
		{"clean_up_tokenization_spaces", false},
		{"eos_token", eos},
		{"errors", "replace"},
		{"model_max_length", maxLen},
		{"pad_token", pad},
		{"split_special_tokens", false},
		{"tokenizer_class", "Qwen2Tokenizer"},
		{"unk_token", nil},
	}
	if configJSON, err = marshalIndented(cfg); err != nil {
		return nil, nil, err
	}
	return tokenizerJSON, configJSON, nil
}

// orderedJSON is a JSON object that keeps its keys in the order written.
type orderedJSON []struct {
	key   string
	value any
}

func (o orderedJSON) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, kv := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, _ := marshalNoEscape(kv.key)
		v, err := marshalNoEscape(kv.value)
		if err != nil {
			return nil, fmt.Errorf("tokenizer: %s: %w", kv.key, err)
		}
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// marshalNoEscape is json.Marshal without escaping <, > and & (which Qwen's
// files write as they are: "<|im_end|>").
func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func marshalIndented(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	return buf.Bytes(), nil
}

// tinyChatTemplate renders like Qwen3's template for messages without tools.
const tinyChatTemplate = `{#- troupe's Qwen3-style ChatML template (no tools) -#}
{%- set ns = namespace(last_query=messages|length - 1) -%}
{%- for m in messages -%}
    {%- if m.role == 'user' and not (m.content.startswith('<tool_response>') and m.content.endswith('</tool_response>')) -%}
        {%- set ns.last_query = loop.index0 -%}
    {%- endif -%}
{%- endfor -%}
{%- for m in messages -%}
    {%- if m.role == 'system' or m.role == 'user' -%}
        {{- '<|im_start|>' + m.role + '\n' + m.content + '<|im_end|>\n' -}}
    {%- elif m.role == 'assistant' -%}
        {%- set content = m.content -%}
        {%- set reasoning = '' -%}
        {%- if '</think>' in content -%}
            {%- set reasoning = content.split('</think>')[0].rstrip('\n').split('<think>')[-1].lstrip('\n') -%}
            {%- set content = content.split('</think>')[-1].lstrip('\n') -%}
        {%- endif -%}
        {%- if loop.index0 > ns.last_query and (loop.last or reasoning) -%}
            {{- '<|im_start|>assistant\n<think>\n' + reasoning.strip('\n') + '\n</think>\n\n' + content.lstrip('\n') + '<|im_end|>\n' -}}
        {%- else -%}
            {{- '<|im_start|>assistant\n' + content + '<|im_end|>\n' -}}
        {%- endif -%}
    {%- elif m.role == 'tool' -%}
        {%- if loop.first or messages[loop.index0 - 1].role != 'tool' -%}
            {{- '<|im_start|>user' -}}
        {%- endif -%}
        {{- '\n<tool_response>\n' + m.content + '\n</tool_response>' -}}
        {%- if loop.last or messages[loop.index0 + 1].role != 'tool' -%}
            {{- '<|im_end|>\n' -}}
        {%- endif -%}
    {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{- '<|im_start|>assistant\n' -}}
    {%- if enable_thinking is defined and enable_thinking is false -%}
        {{- '<think>\n\n</think>\n\n' -}}
    {%- endif -%}
{%- endif -%}
`
