// Load tests: what it refuses (each with an error naming the feature), both
// merges forms, tokenizer_config.json handling and the lookups.

package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tinyJSON returns the tiny tokenizer.json as a generic JSON tree to mutate.
func tinyJSON(t *testing.T) map[string]any {
	data, err := os.ReadFile(filepath.Join(testdataPath(t, "tiny"), "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// writeTokenizer writes doc as dir/tokenizer.json (and config, if non-nil).
func writeTokenizer(t *testing.T, doc map[string]any, config map[string]any) string {
	dir := t.TempDir()
	for name, v := range map[string]map[string]any{"tokenizer.json": doc, "tokenizer_config.json": config} {
		if v == nil {
			continue
		}
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadRefusesUnsupported(t *testing.T) {
	model := func(d map[string]any) map[string]any { return d["model"].(map[string]any) }
	preTok := func(d map[string]any) []any { return d["pre_tokenizer"].(map[string]any)["pretokenizers"].([]any) }
	cases := []struct {
		name   string
		mutate func(d map[string]any)
		want   string
	}{
		{"WordPiece", func(d map[string]any) { model(d)["type"] = "WordPiece" }, `model.type: "WordPiece" is not supported`},
		{"Unigram", func(d map[string]any) { model(d)["type"] = "Unigram" }, `model.type: "Unigram" is not supported`},
		{"GPT-2 pre-tokenizer", func(d map[string]any) {
			d["pre_tokenizer"] = map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": true}
		}, `pre_tokenizer: type "ByteLevel" with 0 parts is not supported`},
		{"Metaspace", func(d map[string]any) { d["pre_tokenizer"] = map[string]any{"type": "Metaspace"} }, `type "Metaspace"`},
		{"no pre-tokenizer", func(d map[string]any) { d["pre_tokenizer"] = nil }, "pre_tokenizer: missing"},
		{"GPT-2 pattern", func(d map[string]any) {
			preTok(d)[0].(map[string]any)["pattern"] = map[string]any{"Regex": `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`}
		}, `?\\p{L}+| ?\\p{N}+`},
		{"Split removed", func(d map[string]any) { preTok(d)[0].(map[string]any)["behavior"] = "Removed" }, `behavior "Removed"`},
		{"prefix space", func(d map[string]any) { preTok(d)[1].(map[string]any)["add_prefix_space"] = true }, "add_prefix_space=true"},
		{"NFKC", func(d map[string]any) { d["normalizer"] = map[string]any{"type": "NFKC"} }, `normalizer: type "NFKC" is not supported`},
		{"no decoder", func(d map[string]any) { d["decoder"] = nil }, "decoder: missing"},
		{"Metaspace decoder", func(d map[string]any) { d["decoder"] = map[string]any{"type": "Metaspace"} }, `decoder: type "Metaspace"`},
		{"TemplateProcessing without $A", func(d map[string]any) { d["post_processor"] = map[string]any{"type": "TemplateProcessing"} }, `TemplateProcessing single has no $A`},
		{"TemplateProcessing pair first", func(d map[string]any) {
			d["post_processor"] = map[string]any{"type": "Sequence", "processors": []any{map[string]any{"type": "TemplateProcessing",
				"single": []any{map[string]any{"Sequence": map[string]any{"id": "B"}}}}}}
		}, `post_processor.processors[0]: post_processor: TemplateProcessing single[0]`},
		{"RobertaProcessing", func(d map[string]any) { d["post_processor"] = map[string]any{"type": "RobertaProcessing"} }, `post_processor: type "RobertaProcessing"`},
		{"byte fallback", func(d map[string]any) { model(d)["byte_fallback"] = true; model(d)["unk_token"] = "<unk>" }, "model.byte_fallback: true is not supported: this is a SentencePiece-style BPE"},
		{"dropout", func(d map[string]any) { model(d)["dropout"] = 0.1 }, "model.dropout: 0.1"},
		{"unknown token", func(d map[string]any) { model(d)["unk_token"] = "<unk>" }, `model.unk_token: "<unk>"`},
		{"subword prefix", func(d map[string]any) { model(d)["continuing_subword_prefix"] = "##" }, `continuing_subword_prefix: "##"`},
		{"lstrip", func(d map[string]any) { d["added_tokens"].([]any)[2].(map[string]any)["lstrip"] = true }, `added_tokens[2] "<|im_end|>": lstrip=true`},
		{"missing byte", func(d map[string]any) { delete(model(d)["vocab"].(map[string]any), "Ā") }, "lacks the byte token"},
		{"merge out of vocabulary", func(d map[string]any) {
			model(d)["merges"] = append(model(d)["merges"].([]any), "x ÿ")
		}, `"xÿ" is not in model.vocab`},
		{"malformed merge", func(d map[string]any) { model(d)["merges"] = []any{"a b c"} }, `model.merges[0]: "a b c" is not two tokens`},
		{"not byte-level", func(d map[string]any) { model(d)["vocab"].(map[string]any)["a b"] = 9999 }, `model.vocab["a b"] (id 9999): not spelled in the byte-level alphabet`},
	}
	for _, c := range cases {
		doc := tinyJSON(t)
		c.mutate(doc)
		_, err := Load(writeTokenizer(t, doc, nil))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func TestLoadReadsBothMergeForms(t *testing.T) {
	stringForm := tinyJSON(t)
	pairForm := tinyJSON(t)
	var pairs []any
	for _, m := range pairForm["model"].(map[string]any)["merges"].([]any) {
		a, b, _ := strings.Cut(m.(string), " ")
		pairs = append(pairs, []any{a, b})
	}
	pairForm["model"].(map[string]any)["merges"] = pairs
	a, err := Load(filepath.Join(writeTokenizer(t, stringForm, nil), "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Load(writeTokenizer(t, pairForm, nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range testCorpus(t) {
		if x, y := a.Encode(d.Text), b.Encode(d.Text); !slices.Equal(x, y) {
			t.Fatalf("%s: string-form merges give %v, pair form %v", d.Name, x, y)
		}
	}
}

func TestLoadConfig(t *testing.T) {
	doc := tinyJSON(t)
	// Without tokenizer_config.json, EOS and pad fall back to <|endoftext|>
	// and there is no chat template.
	tok, err := Load(writeTokenizer(t, doc, nil))
	if err != nil {
		t.Fatal(err)
	}
	endOfText, _ := tok.TokenID("<|endoftext|>")
	if s := tok.Special(); s.EOS != endOfText || s.Pad != endOfText {
		t.Errorf("without config: Special() = %+v, want EOS = Pad = %d", s, endOfText)
	}
	// Tokens as objects, and a named template list.
	cfg := map[string]any{
		"eos_token":     map[string]any{"content": "<|im_end|>", "special": true},
		"pad_token":     "<|im_start|>",
		"chat_template": []any{map[string]any{"name": "tool_use", "template": "x"}, map[string]any{"name": "default", "template": "enable_thinking <|im_start|>"}},
	}
	tok, err = Load(writeTokenizer(t, doc, cfg))
	if err != nil {
		t.Fatal(err)
	}
	imEnd, _ := tok.TokenID("<|im_end|>")
	imStart, _ := tok.TokenID("<|im_start|>")
	if s := tok.Special(); s.EOS != imEnd || s.Pad != imStart {
		t.Errorf("Special() = %+v, want EOS %d, Pad %d", s, imEnd, imStart)
	}
	if f, err := tok.DetectChatTemplate(); err != nil || f != ChatTemplateQwen3 {
		t.Errorf("default named template: %v, %v", f, err)
	}
	// An EOS the tokenizer does not have.
	cfg["eos_token"] = "</s>"
	if _, err := Load(writeTokenizer(t, doc, cfg)); err == nil || !strings.Contains(err.Error(), `eos_token: "</s>" is not a token of tokenizer.json`) {
		t.Errorf("unknown eos: error %v", err)
	}
	// chat_template.jinja beside a config without chat_template.
	dir := writeTokenizer(t, doc, map[string]any{"eos_token": "<|im_end|>"})
	if err := os.WriteFile(filepath.Join(dir, "chat_template.jinja"), []byte("You are Qwen, created by Alibaba Cloud. You are a helpful assistant. <|im_start|>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if tok, err = Load(dir); err != nil {
		t.Fatal(err)
	}
	if f, err := tok.DetectChatTemplate(); err != nil || f != ChatTemplateQwen25 {
		t.Errorf("chat_template.jinja: %v, %v", f, err)
	}
}

func TestLoadMissingPath(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope"))
	if err == nil || !strings.Contains(err.Error(), "want a tokenizer.json file or a model directory") {
		t.Errorf("error %v", err)
	}
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "tokenizer.json") {
		t.Errorf("empty directory: error %v", err)
	}
}

func TestQwenSpecialTokensAndLookups(t *testing.T) {
	q3 := fixtureTokenizer(t, "qwen3")
	want := SpecialTokens{BOS: -1, EOS: 151645, Pad: 151643, IMStart: 151644, IMEnd: 151645, ThinkStart: 151667, ThinkEnd: 151668}
	if got := q3.Special(); got != want {
		t.Errorf("qwen3 Special() = %+v, want %+v", got, want)
	}
	q25 := fixtureTokenizer(t, "qwen2_5")
	if got := q25.Special(); got.ThinkStart != -1 || got.ThinkEnd != -1 || got.IMEnd != 151645 || got.EOS != 151645 {
		t.Errorf("qwen2.5 Special() = %+v, want no think tokens and EOS <|im_end|> 151645", got)
	}
	if n := q3.VocabSize(); n != 151669 {
		t.Errorf("qwen3 VocabSize() = %d, want 151669 (151643 BPE tokens + 26 added)", n)
	}
	for _, c := range []struct {
		token string
		id    int
		bytes string
	}{{"Ġworld", 1879, " world"}, {"Hello", 9707, "Hello"}, {"<|im_end|>", 151645, "<|im_end|>"}, {"Ċ", 198, "\n"}} {
		if id, ok := q3.TokenID(c.token); !ok || id != c.id {
			t.Errorf("TokenID(%q) = %d, %v; want %d", c.token, id, ok, c.id)
		}
		if tok, ok := q3.Token(c.id); !ok || tok != c.token {
			t.Errorf("Token(%d) = %q, %v; want %q", c.id, tok, ok, c.token)
		}
		if b, ok := q3.TokenBytes(c.id); !ok || b != c.bytes {
			t.Errorf("TokenBytes(%d) = %q, %v; want %q", c.id, b, ok, c.bytes)
		}
	}
	if _, ok := q3.Token(151669); ok {
		t.Error("Token(151669) found a token past the vocabulary")
	}
	if _, ok := q3.TokenID(" world"); ok {
		t.Error(`TokenID(" world") found a token: lookups take the byte-level spelling "Ġworld"`)
	}
	// Ids past the vocabulary (a model's padded embedding rows) decode to
	// nothing, as in Hugging Face.
	if got := q3.Decode([]int{9707, 151900, -1, 1879}); got != "Hello world" {
		t.Errorf("Decode with out-of-range ids = %q", got)
	}
	if !q3.IsSpecial(151645) || q3.IsSpecial(151667) || q3.IsSpecial(9707) {
		t.Error("IsSpecial: <|im_end|> is special, <think> and Hello are not")
	}
}

func TestEncodeBatchMatchesEncode(t *testing.T) {
	tok, err := Load(testdataPath(t, "tiny"))
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, d := range testCorpus(t) {
		texts = append(texts, d.Text, strings.Repeat(d.Text, 30)) // big enough to go parallel
	}
	batch := tok.EncodeBatch(texts)
	if len(batch) != len(texts) {
		t.Fatalf("EncodeBatch returned %d results for %d texts", len(batch), len(texts))
	}
	for i, s := range texts {
		if !slices.Equal(batch[i], tok.Encode(s)) {
			t.Fatalf("EncodeBatch[%d] differs from Encode", i)
		}
	}
	if got := tok.EncodeBatch(nil); len(got) != 0 {
		t.Errorf("EncodeBatch(nil) = %v", got)
	}
}
