// The Tokenizer: encode text to ids and decode ids to text exactly as Hugging
// Face's tokenizers do for Qwen2/Qwen3 and Llama 3 tokenizer.json files.
//
// Encode pipeline (the order Hugging Face applies):
//
//  1. cut out added tokens that match the raw text (addedtokens.go);
//  2. NFC-normalise each remaining segment (Qwen; Llama 3 has no
//     normaliser), then cut out added tokens marked "normalized";
//  3. split each segment into pieces with the Qwen or Llama 3 pattern
//     (splitpattern.go);
//  4. byte-pair encode each piece (bpe.go).
//
// Decode concatenates each id's bytes and replaces ill-formed UTF-8 with
// U+FFFD (bytelevel.go). Ids outside the vocabulary are skipped, as Hugging
// Face skips ids it has no token for.
//
// What this file is not: it never adds special tokens (no BOS/EOS
// post-processing: Qwen adds none, Llama 3.1 a BOS that its chat template
// writes anyway), and it does not compute offsets.

package tokenizer

import (
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Tokenizer is immutable after Load and safe for concurrent use.
type Tokenizer struct {
	bpe bpeModel

	rawAdded        *addedTokenMatcher // "normalized": false, matched on raw text
	normalizedAdded *addedTokenMatcher // "normalized": true, matched after NFC
	nfc             bool
	split           splitter // the pre-tokenizer's pattern

	tokenByID  []string       // vocabulary spelling of each id ("Ġworld", "<|im_end|>"); "" for holes
	bytesByID  []string       // what each id decodes to (raw bytes)
	known      []bool         // id has a token
	special    []bool         // id is an added token marked "special"
	added      []bool         // id is an added token
	idByToken  map[string]int // vocabulary spelling → id, added tokens first
	specialIDs SpecialTokens

	chatTemplate string // tokenizer_config.json "chat_template", "" when absent
	source       string // where it was loaded from, for error messages
}

// SpecialTokens holds the ids the trainer needs; -1 marks a token the
// tokenizer does not have.
type SpecialTokens struct {
	BOS        int // tokenizer_config.json "bos_token", else the one token tokenizer.json's post-processor puts first
	EOS        int // tokenizer_config.json "eos_token"
	Pad        int // tokenizer_config.json "pad_token"
	IMStart    int // <|im_start|>
	IMEnd      int // <|im_end|>
	ThinkStart int // <think>
	ThinkEnd   int // </think>
}

// Encode returns the ids of text. It adds no special tokens; added tokens
// written literally in text ("<|im_end|>", "<think>") are recognised.
func (t *Tokenizer) Encode(text string) []int {
	return t.appendEncoded(make([]int, 0, len(text)/4+4), text)
}

func (t *Tokenizer) appendEncoded(dst []int, text string) []int {
	for len(text) > 0 {
		start, end, id := t.rawAdded.find(text)
		if start < 0 {
			return t.appendSegment(dst, text)
		}
		dst = t.appendSegment(dst, text[:start])
		dst = append(dst, id)
		text = text[end:]
	}
	return dst
}

// appendSegment encodes text that holds no raw added token.
func (t *Tokenizer) appendSegment(dst []int, text string) []int {
	if text == "" {
		return dst
	}
	if t.nfc && !isASCII(text) && norm.NFC.QuickSpanString(text) != len(text) {
		text = norm.NFC.String(text)
	}
	for len(text) > 0 {
		start, end, id := t.normalizedAdded.find(text)
		if start < 0 {
			return t.appendPieces(dst, text)
		}
		dst = t.appendPieces(dst, text[:start])
		dst = append(dst, id)
		text = text[end:]
	}
	return dst
}

func (t *Tokenizer) appendPieces(dst []int, text string) []int {
	for i := 0; i < len(text); {
		j := t.split.pieceEnd(text, i)
		dst = t.bpe.appendPiece(dst, text[i:j])
		i = j
	}
	return dst
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// Decode returns the text of ids, keeping special tokens. Byte sequences that
// are not valid UTF-8 (a multi-byte character cut between ids) become U+FFFD.
func (t *Tokenizer) Decode(ids []int) string {
	return t.decode(ids, false)
}

// DecodeSkipSpecial is Decode without the added tokens marked "special"
// (Hugging Face's skip_special_tokens=True).
func (t *Tokenizer) DecodeSkipSpecial(ids []int) string {
	return t.decode(ids, true)
}

func (t *Tokenizer) decode(ids []int, skipSpecial bool) string {
	n := 0
	for _, id := range ids {
		if id >= 0 && id < len(t.bytesByID) {
			n += len(t.bytesByID[id])
		}
	}
	buf := make([]byte, 0, n)
	for _, id := range ids {
		if id < 0 || id >= len(t.bytesByID) || (skipSpecial && t.special[id]) {
			continue
		}
		buf = append(buf, t.bytesByID[id]...)
	}
	return validUTF8Lossy(buf)
}

// VocabSize is the largest id plus one, added tokens included.
func (t *Tokenizer) VocabSize() int { return len(t.tokenByID) }

// TokenID returns the id of a token spelled as in tokenizer.json: "Ġworld"
// for " world", "<|im_end|>" for an added token.
func (t *Tokenizer) TokenID(token string) (int, bool) {
	id, ok := t.idByToken[token]
	return id, ok
}

// Token returns the tokenizer.json spelling of id.
func (t *Tokenizer) Token(id int) (string, bool) {
	if id < 0 || id >= len(t.tokenByID) || !t.known[id] {
		return "", false
	}
	return t.tokenByID[id], true
}

// TokenBytes returns the raw bytes id decodes to on its own (" world" for
// "Ġworld"); it may be part of a multi-byte character.
func (t *Tokenizer) TokenBytes(id int) (string, bool) {
	if id < 0 || id >= len(t.tokenByID) || !t.known[id] {
		return "", false
	}
	return t.bytesByID[id], true
}

// IsSpecial reports whether id is an added token marked "special" (the ones
// DecodeSkipSpecial drops).
func (t *Tokenizer) IsSpecial(id int) bool {
	return id >= 0 && id < len(t.special) && t.special[id]
}

// Special returns the ids of the tokens the trainer needs.
func (t *Tokenizer) Special() SpecialTokens { return t.specialIDs }
