// Byte-level alphabet: the reversible byte ↔ printable-character mapping of
// GPT-2 that Qwen's tokenizer.json uses to spell its vocabulary, and the lossy
// UTF-8 conversion that Hugging Face's ByteLevel decoder applies at the end.
//
// What this file is not: it never maps text through the alphabet while
// encoding. Vocabulary entries are converted to raw bytes once at load time,
// so BPE runs directly on the UTF-8 bytes of a piece.

package tokenizer

import (
	"strings"
	"unicode/utf8"
)

// byteLevelRune[b] is the character that spells byte b in the vocabulary:
// printable Latin-1 bytes ('!'..'~', '¡'..'¬', '®'..'ÿ') stand for
// themselves, the other 68 bytes map in order to U+0100, U+0101, … (so the
// space 0x20 is 'Ġ' U+0120 and '\n' is 'Ċ' U+010A).
var byteLevelRune [256]rune

// byteLevelByte is the inverse of byteLevelRune, indexed by rune; -1 marks a
// rune outside the alphabet.
var byteLevelByte [256 + 68]int16

func init() {
	for i := range byteLevelByte {
		byteLevelByte[i] = -1
	}
	next := rune(256)
	for b := 0; b < 256; b++ {
		printable := (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF)
		r := rune(b)
		if !printable {
			r = next
			next++
		}
		byteLevelRune[b] = r
		byteLevelByte[r] = int16(b)
	}
}

// byteLevelDecode converts a vocabulary spelling ("Ġworld") to the raw bytes
// it stands for (" world"). ok is false when a character is outside the
// byte-level alphabet.
func byteLevelDecode(token string) (raw string, ok bool) {
	var sb strings.Builder
	sb.Grow(len(token))
	for _, r := range token {
		if r < 0 || int(r) >= len(byteLevelByte) || byteLevelByte[r] < 0 {
			return "", false
		}
		sb.WriteByte(byte(byteLevelByte[r]))
	}
	return sb.String(), true
}

// byteLevelEncode spells raw bytes in the byte-level alphabet (the inverse of
// byteLevelDecode).
func byteLevelEncode(raw string) string {
	var sb strings.Builder
	sb.Grow(2 * len(raw))
	for i := 0; i < len(raw); i++ {
		sb.WriteRune(byteLevelRune[raw[i]])
	}
	return sb.String()
}

// validUTF8Lossy returns b as a string with every ill-formed sequence
// replaced by U+FFFD, one replacement per "maximal subpart" (Unicode §3.9,
// the rule Rust's String::from_utf8_lossy and the WHATWG decoder follow).
// This is how Hugging Face's ByteLevel decoder finishes: a token sequence cut
// inside a multi-byte character decodes to "\uFFFD", not to raw bytes.
//
// It departs from strings.ToValidUTF8, which collapses a whole run of bad
// bytes into a single replacement, and from ranging over a Go string, which
// yields one RuneError per byte even for a truncated but well-started
// sequence such as "\xe4\xb8".
func validUTF8Lossy(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b) + 8)
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			sb.WriteByte(b[i])
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r != utf8.RuneError || size > 1 {
			sb.Write(b[i : i+size])
			i += size
			continue
		}
		sb.WriteString("\uFFFD")
		i += maximalSubpart(b[i:])
	}
	return sb.String()
}

// maximalSubpart returns the length (≥ 1) of the longest prefix of b that
// starts a well-formed UTF-8 sequence but does not complete one; b[0] is
// known not to start a complete valid sequence.
func maximalSubpart(b []byte) int {
	lo, hi := byte(0x80), byte(0xBF)
	var continuation int
	switch c := b[0]; {
	case c >= 0xC2 && c <= 0xDF:
		continuation = 1
	case c == 0xE0:
		continuation, lo = 2, 0xA0
	case c == 0xED:
		continuation, hi = 2, 0x9F
	case c >= 0xE1 && c <= 0xEF:
		continuation = 2
	case c == 0xF0:
		continuation, lo = 3, 0x90
	case c == 0xF4:
		continuation, hi = 3, 0x8F
	case c >= 0xF1 && c <= 0xF3:
		continuation = 3
	default:
		return 1
	}
	n := 1
	for k := 0; k < continuation && n < len(b); k++ {
		x := b[n]
		if k > 0 {
			lo, hi = 0x80, 0xBF
		}
		if x < lo || x > hi {
			break
		}
		n++
	}
	return n
}
