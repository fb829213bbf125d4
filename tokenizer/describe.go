// Describe: a per-token view of an id sequence, for `train tokenize` and for
// debugging prompts: each id with its tokenizer.json spelling and the text it
// stands for.
//
// What this file is not: part of encoding or decoding; nothing here is on a
// hot path.

package tokenizer

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// TokenInfo describes one id of a sequence.
type TokenInfo struct {
	Index   int    // position in the sequence
	ID      int    // the id
	Token   string // tokenizer.json spelling ("Ġworld", "<|im_end|>"); "" if unknown
	Bytes   string // raw bytes the id decodes to (may be part of a character)
	Known   bool   // the id has a token
	Added   bool   // an added token (matched literally in text)
	Special bool   // an added token marked special
}

// Text is Bytes as readable text: a Go-quoted string, with bytes that do not
// form whole characters written as \x escapes.
func (i TokenInfo) Text() string {
	if !i.Known {
		return "(unknown id)"
	}
	return strconv.Quote(i.Bytes)
}

// Describe returns one TokenInfo per id.
func (t *Tokenizer) Describe(ids []int) []TokenInfo {
	out := make([]TokenInfo, len(ids))
	for k, id := range ids {
		info := TokenInfo{Index: k, ID: id}
		if tok, ok := t.Token(id); ok {
			info.Token, info.Known = tok, true
			info.Bytes = t.bytesByID[id]
			info.Added, info.Special = t.added[id], t.special[id]
		}
		out[k] = info
	}
	return out
}

// WriteTokenTable prints infos as aligned columns: index, id, spelling,
// text, and a kind column marking added and special tokens; then a summary
// line with the token and character counts.
func WriteTokenTable(w io.Writer, infos []TokenInfo) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tid\ttoken\ttext\tkind")
	var all strings.Builder
	for _, i := range infos {
		kind := ""
		switch {
		case i.Special:
			kind = "special"
		case i.Added:
			kind = "added"
		case !i.Known:
			kind = "unknown"
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\n", i.Index, i.ID, i.Token, i.Text(), kind)
		all.WriteString(i.Bytes)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d tokens, %d characters\n", len(infos), utf8.RuneCountInString(validUTF8Lossy([]byte(all.String()))))
	return err
}
