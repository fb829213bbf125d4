// Tests of the building blocks: the byte-level alphabet, lossy UTF-8, the
// two BPE merge loops, the added-token matcher and Describe.

package tokenizer

import (
	"bytes"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestByteLevelAlphabet(t *testing.T) {
	seen := map[rune]bool{}
	for b := 0; b < 256; b++ {
		r := byteLevelRune[b]
		if seen[r] {
			t.Fatalf("byte 0x%02x maps to %q, already used", b, r)
		}
		seen[r] = true
	}
	// Fixed points of GPT-2's table.
	for b, want := range map[byte]rune{' ': 'Ġ', '\n': 'Ċ', '\t': 'ĉ', 'a': 'a', 0x00: 'Ā', 0xA0: 'ł', 0xAD: 'Ń', 0xFF: 'ÿ', 0x7F: 'ġ'} {
		if got := byteLevelRune[b]; got != want {
			t.Errorf("byte 0x%02x → %q, want %q", b, got, want)
		}
	}
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	if raw, ok := byteLevelDecode(byteLevelEncode(string(all))); !ok || raw != string(all) {
		t.Error("byteLevelDecode(byteLevelEncode(all bytes)) is not the identity")
	}
	if _, ok := byteLevelDecode("a b"); ok {
		t.Error(`byteLevelDecode("a b") accepted a raw space`)
	}
}

func TestValidUTF8Lossy(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain", "plain"},
		{"\xe4\xb8a", "\uFFFDa"},                         // truncated 3-byte sequence: one replacement
		{"\xff\xfe", "\uFFFD\uFFFD"},                     // bytes that never start a sequence: one each
		{"\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD"},           // surrogate: ED then two stray continuations
		{"\xf0\x9f\x98", "\uFFFD"},                       // truncated emoji
		{"\xf0\x9f\x98\x80\xf0", "😀\uFFFD"},              // whole emoji, then a lone lead byte
		{"\xe0\x80\x80", "\uFFFD\uFFFD\uFFFD"},           // overlong: E0 needs A0..BF next
		{"\xf4\x90\x80\x80", "\uFFFD\uFFFD\uFFFD\uFFFD"}, // above U+10FFFF
		{"a\xc3", "a\uFFFD"},
		{"\uFFFD", "\uFFFD"}, // a real U+FFFD stays one character
	} {
		if got := validUTF8Lossy([]byte(c.in)); got != c.want {
			t.Errorf("validUTF8Lossy(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestMergeLoopsAgree runs the array and the heap merge loops on random
// pieces (bytes drawn from real text, so merges apply) and on every corpus
// piece; both must give the same ids.
func TestMergeLoopsAgree(t *testing.T) {
	tok := fixtureTokenizer(t, "qwen3")
	m := &tok.bpe
	check := func(piece string) {
		t.Helper()
		a := m.mergeShort(nil, piece)
		b := m.mergeLong(nil, piece)
		if !slices.Equal(a, b) {
			t.Fatalf("piece %q: mergeShort %v, mergeLong %v", piece, a, b)
		}
	}
	var source strings.Builder
	for _, d := range testCorpus(t) {
		source.WriteString(d.Text)
		splitPieces(d.Text, func(p string) {
			if len(p) >= 2 && len(p) <= shortPiece {
				check(p)
			}
		})
	}
	text := source.String()
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 3000; i++ {
		n := 2 + rng.Intn(shortPiece-1)
		start := rng.Intn(len(text) - n)
		check(text[start : start+n])
	}
}

// TestLongPiece: one 300 kB run of letters is one piece; the heap loop
// encodes it and the text comes back.
func TestLongPiece(t *testing.T) {
	tok := fixtureTokenizer(t, "qwen3")
	s := strings.Repeat("pneumonoultramicroscopicsilicovolcanoconiosis", 7000)
	ids := tok.Encode(s)
	if got := tok.Decode(ids); got != s {
		t.Fatal("Decode(Encode(long word)) differs from the word")
	}
	if len(ids) > len(s)/2 {
		t.Errorf("%d ids for %d bytes: merges were not applied to the long piece", len(ids), len(s))
	}
}

func TestAddedTokenMatcherLeftmostLongest(t *testing.T) {
	m := newAddedTokenMatcher([]addedToken{{"<a>", 1}, {"<a><b>", 2}, {"<b>", 3}, {"b>", 4}})
	for _, c := range []struct {
		in             string
		start, end, id int
	}{
		{"xx<a><b>yy", 2, 8, 2}, // longest at the leftmost position
		{"x<a>y<b>", 1, 4, 1},
		{"xb><b>", 1, 3, 4}, // leftmost wins over longer later matches
		{"<c>", -1, -1, -1},
		{"", -1, -1, -1},
	} {
		start, end, id := m.find(c.in)
		if start != c.start || end != c.end || id != c.id {
			t.Errorf("find(%q) = %d, %d, %d; want %d, %d, %d", c.in, start, end, id, c.start, c.end, c.id)
		}
	}
}

func TestDescribe(t *testing.T) {
	tok := fixtureTokenizer(t, "qwen3")
	ids := append(tok.Encode("Hi 世<|im_end|><think>"), 151900)
	infos := tok.Describe(ids)
	if len(infos) != len(ids) {
		t.Fatalf("Describe returned %d entries for %d ids", len(infos), len(ids))
	}
	last := infos[len(infos)-1]
	if last.Known || last.Text() != "(unknown id)" {
		t.Errorf("id past the vocabulary: %+v", last)
	}
	var buf bytes.Buffer
	if err := WriteTokenTable(&buf, infos); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"#  id", `"Hi"`, `"<|im_end|>"`, "special", "added", "unknown", "tokens,"} {
		if !strings.Contains(out, want) {
			t.Errorf("token table lacks %q:\n%s", want, out)
		}
	}
	// Every byte of the text is in exactly one row.
	var all []byte
	for _, i := range infos {
		all = append(all, i.Bytes...)
	}
	if string(all) != "Hi 世<|im_end|><think>" {
		t.Errorf("concatenated Bytes = %q", all)
	}
	if !utf8.ValidString(infos[0].Text()) {
		t.Error("Text() is not valid UTF-8")
	}
}
