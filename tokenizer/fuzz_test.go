// Fuzz tests: Encode and Decode never panic, the scanner's pieces tile the
// text, the two merge loops agree, and Decode(Encode(s)) gives back s up to
// NFC. Seeds are the corpus documents.
//
//	go test ./tokenizer -run '^$' -fuzz FuzzEncodeDecode -fuzztime 60s
//	go test ./tokenizer -run '^$' -fuzz FuzzEncodeDecodeQwen3 -fuzztime 60s

package tokenizer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// expectedRoundTrip is what Decode(Encode(s)) must return, computed without
// the tokenizer's own matcher: added tokens are cut out of the raw text
// (leftmost, longest), and every other segment is NFC-normalised on its own.
func expectedRoundTrip(s string, added []AddedToken) string {
	var out strings.Builder
	for {
		start, end := -1, -1
		for _, a := range added {
			i := strings.Index(s, a.Content)
			if i < 0 {
				continue
			}
			if start < 0 || i < start || i == start && i+len(a.Content) > end {
				start, end = i, i+len(a.Content)
			}
		}
		if start < 0 {
			out.WriteString(norm.NFC.String(s))
			return out.String()
		}
		out.WriteString(norm.NFC.String(s[:start]))
		out.WriteString(s[start:end])
		s = s[end:]
	}
}

func fuzzRoundTrip(f *testing.F, tok *Tokenizer) {
	for _, d := range testCorpus(f) {
		f.Add(d.Text)
	}
	f.Add("\xff\xfe invalid \xe4\xb8 utf-8 <|im_end|>")
	f.Add("<think>\u0338 and <|im_end|>\u0338: NFC would fuse '>' with U+0338 across a token")
	var added []AddedToken
	for id, isAdded := range tok.added {
		if isAdded {
			added = append(added, AddedToken{Content: tok.tokenByID[id]})
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		var pieces strings.Builder
		splitPieces(s, func(p string) {
			if p == "" {
				t.Fatalf("empty piece in %q", s)
			}
			pieces.WriteString(p)
			if len(p) >= 2 && len(p) <= shortPiece {
				a, b := tok.bpe.mergeShort(nil, p), tok.bpe.mergeLong(nil, p)
				if len(a) != len(b) {
					t.Fatalf("piece %q: mergeShort %v, mergeLong %v", p, a, b)
				}
				for i := range a {
					if a[i] != b[i] {
						t.Fatalf("piece %q: mergeShort %v, mergeLong %v", p, a, b)
					}
				}
			}
		})
		if pieces.String() != s {
			t.Fatalf("pieces of %q join to %q", s, pieces.String())
		}
		ids := tok.Encode(s)
		got := tok.Decode(ids)
		if !utf8.ValidString(got) {
			t.Fatalf("Decode returned invalid UTF-8 %q", got)
		}
		if !utf8.ValidString(s) {
			return // invalid bytes come back as U+FFFD, as in Hugging Face
		}
		if want := expectedRoundTrip(s, added); got != want {
			t.Fatalf("Decode(Encode(%q)) = %q, want %q", s, got, want)
		}
	})
}

// FuzzEncodeDecode uses the committed tiny tokenizer (256 bytes, 300 merges,
// Qwen's added tokens), so it needs no fetched fixture.
func FuzzEncodeDecode(f *testing.F) {
	tok, err := Load(testdataPath(f, "tiny"))
	if err != nil {
		f.Fatal(err)
	}
	fuzzRoundTrip(f, tok)
}

// FuzzEncodeDecodeQwen3 uses the real Qwen3 tokenizer (fetched fixture).
func FuzzEncodeDecodeQwen3(f *testing.F) {
	fuzzRoundTrip(f, fixtureTokenizer(f, "qwen3"))
}

// FuzzParseTokenizerJSON feeds arbitrary tokenizer.json bytes to the
// loader: an error, or a tokenizer that encodes and decodes — never a panic.
// Run longer with: go test -run '^$' -fuzz=FuzzParseTokenizerJSON ./tokenizer/
func FuzzParseTokenizerJSON(f *testing.F) {
	dir := f.TempDir()
	if err := WriteByteLevel(dir, ByteLevelOptions{Merges: []Merge{{"a", "b"}, {"ab", "c"}}}); err != nil {
		f.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":["a b"]},"added_tokens":[{"id":3,"content":"<|endoftext|>","special":true}]}`))
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{},"merges":[["a","b"]]},"pre_tokenizer":{"type":"ByteLevel"}}`))
	f.Add([]byte(`{"model":{"type":"WordPiece"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tok, err := parseTokenizerJSON(data)
		if err != nil {
			return
		}
		ids := tok.Encode("Compute $3 + 4$. <|endoftext|>")
		_ = tok.Decode(ids)
	})
}
