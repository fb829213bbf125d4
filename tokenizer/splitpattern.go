// The byte-level BPE pre-tokenizers: a hand-written scanner that cuts text
// into the same pieces as Hugging Face's Split pre-tokenizer with the Qwen2 /
// Qwen3 pattern
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// or the Llama 3 pattern, which differs in one alternative only: numbers go
// in runs of up to three (\p{N}{1,3} where Qwen has \p{N}):
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// and behaviour "Isolated" (every match is its own piece; the alternatives
// together match every character, so there are no gaps between matches).
// Load picks the scanner by the pattern tokenizer.json names.
//
// Why a scanner: Go's regexp has no lookahead, and `\s+(?!\S)` needs one. The
// scanner resolves the alternatives in the regex's leftmost-first order, with
// the backtracking of the two whitespace alternatives worked out by hand:
//
//	\s*[\r\n]+  on a whitespace run W that holds a line break matches W up to
//	            and including its last \r or \n;
//	\s+(?!\S)   matches all of W at the end of the text, otherwise W minus its
//	            last character when W has at least two characters;
//	\s+         takes the single character left over.
//
// Character classes follow Oniguruma, the regex engine of Hugging Face's
// tokenizers: \s is Unicode White_Space (U+0085 NEL is a space, U+FEFF is
// not), \p{L} and \p{N} are the general categories, and the case-insensitive
// contraction "'s" also matches "'ſ" (U+017F LATIN SMALL LETTER LONG S, whose
// case fold is "s"). transformers.js differs on all three; see
// testdata/tokenizer/README.md.
//
// What this file is not: a regex engine. Any other split pattern (GPT-2's,
// Mistral Nemo's tekken, DeepSeek's, …) is refused at load time (load.go).

package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// qwenSplitPattern and llama3SplitPattern are the Split regexes this
// package implements.
const (
	qwenSplitPattern   = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	llama3SplitPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// splitter is one of the implemented patterns: the longest run of \p{N}
// characters one piece takes.
type splitter struct {
	name      string // for messages: the models that use it
	regex     string
	maxDigits int
}

var (
	qwenSplit   = splitter{"Qwen2/Qwen3", qwenSplitPattern, 1}
	llama3Split = splitter{"Llama 3", llama3SplitPattern, 3}
	splitters   = []splitter{qwenSplit, llama3Split}
)

// charClass is what the split pattern can tell apart about a character.
type charClass uint8

const (
	classOther   charClass = iota // none of the below: punctuation, symbols, marks, emoji, …
	classLetter                   // \p{L}
	classNumber                   // \p{N}
	classSpace                    // \s other than \r and \n
	classNewline                  // \r or \n
)

var asciiClass = func() (t [utf8.RuneSelf]charClass) {
	for c := range t {
		t[c] = classifyRune(rune(c))
	}
	return t
}()

func classifyRune(r rune) charClass {
	switch {
	case r == '\r' || r == '\n':
		return classNewline
	case unicode.IsLetter(r):
		return classLetter
	case unicode.IsNumber(r):
		return classNumber
	case unicode.IsSpace(r): // White_Space, including U+0085 and U+00A0
		return classSpace
	}
	return classOther
}

// classAt decodes the character at s[i] and returns its class and width.
// Invalid UTF-8 decodes as one byte of class Other.
func classAt(s string, i int) (charClass, int) {
	c := s[i]
	if c < utf8.RuneSelf {
		return asciiClass[c], 1
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	if r >= 0x4E00 && r <= 0x9FFF { // CJK Unified Ideographs: all Lo
		return classLetter, w
	}
	return classifyRune(r), w
}

// splitPieces calls yield with each piece of s under the Qwen pattern, in
// order.
func splitPieces(s string, yield func(piece string)) { qwenSplit.pieces(s, yield) }

// pieces calls yield with each piece of s, in order.
func (p splitter) pieces(s string, yield func(piece string)) {
	for i := 0; i < len(s); {
		j := p.pieceEnd(s, i)
		yield(s[i:j])
		i = j
	}
}

// pieceEnd returns the end of the piece that starts at s[i] (i < len(s)).
func (p splitter) pieceEnd(s string, i int) int {
	cls, w := classAt(s, i)

	// (?i:'s|'t|'re|'ve|'m|'ll|'d)
	if s[i] == '\'' {
		if n := contractionLen(s[i+1:]); n > 0 {
			return i + 1 + n
		}
	}

	// [^\r\n\p{L}\p{N}]?\p{L}+
	if cls == classLetter {
		return lettersEnd(s, i+w)
	}
	if (cls == classOther || cls == classSpace) && i+w < len(s) {
		if next, w2 := classAt(s, i+w); next == classLetter {
			return lettersEnd(s, i+w+w2)
		}
	}

	// \p{N}, or \p{N}{1,3} (Llama 3)
	if cls == classNumber {
		j := i + w
		for n := 1; n < p.maxDigits && j < len(s); n++ {
			next, w2 := classAt(s, j)
			if next != classNumber {
				break
			}
			j += w2
		}
		return j
	}

	// ` ?[^\s\p{L}\p{N}]+[\r\n]*`
	start := i
	if s[i] == ' ' && i+1 < len(s) {
		if next, _ := classAt(s, i+1); next == classOther {
			start = i + 1
		}
	}
	if other, _ := classAt(s, start); other == classOther {
		j := start
		for j < len(s) {
			c, w := classAt(s, j)
			if c != classOther {
				break
			}
			j += w
		}
		for j < len(s) && (s[j] == '\r' || s[j] == '\n') {
			j++
		}
		return j
	}

	// What is left starts a whitespace run: scan all of it.
	end, lastBreak, lastStart := i, -1, i
	for end < len(s) {
		c, w := classAt(s, end)
		if c != classSpace && c != classNewline {
			break
		}
		if c == classNewline {
			lastBreak = end
		}
		lastStart = end
		end += w
	}
	switch {
	case lastBreak >= 0: // \s*[\r\n]+
		return lastBreak + 1
	case end == len(s): // \s+(?!\S) at the end of the text
		return end
	case lastStart > i: // \s+(?!\S): leave the last space to the next piece
		return lastStart
	default: // \s+
		return end
	}
}

// lettersEnd returns the end of the run of letters that starts at s[i].
func lettersEnd(s string, i int) int {
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if asciiClass[c] != classLetter {
				return i
			}
			i++
			continue
		}
		cls, w := classAt(s, i)
		if cls != classLetter {
			return i
		}
		i += w
	}
	return i
}

// contractionLen returns the length of the contraction suffix ("s", "T",
// "re", "LL", "ſ", …) at the start of rest, or 0 when there is none.
func contractionLen(rest string) int {
	if rest == "" {
		return 0
	}
	lower := func(c byte) byte { return c | 0x20 }
	switch lower(rest[0]) {
	case 's', 't', 'm', 'd':
		return 1
	case 'r', 'v':
		if len(rest) > 1 && lower(rest[1]) == 'e' {
			return 2
		}
	case 'l':
		if len(rest) > 1 && lower(rest[1]) == 'l' {
			return 2
		}
	}
	if len(rest) >= 2 && rest[0] == 0xC5 && rest[1] == 0xBF { // U+017F ſ folds to s
		return 2
	}
	return 0
}
