// Load: read a Hugging Face tokenizer.json (and tokenizer_config.json beside
// it) into a Tokenizer, refusing every feature this package does not
// implement with an error that names it.
//
// Accepted: model BPE (merges as "a b" strings or ["a", "b"] pairs, no
// dropout, no unknown token, no byte fallback, no subword prefix/suffix),
// normalizer NFC or none, pre-tokenizer Sequence[Split(Qwen pattern,
// Isolated), ByteLevel(add_prefix_space=false, use_regex=false)], decoder
// ByteLevel, post-processor ByteLevel or none, added tokens without
// lstrip/rstrip/single_word. That is the Qwen2, Qwen2.5 and Qwen3 family.
//
// What this file is not: a general tokenizer.json reader. WordPiece,
// Unigram, other regexes (Llama 3, GPT-2) and other normalisers are refused
// rather than approximated.

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
	if err := checkPreTokenizer(f.PreTokenizer); err != nil {
		return nil, err
	}
	if err := checkByteLevelComponent("decoder", f.Decoder, false); err != nil {
		return nil, err
	}
	if err := checkByteLevelComponent("post_processor", f.PostProcessor, true); err != nil {
		return nil, err
	}
	if err := t.buildVocab(&f); err != nil {
		return nil, err
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
		return false, fmt.Errorf("normalizer: type %q is not supported; troupe implements NFC or no normalizer (the Qwen tokenizers)", n.Type)
	}
	return true, nil
}

func checkPreTokenizer(raw json.RawMessage) error {
	const want = `pre_tokenizer: want Sequence[Split(Qwen2 pattern, Isolated), ByteLevel(add_prefix_space=false, use_regex=false)] as in Qwen2/Qwen3`
	var seq struct {
		Type          string            `json:"type"`
		PreTokenizers []json.RawMessage `json:"pretokenizers"`
	}
	if isJSONNull(raw) {
		return fmt.Errorf("pre_tokenizer: missing; %s", want)
	}
	if err := json.Unmarshal(raw, &seq); err != nil {
		return fmt.Errorf("pre_tokenizer: %w", err)
	}
	if seq.Type != "Sequence" || len(seq.PreTokenizers) != 2 {
		return fmt.Errorf("pre_tokenizer: type %q with %d parts is not supported; %s", seq.Type, len(seq.PreTokenizers), want)
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
		return fmt.Errorf("pre_tokenizer.pretokenizers[0]: %w", err)
	}
	if split.Type != "Split" {
		return fmt.Errorf("pre_tokenizer.pretokenizers[0]: type %q is not supported; %s", split.Type, want)
	}
	if split.Pattern.Regex == nil || *split.Pattern.Regex != qwenSplitPattern {
		got := "a String pattern"
		if split.Pattern.Regex != nil {
			got = fmt.Sprintf("%q", *split.Pattern.Regex)
		}
		return fmt.Errorf("pre_tokenizer.pretokenizers[0].pattern: %s is not supported; troupe implements only the Qwen2/Qwen3 regex %q", got, qwenSplitPattern)
	}
	if split.Behavior != "Isolated" || split.Invert {
		return fmt.Errorf("pre_tokenizer.pretokenizers[0]: behavior %q invert=%v is not supported; want Isolated, invert=false", split.Behavior, split.Invert)
	}
	var bl struct {
		Type           string `json:"type"`
		AddPrefixSpace bool   `json:"add_prefix_space"`
		UseRegex       bool   `json:"use_regex"`
	}
	if err := json.Unmarshal(seq.PreTokenizers[1], &bl); err != nil {
		return fmt.Errorf("pre_tokenizer.pretokenizers[1]: %w", err)
	}
	if bl.Type != "ByteLevel" || bl.AddPrefixSpace || bl.UseRegex {
		return fmt.Errorf("pre_tokenizer.pretokenizers[1]: %s add_prefix_space=%v use_regex=%v is not supported; %s", bl.Type, bl.AddPrefixSpace, bl.UseRegex, want)
	}
	return nil
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

func (t *Tokenizer) buildVocab(f *tokenizerJSON) error {
	m := &f.Model
	if m.Type == "" && m.Vocab != nil && m.Merges != nil {
		m.Type = "BPE" // old files leave the type out
	}
	switch {
	case m.Type != "BPE":
		return fmt.Errorf("model.type: %q is not supported; troupe reads byte-level BPE models (Qwen2/Qwen3), not WordPiece or Unigram", m.Type)
	case m.Dropout != nil && *m.Dropout != 0:
		return fmt.Errorf("model.dropout: %v is not supported; want null", *m.Dropout)
	case m.UnkToken != nil:
		return fmt.Errorf("model.unk_token: %q is not supported; byte-level BPE needs none (want null)", *m.UnkToken)
	case m.ByteFallback:
		return errors.New("model.byte_fallback: true is not supported; want false")
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

	t.specialIDs = SpecialTokens{EOS: -1, Pad: -1}
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
