// Tests of WriteByteLevel and TrainMerges. testdata/tokenizer/tiny/ is
// WriteByteLevel's committed output for tinyOptions; check-tiny.mjs loaded it
// with Hugging Face's tokenizers and transformers.js and recorded their ids
// in tiny_reference.json.

package tokenizer

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/tokenizer/tiny/ and tiny-llama3/ from WriteByteLevel")

// tinyOptions: 300 merges learned from the hand-written corpus documents.
func tinyOptions(t testing.TB) ByteLevelOptions {
	var texts []string
	for _, d := range testCorpus(t) {
		if !strings.HasPrefix(d.Name, "random/") && !strings.HasPrefix(d.Name, "added/") {
			texts = append(texts, d.Text)
		}
	}
	return ByteLevelOptions{Merges: TrainMerges(texts, 300)}
}

// TestWriteByteLevelGolden: tiny/ (the Qwen format) and tiny-llama3/ (the
// Llama 3 format, same merges) are WriteByteLevel's output.
func TestWriteByteLevelGolden(t *testing.T) {
	for _, g := range []struct {
		folder string
		format ByteLevelFormat
	}{{"tiny", FormatQwen}, {"tiny-llama3", FormatLlama3}} {
		dir := t.TempDir()
		opt := tinyOptions(t)
		opt.Format = g.format
		if err := WriteByteLevel(dir, opt); err != nil {
			t.Fatal(err)
		}
		golden := testdataPath(t, g.folder)
		for _, name := range []string{"tokenizer.json", "tokenizer_config.json"} {
			got, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if *update {
				if err := os.MkdirAll(golden, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(golden, name), got, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(filepath.Join(golden, name))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from testdata/tokenizer/%s/%s: if the change is intended, run go test ./tokenizer -run TestWriteByteLevelGolden -update and then scripts/tokenizer/check-tiny.mjs (tiny) or make-llama3-reference.py (tiny-llama3)", name, g.folder, name)
			}
		}
	}
}

func TestTinyMatchesHuggingFace(t *testing.T) {
	tok, err := Load(testdataPath(t, "tiny"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		IDs map[string][]int `json:"ids"`
	}
	readJSON(t, testdataPath(t, "tiny_reference.json"), &ref)
	docs := testCorpus(t)
	if len(ref.IDs) != len(docs) {
		t.Fatalf("tiny_reference.json has %d documents, corpus.json %d: rerun check-tiny.mjs", len(ref.IDs), len(docs))
	}
	merged := 0
	for _, d := range docs {
		got := tok.Encode(d.Text)
		if !slices.Equal(got, ref.IDs[d.Name]) {
			t.Errorf("%s %q:\n%s", d.Name, d.Text, describeMismatch(tok, got, ref.IDs[d.Name]))
		}
		for _, id := range got {
			if id >= 256 && !tok.added[id] {
				merged++
			}
		}
	}
	if merged == 0 {
		t.Error("no merged token was used: the tiny tokenizer's merges are not exercised")
	}
	s := tok.Special()
	if s.EOS != s.IMEnd || s.Pad < 0 || s.IMStart < 0 || s.ThinkStart < 0 || s.ThinkEnd < 0 {
		t.Errorf("Special() = %+v, want EOS = <|im_end|> and every id present", s)
	}
	if family, err := tok.DetectChatTemplate(); err != nil || family != ChatTemplateQwen3 {
		t.Errorf("DetectChatTemplate() = %v, %v; want qwen3", family, err)
	}
}

func TestWriteByteLevelWithoutMerges(t *testing.T) {
	dir := t.TempDir()
	if err := WriteByteLevel(dir, ByteLevelOptions{}); err != nil {
		t.Fatal(err)
	}
	tok, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if tok.VocabSize() != 256+len(QwenAddedTokens) {
		t.Errorf("VocabSize() = %d, want %d", tok.VocabSize(), 256+len(QwenAddedTokens))
	}
	text := "héllo <|im_start|>wörld\n"
	ids := tok.Encode(text)
	var want []int
	for _, b := range []byte("héllo ") {
		want = append(want, int(b))
	}
	want = append(want, tok.Special().IMStart)
	for _, b := range []byte("wörld\n") {
		want = append(want, int(b))
	}
	if !slices.Equal(ids, want) {
		t.Errorf("Encode(%q) = %v, want one id per byte and the added token: %v", text, ids, want)
	}
	if got := tok.Decode(ids); got != text {
		t.Errorf("Decode = %q, want %q", got, text)
	}
}

func TestWriteByteLevelRefusesBadOptions(t *testing.T) {
	cases := []struct {
		name string
		opt  ByteLevelOptions
		want string
	}{
		{"merge of unknown parts", ByteLevelOptions{Merges: []Merge{{"th", "e"}}}, `"th" is not a token yet`},
		{"repeated added token", ByteLevelOptions{AddedTokens: []AddedToken{{"<|im_end|>", true}, {"<|im_end|>", true}}}, "repeated"},
		{"EOS not added", ByteLevelOptions{AddedTokens: []AddedToken{{"<|endoftext|>", true}}}, "ByteLevelOptions.EOS"},
	}
	for _, c := range cases {
		err := WriteByteLevel(t.TempDir(), c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func TestTrainMerges(t *testing.T) {
	// Pieces "abc", " abc", " ab": "a"+"b" occurs 3 times; then " "+"ab"
	// and "ab"+"c" both occur twice and the tie goes to the space, which
	// sorts first; after that no pair occurs twice.
	got := TrainMerges([]string{"abc abc ab"}, 10)
	want := []Merge{{"a", "b"}, {" ", "ab"}}
	if !slices.Equal(got, want) {
		t.Errorf("TrainMerges = %q, want %q", got, want)
	}
	if got := TrainMerges([]string{"xyz"}, 10); len(got) != 0 {
		t.Errorf("TrainMerges on pairs seen once = %q, want none", got)
	}
}
