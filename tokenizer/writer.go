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
// Two formats. Qwen (the default): NFC, the Qwen split pattern, ChatML
// tokens, and this package's own Jinja template, which renders
// system/user/assistant/tool messages, add_generation_prompt and
// enable_thinking exactly as Qwen3's template does (checked by
// check-tiny.mjs) and leaves out tools and tool_calls. Llama 3: no
// normaliser, the Llama 3 split pattern, ignore_merges, Llama 3's header
// and end-of-turn tokens with a BOS post-processor, and a Jinja template of
// this package's own that renders like Llama 3.1's for messages without
// tools (checked by make-llama3-reference.py).

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

// Llama3AddedTokens are the added tokens of the Llama 3 format: Llama 3.1's
// named special tokens (its 245 reserved ones left out).
var Llama3AddedTokens = []AddedToken{
	{"<|begin_of_text|>", true},
	{"<|end_of_text|>", true},
	{"<|finetune_right_pad_id|>", true},
	{"<|start_header_id|>", true},
	{"<|end_header_id|>", true},
	{"<|eom_id|>", true},
	{"<|eot_id|>", true},
	{"<|python_tag|>", true},
}

// ByteLevelFormat is the model family whose tokenizer layout
// WriteByteLevel follows.
type ByteLevelFormat int

const (
	FormatQwen   ByteLevelFormat = iota // ChatML, NFC, Qwen's split pattern
	FormatLlama3                        // header tokens, BOS, Llama 3's split pattern
)

// ByteLevelOptions configures WriteByteLevel. The defaults depend on Format.
type ByteLevelOptions struct {
	Format         ByteLevelFormat
	Merges         []Merge      // in rank order; may be empty (a pure byte tokenizer)
	AddedTokens    []AddedToken // nil: QwenAddedTokens / Llama3AddedTokens
	EOS            string       // "": <|im_end|> / <|eot_id|>
	Pad            string       // "": <|endoftext|> / <|finetune_right_pad_id|>
	ModelMaxLength int          // 0: 32768 / 131072
}

// withDefaults fills the zero fields of opt for its format.
func (opt ByteLevelOptions) withDefaults() ByteLevelOptions {
	added, eos, pad, maxLen := QwenAddedTokens, "<|im_end|>", "<|endoftext|>", 32768
	if opt.Format == FormatLlama3 {
		added, eos, pad, maxLen = Llama3AddedTokens, "<|eot_id|>", "<|finetune_right_pad_id|>", 131072
	}
	if opt.AddedTokens == nil {
		opt.AddedTokens = added
	}
	if opt.EOS == "" {
		opt.EOS = eos
	}
	if opt.Pad == "" {
		opt.Pad = pad
	}
	if opt.ModelMaxLength == 0 {
		opt.ModelMaxLength = maxLen
	}
	return opt
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
	opt = opt.withDefaults()
	added, eos, pad := opt.AddedTokens, opt.EOS, opt.Pad

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
	var normalizer, postProcessor any = map[string]any{"type": "NFC"}, byteLevel
	pattern, ignoreMerges, bos, chat, class := qwenSplitPattern, false, any(nil), tinyChatTemplate, "Qwen2Tokenizer"
	if opt.Format == FormatLlama3 {
		bos = Llama3AddedTokens[0].Content
		if !used[bos.(string)] {
			return nil, nil, fmt.Errorf("tokenizer: ByteLevelOptions.AddedTokens: the Llama 3 format needs %q (the BOS)", bos)
		}
		normalizer = nil
		postProcessor = map[string]any{"type": "Sequence", "processors": []any{byteLevel, map[string]any{
			"type":           "TemplateProcessing",
			"single":         []any{map[string]any{"SpecialToken": map[string]any{"id": bos, "type_id": 0}}, map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}}},
			"pair":           []any{map[string]any{"SpecialToken": map[string]any{"id": bos, "type_id": 0}}, map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}}, map[string]any{"SpecialToken": map[string]any{"id": bos, "type_id": 1}}, map[string]any{"Sequence": map[string]any{"id": "B", "type_id": 1}}},
			"special_tokens": map[string]any{bos.(string): map[string]any{"id": bos, "ids": []int{idOfAdded(added, bos.(string), len(vocab))}, "tokens": []any{bos}}},
		}}}
		pattern, ignoreMerges, chat, class = llama3SplitPattern, true, tinyLlamaChatTemplate, "PreTrainedTokenizerFast"
	}
	doc := orderedJSON{
		{"version", "1.0"},
		{"truncation", nil},
		{"padding", nil},
		{"added_tokens", addedJSON},
		{"normalizer", normalizer},
		{"pre_tokenizer", map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": pattern}, "behavior": "Isolated", "invert": false},
			byteLevel,
		}}},
		{"post_processor", postProcessor},
		{"decoder", byteLevel},
		{"model", orderedJSON{
			{"type", "BPE"},
			{"dropout", nil},
			{"unk_token", nil},
			{"continuing_subword_prefix", ""},
			{"end_of_word_suffix", ""},
			{"fuse_unk", false},
			{"byte_fallback", false},
			{"ignore_merges", ignoreMerges},
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
		{"bos_token", bos},
		{"chat_template", chat},
		{"clean_up_tokenization_spaces", false},
		{"eos_token", eos},
		{"errors", "replace"},
		{"model_max_length", opt.ModelMaxLength},
		{"pad_token", pad},
		{"split_special_tokens", false},
		{"tokenizer_class", class},
		{"unk_token", nil},
	}
	if configJSON, err = marshalIndented(cfg); err != nil {
		return nil, nil, err
	}
	return tokenizerJSON, configJSON, nil
}

// idOfAdded is the id WriteByteLevel gives the added token content: added
// tokens follow the first vocabSize ids in order.
func idOfAdded(added []AddedToken, content string, vocabSize int) int {
	for i, a := range added {
		if a.Content == content {
			return vocabSize + i
		}
	}
	return -1
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

// tinyLlamaChatTemplate renders like Llama 3.1's template for messages
// without tools: the BOS, the dated system block, header-token turns with
// trimmed content, tool results as JSON-quoted ipython turns.
const tinyLlamaChatTemplate = `{#- troupe's Llama 3.1-style header-token template (no tools) -#}
{{- bos_token -}}
{%- if date_string is not defined -%}
    {%- set date_string = "26 Jul 2024" -%}
{%- endif -%}
{%- set system = '' -%}
{%- if messages and messages[0].role == 'system' -%}
    {%- set system = messages[0].content | trim -%}
    {%- set messages = messages[1:] -%}
{%- endif -%}
{{- '<|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: ' + date_string + '\n\n' + system + '<|eot_id|>' -}}
{%- for m in messages -%}
    {%- if m.role == 'tool' or m.role == 'ipython' -%}
        {{- '<|start_header_id|>ipython<|end_header_id|>\n\n' + (m.content | tojson) + '<|eot_id|>' -}}
    {%- else -%}
        {{- '<|start_header_id|>' + m.role + '<|end_header_id|>\n\n' + (m.content | trim) + '<|eot_id|>' -}}
    {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{- '<|start_header_id|>assistant<|end_header_id|>\n\n' -}}
{%- endif -%}
`
