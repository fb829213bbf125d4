// fit.go — whether a tokenizer belongs with a model and a chat template:
// every id either side can produce must mean the same token to the other.
// A tokenizer of another family often has a vocabulary no larger than the
// model's, so a size check alone passes it, and the model then stops on
// ids the tokenizer does not have (or reads its EOS as some other token);
// a template of another family writes its special tokens as plain text.
//
// What it is not: a proof that two tokenizers of one family agree on every
// merge (they are compared only by what a model's config names).
package tokenizer

import (
	"fmt"
	"strings"
)

// CheckModel checks the tokenizer against a model with vocab embedding
// rows whose config.json names eos (eos_token_id, one or more) and bos
// (bos_token_id; nil when absent): every tokenizer id is a row, and every
// id the config names is a token of this tokenizer. fix is appended to a
// refusal (how to name the right tokenizer).
func (t *Tokenizer) CheckModel(vocab int, eos []int, bos *int, fix string) error {
	if t.VocabSize() > vocab {
		return fmt.Errorf("the tokenizer has %d tokens but the model's vocabulary is %d; %s", t.VocabSize(), vocab, fix)
	}
	check := func(key string, id int) error {
		if _, ok := t.Token(id); ok {
			return nil
		}
		return fmt.Errorf("the model's config.json %s is %d, which is not a token of the tokenizer (its ids are 0 … %d): the tokenizer belongs to another model; %s", key, id, t.VocabSize()-1, fix)
	}
	for _, id := range eos {
		if err := check("eos_token_id", id); err != nil {
			return err
		}
	}
	if bos != nil {
		return check("bos_token_id", *bos)
	}
	return nil
}

// templateTokens are the special tokens each chat template family writes.
var templateTokens = map[ChatTemplate][]string{
	ChatTemplateQwen25:  {"<|im_start|>", "<|im_end|>"},
	ChatTemplateQwen3:   {"<|im_start|>", "<|im_end|>"},
	ChatTemplateLlama3:  {"<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"},
	ChatTemplateLlama31: {"<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"},
}

// CheckTemplate checks that every special token the family writes is a
// special token of this tokenizer, so that it encodes to its one id
// rather than as text.
func (t *Tokenizer) CheckTemplate(c ChatTemplate) error {
	var missing []string
	for _, s := range templateTokens[c] {
		if id, ok := t.TokenID(s); !ok || !t.IsSpecial(id) {
			missing = append(missing, s)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	own := "it has no chat template of a family troupe renders"
	if f, err := t.DetectChatTemplate(); err == nil {
		own = "its own is " + f.String()
	}
	return fmt.Errorf("chat template %s: the tokenizer %s has no special token %s, so the template's would be encoded as text; use the tokenizer's own family (%s)", c, t.source, strings.Join(missing, ", "), own)
}
