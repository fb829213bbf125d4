package tokenizer

import (
	"strings"
	"testing"
)

// Tokenizers of one family fit their models' configs and templates; one of
// another family is refused, by the size of its vocabulary or, when that
// is smaller than the model's, by the ids the model's config names. The
// configs are the published config.json values of Qwen2.5-0.5B-Instruct
// and Llama-3.1-8B-Instruct.
func TestTokenizerFitsItsModelAndTemplate(t *testing.T) {
	qwen, llama := fixtureTokenizer(t, "qwen2_5"), fixtureTokenizer(t, "llama3")
	one := func(id int) *int { return &id }
	type model struct {
		vocab int
		eos   []int
		bos   *int
	}
	qwenModel := model{151936, []int{151645}, one(151643)}
	llamaModel := model{128256, []int{128001, 128008, 128009}, one(128000)}
	for _, c := range []struct {
		name string
		tok  *Tokenizer
		m    model
		want string // "": fits
	}{
		{"Qwen's own", qwen, qwenModel, ""},
		{"Llama's own", llama, llamaModel, ""},
		{"Qwen's tokenizer on Llama", qwen, llamaModel, "the tokenizer has 151665 tokens but the model's vocabulary is 128256"},
		{"Llama's tokenizer on Qwen: smaller, but not Qwen's EOS", llama, qwenModel, "eos_token_id is 151645, which is not a token of the tokenizer (its ids are 0 … 128255)"},
		{"an absent BOS", llama, model{128256, []int{128009}, one(200000)}, "bos_token_id is 200000"},
	} {
		err := c.tok.CheckModel(c.m.vocab, c.m.eos, c.m.bos, "FIX")
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasSuffix(err.Error(), "FIX")):
			t.Errorf("%s: %v, want %q and the fix", c.name, err, c.want)
		}
	}
	for _, c := range []struct {
		tok  *Tokenizer
		tmpl ChatTemplate
		want string
	}{
		{qwen, ChatTemplateQwen25, ""},
		{qwen, ChatTemplateQwen3, ""},
		{llama, ChatTemplateLlama31, ""},
		{llama, ChatTemplateQwen3, "has no special token <|im_start|>, <|im_end|>"},
		{qwen, ChatTemplateLlama3, "has no special token <|begin_of_text|>, <|start_header_id|>, <|end_header_id|>, <|eot_id|>"},
	} {
		err := c.tok.CheckTemplate(c.tmpl)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s with %s: %v", c.tok.source, c.tmpl, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s with %s: %v, want %q", c.tok.source, c.tmpl, err, c.want)
		}
	}
}
