// Load: read a Hugging Face tokenizer.json (and tokenizer_config.json beside
// it) into a Tokenizer, refusing every feature this package does not
// implement with an error that names it.
//
// Accepted: model BPE (merges as "a b" strings or ["a", "b"] pairs, no
// dropout, no unknown token, no byte fallback, no subword prefix/suffix),
// normalizer NFC or none, pre-tokenizer Sequence[Split(Qwen or Llama 3
// pattern, Isolated), ByteLevel(add_prefix_space=false, use_regex=false)],
// decoder ByteLevel, post-processor ByteLevel, a TemplateProcessing that
// puts special tokens before the text (Llama 3.1's BOS; Encode does not add
// them), a Sequence of those, or none; added tokens without
// lstrip/rstrip/single_word. That is the Qwen2, Qwen2.5, Qwen3 and Llama 3.x
// family.
//
// What this file is not: a general tokenizer.json reader. WordPiece,
// Unigram, SentencePiece-style BPE with byte fallback (Llama 2, Mistral 7B:
// a Metaspace "▁" for spaces, no byte-level alphabet), other regexes
// (GPT-2, Mistral Nemo's tekken) and other normalisers are refused rather
// than approximated.

package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

type tokenizerJSON struct {
	AddedTokens   []addedTokenJSON `json:"added_tokens"`
	Normalizer    json.RawMessage  `json:"normalizer"`
	PreTokenizer  json.RawMessage  `json:"pre_tokenizer"`
	PostProcessor json.RawMessage  `json:"post_processor"`
	Decoder       json.RawMessage  `json:"decoder"`
	Model         modelJSON        `json:"model"`
}

type addedTokenJSON struct {
	ID         int    `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

type modelJSON struct {
	Type                    string          `json:"type"`
	Dropout                 *float64        `json:"dropout"`
	UnkToken                *string         `json:"unk_token"`
	ContinuingSubwordPrefix *string         `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string         `json:"end_of_word_suffix"`
	ByteFallback            bool            `json:"byte_fallback"`
	IgnoreMerges            bool            `json:"ignore_merges"`
	Vocab                   map[string]int  `json:"vocab"`
	Merges                  json.RawMessage `json:"merges"`
}

// typed is the "type" field every tokenizer.json component carries.
type typed struct {
	Type string `json:"type"`
}

// Load reads a tokenizer. path is a tokenizer.json file or a directory that
// holds one. A tokenizer_config.json (and chat_template.jinja) in the same
// directory is read when present: it names the EOS and pad tokens and holds
// the chat template.
func Load(path string) (*Tokenizer, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w (want a tokenizer.json file or a model directory holding one)", err)
	}
	file := path
	if info.IsDir() {
		file = filepath.Join(path, "tokenizer.json")
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	t, err := parseTokenizerJSON(data)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", file, err)
	}
	t.source = file
	cfg, err := readTokenizerConfig(filepath.Dir(file))
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	if err := t.applyConfig(cfg); err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", cfg.path, err)
	}
	return t, nil
}

// parseTokenizerJSON builds a Tokenizer from the bytes of a tokenizer.json
// (without tokenizer_config.json: EOS and pad fall back to <|endoftext|>).
func parseTokenizerJSON(data []byte) (*Tokenizer, error) {
	var f tokenizerJSON
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("not a tokenizer.json: %w", err)
	}
	t := &Tokenizer{}
	var err error
	if t.nfc, err = checkNormalizer(f.Normalizer); err != nil {
		return nil, err
	}
	if t.split, err = checkPreTokenizer(f.PreTokenizer); err != nil {
		return nil, err
	}
	if err := checkByteLevelComponent("decoder", f.Decoder, false); err != nil {
		return nil, err
	}
	bos, err := checkPostProcessor(f.PostProcessor)
	if err != nil {
		return nil, err
	}
	if err := t.buildVocab(&f); err != nil {
		return nil, err
	}
	if id, ok := t.idByToken[bos]; ok {
		t.specialIDs.BOS = id
	}
	return t, nil
}

func checkNormalizer(raw json.RawMessage) (nfc bool, err error) {
	if isJSONNull(raw) {
		return false, nil
	}
	var n typed
	if err := json.Unmarshal(raw, &n); err != nil {
		return false, fmt.Errorf("normalizer: %w", err)
	}
	if n.Type != "NFC" {
		return false, fmt.Errorf("normalizer: type %q is not supported; troupe implements NFC (Qwen) or no normalizer (Llama 3)", n.Type)
	}
	return true, nil
}

func checkPreTokenizer(raw json.RawMessage) (splitter, error) {
	const want = `pre_tokenizer: want Sequence[Split(Qwen2 or Llama 3 pattern, Isolated), ByteLevel(add_prefix_space=false, use_regex=false)] as in Qwen2/Qwen3 and Llama 3`
	var none splitter
	var seq struct {
		Type          string            `json:"type"`
		PreTokenizers []json.RawMessage `json:"pretokenizers"`
	}
	if isJSONNull(raw) {
		return none, fmt.Errorf("pre_tokenizer: missing; %s", want)
	}
	if err := json.Unmarshal(raw, &seq); err != nil {
		return none, fmt.Errorf("pre_tokenizer: %w", err)
	}
	if seq.Type != "Sequence" || len(seq.PreTokenizers) != 2 {
		return none, fmt.Errorf("pre_tokenizer: type %q with %d parts is not supported; %s", seq.Type, len(seq.PreTokenizers), want)
	}
	var split struct {
		Type    string `json:"type"`
		Pattern struct {
			Regex  *string `json:"Regex"`
			String *string `json:"String"`
		} `json:"pattern"`
		Behavior string `json:"behavior"`
		Invert   bool   `json:"invert"`
	}
	if err := json.Unmarshal(seq.PreTokenizers[0], &split); err != nil {
		return none, fmt.Errorf("pre_tokenizer.pretokenizers[0]: %w", err)
	}
	if split.Type != "Split" {
		return none, fmt.Errorf("pre_tokenizer.pretokenizers[0]: type %q is not supported; %s", split.Type, want)
	}
	var sp splitter
	for _, c := range splitters {
		if split.Pattern.Regex != nil && *split.Pattern.Regex == c.regex {
			sp = c
		}
	}
	if sp.regex == "" {
		got := "a String pattern"
		if split.Pattern.Regex != nil {
			got = fmt.Sprintf("%q", *split.Pattern.Regex)
		}
		return none, fmt.Errorf("pre_tokenizer.pretokenizers[0].pattern: %s is not supported; troupe implements the Qwen2/Qwen3 regex %q and the Llama 3 regex %q", got, qwenSplitPattern, llama3SplitPattern)
	}
	if split.Behavior != "Isolated" || split.Invert {
		return none, fmt.Errorf("pre_tokenizer.pretokenizers[0]: behavior %q invert=%v is not supported; want Isolated, invert=false", split.Behavior, split.Invert)
	}
	var bl struct {
		Type           string `json:"type"`
		AddPrefixSpace bool   `json:"add_prefix_space"`
		UseRegex       bool   `json:"use_regex"`
	}
	if err := json.Unmarshal(seq.PreTokenizers[1], &bl); err != nil {
		return none, fmt.Errorf("pre_tokenizer.pretokenizers[1]: %w", err)
	}
	if bl.Type != "ByteLevel" || bl.AddPrefixSpace || bl.UseRegex {
		return none, fmt.Errorf("pre_tokenizer.pretokenizers[1]: %s add_prefix_space=%v use_regex=%v is not supported; %s", bl.Type, bl.AddPrefixSpace, bl.UseRegex, want)
	}
	return sp, nil
}

// checkByteLevelComponent accepts a ByteLevel decoder or post-processor (and
// null where nullOK); the post-processor only matters for offsets, which
// this package does not compute.
func checkByteLevelComponent(name string, raw json.RawMessage, nullOK bool) error {
	if isJSONNull(raw) {
		if nullOK {
			return nil
		}
		return fmt.Errorf("%s: missing; want ByteLevel", name)
	}
	var c typed
	if err := json.Unmarshal(raw, &c); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if c.Type != "ByteLevel" {
		return fmt.Errorf("%s: type %q is not supported; want ByteLevel (byte-level BPE)", name, c.Type)
	}
	return nil
}

// checkPostProcessor accepts ByteLevel (which only moves offsets), none, a
// TemplateProcessing whose single-sequence template is special tokens and
// then the text (Llama 3.1's "<|begin_of_text|> $A"), or a Sequence of
// those. It returns the one token such a template puts first ("" when it
// puts none), which Load takes as the BOS when tokenizer_config.json names
// none. Encode itself never adds it: it is add_special_tokens=False, and
// the chat templates write the BOS as text.
func checkPostProcessor(raw json.RawMessage) (bos string, err error) {
	if isJSONNull(raw) {
		return "", nil
	}
	var pp struct {
		Type       string            `json:"type"`
		Processors []json.RawMessage `json:"processors"`
		Single     []struct {
			SpecialToken *struct {
				ID string `json:"id"`
			} `json:"SpecialToken"`
			Sequence *struct {
				ID string `json:"id"`
			} `json:"Sequence"`
		} `json:"single"`
	}
	if err := json.Unmarshal(raw, &pp); err != nil {
		return "", fmt.Errorf("post_processor: %w", err)
	}
	switch pp.Type {
	case "ByteLevel":
		return "", nil
	case "Sequence":
		for i, p := range pp.Processors {
			b, err := checkPostProcessor(p)
			if err != nil {
				return "", fmt.Errorf("post_processor.processors[%d]: %w", i, err)
			}
			if b != "" {
				bos = b
			}
		}
		return bos, nil
	case "TemplateProcessing":
		var prefix []string
		for i, item := range pp.Single {
			switch {
			case item.Sequence != nil && item.Sequence.ID == "A" && i == len(pp.Single)-1:
				if len(prefix) == 1 {
					bos = prefix[0]
				}
				return bos, nil
			case item.SpecialToken != nil:
				prefix = append(prefix, item.SpecialToken.ID)
			default:
				return "", fmt.Errorf("post_processor: TemplateProcessing single[%d] is not supported; want special tokens followed by the text ($A) last", i)
			}
		}
		return "", errors.New("post_processor: TemplateProcessing single has no $A sequence at its end")
	}
	return "", fmt.Errorf("post_processor: type %q is not supported; want ByteLevel, TemplateProcessing (special tokens before the text) or a Sequence of them", pp.Type)
}

func (t *Tokenizer) buildVocab(f *tokenizerJSON) error {
	m := &f.Model
	if m.Type == "" && m.Vocab != nil && m.Merges != nil {
		m.Type = "BPE" // old files leave the type out
	}
	switch {
	case m.Type != "BPE":
		return fmt.Errorf("model.type: %q is not supported; troupe reads byte-level BPE models (Qwen, Llama 3), not WordPiece or Unigram", m.Type)
	case m.Dropout != nil && *m.Dropout != 0:
		return fmt.Errorf("model.dropout: %v is not supported; want null", *m.Dropout)
	case m.ByteFallback:
		return errors.New("model.byte_fallback: true is not supported: this is a SentencePiece-style BPE (Llama 2, Mistral 7B), whose \"▁\" spaces, <0xXX> byte tokens and unknown-token fusion troupe does not implement; it reads byte-level BPE (Qwen, Llama 3)")
	case m.UnkToken != nil:
		return fmt.Errorf("model.unk_token: %q is not supported; byte-level BPE needs none (want null)", *m.UnkToken)
	case m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "":
		return fmt.Errorf("model.continuing_subword_prefix: %q is not supported; want \"\" or null", *m.ContinuingSubwordPrefix)
	case m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "":
		return fmt.Errorf("model.end_of_word_suffix: %q is not supported; want \"\" or null", *m.EndOfWordSuffix)
	}

	size := 0
	for tok, id := range m.Vocab {
		if id < 0 {
			return fmt.Errorf("model.vocab[%q]: id must be >= 0, got %d", tok, id)
		}
		size = max(size, id+1)
	}
	for i, a := range f.AddedTokens {
		if a.ID < 0 {
			return fmt.Errorf("added_tokens[%d] %q: id must be >= 0, got %d", i, a.Content, a.ID)
		}
		size = max(size, a.ID+1)
	}
	t.tokenByID = make([]string, size)
	t.bytesByID = make([]string, size)
	t.known = make([]bool, size)
	t.special = make([]bool, size)
	t.added = make([]bool, size)
	t.idByToken = make(map[string]int, len(m.Vocab)+len(f.AddedTokens))

	rawByID := make([]string, size) // raw bytes of model vocabulary entries
	for tok, id := range m.Vocab {
		raw, ok := byteLevelDecode(tok)
		if !ok {
			return fmt.Errorf("model.vocab[%q] (id %d): not spelled in the byte-level alphabet; is this a byte-level BPE tokenizer?", tok, id)
		}
		if t.known[id] {
			return fmt.Errorf("model.vocab: id %d is used by both %q and %q", id, t.tokenByID[id], tok)
		}
		t.tokenByID[id], t.bytesByID[id], t.known[id] = tok, raw, true
		rawByID[id] = raw
		t.idByToken[tok] = id
	}

	t.bpe.merges = make(map[uint64]uint64)
	for b := 0; b < 256; b++ {
		tok := string(byteLevelRune[b])
		id, ok := m.Vocab[tok]
		if !ok {
			return fmt.Errorf("model.vocab: lacks the byte token %q for byte 0x%02x; a byte-level BPE vocabulary needs all 256", tok, b)
		}
		t.bpe.byteID[b] = int32(id)
	}
	if err := t.bpe.readMerges(m.Merges, m.Vocab); err != nil {
		return err
	}

	var rawAdded, normalizedAdded []addedToken
	for i, a := range f.AddedTokens {
		switch {
		case a.Content == "":
			return fmt.Errorf("added_tokens[%d] (id %d): empty content", i, a.ID)
		case a.LStrip || a.RStrip || a.SingleWord:
			return fmt.Errorf("added_tokens[%d] %q: lstrip=%v rstrip=%v single_word=%v is not supported; want all false (as in Qwen)", i, a.Content, a.LStrip, a.RStrip, a.SingleWord)
		}
		if t.known[a.ID] && t.tokenByID[a.ID] != a.Content {
			return fmt.Errorf("added_tokens[%d] %q: id %d is already the vocabulary token %q", i, a.Content, a.ID, t.tokenByID[a.ID])
		}
		t.tokenByID[a.ID], t.known[a.ID] = a.Content, true
		t.bytesByID[a.ID] = addedTokenBytes(a.Content)
		t.special[a.ID] = a.Special
		t.added[a.ID] = true
		t.idByToken[a.Content] = a.ID
		tok := addedToken{content: a.Content, id: a.ID}
		if a.Normalized {
			normalizedAdded = append(normalizedAdded, tok)
		} else {
			rawAdded = append(rawAdded, tok)
		}
	}
	t.rawAdded = newAddedTokenMatcher(rawAdded)
	t.normalizedAdded = newAddedTokenMatcher(normalizedAdded)
	t.bpe.buildWholeIDs(rawByID, m.IgnoreMerges)

	t.specialIDs = SpecialTokens{EOS: -1, Pad: -1, BOS: -1}
	lookup := func(s string) int {
		if id, ok := t.idByToken[s]; ok {
			return id
		}
		return -1
	}
	t.specialIDs.IMStart = lookup("<|im_start|>")
	t.specialIDs.IMEnd = lookup("<|im_end|>")
	t.specialIDs.ThinkStart = lookup("<think>")
	t.specialIDs.ThinkEnd = lookup("</think>")
	t.specialIDs.EOS = lookup("<|endoftext|>")
	t.specialIDs.Pad = lookup("<|endoftext|>")
	return nil
}

// addedTokenBytes is what an added token decodes to. Hugging Face passes
// added tokens through the ByteLevel decoder too: a content spelled entirely
// in the byte-level alphabet ("<|im_end|>") maps back through it, any other
// content ("<my token>", with its space) is kept as written.
func addedTokenBytes(content string) string {
	if raw, ok := byteLevelDecode(content); ok {
		return raw
	}
	return content
}

// readMerges fills the merge table from either merges form.
func (m *bpeModel) readMerges(raw json.RawMessage, vocab map[string]int) error {
	var pairs [][2]string
	trimmed := bytes.TrimLeft(raw, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		rest := bytes.TrimLeft(trimmed[1:], " \t\r\n")
		if len(rest) > 0 && rest[0] == '"' {
			var lines []string
			if err := json.Unmarshal(raw, &lines); err != nil {
				return fmt.Errorf("model.merges: %w", err)
			}
			pairs = make([][2]string, len(lines))
			for i, line := range lines {
				a, b, ok := strings.Cut(line, " ")
				if !ok || strings.Contains(b, " ") {
					return fmt.Errorf("model.merges[%d]: %q is not two tokens separated by one space", i, line)
				}
				pairs[i] = [2]string{a, b}
			}
		} else if err := json.Unmarshal(raw, &pairs); err != nil {
			return fmt.Errorf("model.merges: want [\"a b\", …] or [[\"a\", \"b\"], …]: %w", err)
		}
	} else if !isJSONNull(raw) {
		return errors.New("model.merges: want a list")
	}
	for rank, p := range pairs {
		left, okL := vocab[p[0]]
		right, okR := vocab[p[1]]
		merged, okM := vocab[p[0]+p[1]]
		if !okL || !okR || !okM {
			return fmt.Errorf("model.merges[%d]: %q + %q: %q is not in model.vocab", rank, p[0], p[1], missingOf(vocab, p[0], p[1], p[0]+p[1]))
		}
		// A repeated pair keeps its last rank, as the hash map Hugging Face
		// collects the merges into does.
		key := uint64(uint32(left))<<32 | uint64(uint32(right))
		m.merges[key] = uint64(rank)<<32 | uint64(uint32(merged))
	}
	return nil
}

func missingOf(vocab map[string]int, toks ...string) string {
	for _, s := range toks {
		if _, ok := vocab[s]; !ok {
			return s
		}
	}
	return ""
}

// buildWholeIDs records which vocabulary entries BPE reproduces as one token,
// so Encode can look such pieces up instead of merging them. Running BPE on
// all ~150k entries takes a few tens of milliseconds, spread over the CPUs.
func (m *bpeModel) buildWholeIDs(rawByID []string, ignoreMerges bool) {
	m.wholeID = make(map[string]int32, len(rawByID))
	workers := max(1, min(runtime.GOMAXPROCS(0), 8))
	found := make([][]int32, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var buf []int
			for id := w; id < len(rawByID); id += workers {
				raw := rawByID[id]
				if len(raw) < 2 {
					continue
				}
				if !ignoreMerges {
					buf = m.merge(buf[:0], raw)
					if len(buf) != 1 || buf[0] != id {
						continue
					}
				}
				found[w] = append(found[w], int32(id))
			}
		}(w)
	}
	wg.Wait()
	for _, ids := range found {
		for _, id := range ids {
			m.wholeID[rawByID[id]] = id
		}
	}
}

func isJSONNull(raw json.RawMessage) bool {
	s := bytes.TrimSpace(raw)
	return len(s) == 0 || string(s) == "null"
}
