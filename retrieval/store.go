// store.go — corpora and indexes on disk.
//
// What it is: LoadCorpus reads a corpus in Search-R1's JSONL layout (one
// {"id": …, "contents": "Title\ntext"} object per line; "title" and "text"
// fields are accepted in place of "contents", as in DPR-style dumps). Save
// writes a built index to one file and Open reads it back without
// re-tokenising the corpus.
//
// The index file: the magic line "troupe-bm25 1\n", then uvarint-framed
// fields — k1 and b as float64 bits, the documents (id, contents, token
// length), the terms in sorted order with their postings (document as a
// delta from the previous posting, term frequency) — and a CRC-32 (IEEE) of
// everything before it. Open checks the checksum before parsing, and every
// count against the bytes left, so a damaged file is an error, never a panic
// or a huge allocation.
package retrieval

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"sort"
	"strings"

	"troupe/internal/atomicfile"
)

// maxCorpusLine bounds one JSONL line of a corpus (a passage).
const maxCorpusLine = 16 << 20

// LoadCorpus reads a JSONL corpus. Blank lines are skipped; a document
// without an id gets its line number.
func LoadCorpus(path string) ([]Document, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("retrieval: corpus: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxCorpusLine)
	var docs []Document
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var rec struct {
			ID       json.RawMessage `json:"id"`
			Contents *string         `json:"contents"`
			Title    *string         `json:"title"`
			Text     *string         `json:"text"`
		}
		if err := json.Unmarshal(b, &rec); err != nil {
			return nil, fmt.Errorf("retrieval: corpus %s:%d: not a JSON object: %v", path, line, err)
		}
		d := Document{ID: strings.Trim(string(rec.ID), `"`)}
		if d.ID == "" || d.ID == "null" {
			d.ID = fmt.Sprint(line)
		}
		switch {
		case rec.Contents != nil:
			d.Contents = *rec.Contents
		case rec.Text != nil:
			title := ""
			if rec.Title != nil {
				title = *rec.Title
			}
			d.Contents = title + "\n" + *rec.Text
		default:
			return nil, fmt.Errorf("retrieval: corpus %s:%d: no \"contents\" (or \"title\"/\"text\") field; a corpus line is {\"id\": …, \"contents\": \"Title\\ntext\"}", path, line)
		}
		docs = append(docs, d)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("retrieval: corpus %s:%d: a line is longer than %d MiB", path, line+1, maxCorpusLine>>20)
		}
		return nil, fmt.Errorf("retrieval: corpus %s: %w", path, err)
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("retrieval: corpus %s has no documents", path)
	}
	return docs, nil
}

// WriteCorpus writes docs as JSONL (atomically).
func WriteCorpus(path string, docs []Document) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		for _, d := range docs {
			if err := enc.Encode(d); err != nil {
				return err
			}
		}
		return nil
	})
}

const indexMagic = "troupe-bm25 1\n"

// Save writes the index to path (atomically: a crash leaves the old file or
// the new one).
func (ix *Index) Save(path string) error {
	var b []byte
	b = append(b, indexMagic...)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(ix.K1))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(ix.B))
	b = binary.AppendUvarint(b, uint64(len(ix.docs)))
	for i, d := range ix.docs {
		b = appendString(b, d.ID)
		b = appendString(b, d.Contents)
		b = binary.AppendUvarint(b, uint64(ix.lengths[i]))
	}
	terms := make([]string, 0, len(ix.postings))
	for t := range ix.postings {
		terms = append(terms, t)
	}
	sort.Strings(terms)
	b = binary.AppendUvarint(b, uint64(len(terms)))
	for _, t := range terms {
		ps := ix.postings[t]
		b = appendString(b, t)
		b = binary.AppendUvarint(b, uint64(len(ps)))
		prev := uint32(0)
		for _, p := range ps {
			b = binary.AppendUvarint(b, uint64(p.doc-prev))
			b = binary.AppendUvarint(b, uint64(p.tf))
			prev = p.doc
		}
	}
	b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
	if err := atomicfile.WriteBytes(path, b); err != nil {
		return fmt.Errorf("retrieval: saving index: %w", err)
	}
	return nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// Open reads an index written by Save.
func Open(path string) (*Index, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("retrieval: index: %w", err)
	}
	ix, err := decodeIndex(data)
	if err != nil {
		return nil, fmt.Errorf("retrieval: index %s: %w", path, err)
	}
	return ix, nil
}

// decoder reads uvarint-framed fields with bounds checks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(format, args...)
	}
}

func (d *decoder) uvarint(what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("truncated or malformed %s", what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a count of items that each take at least min bytes.
func (d *decoder) count(what string, min int) int {
	v := d.uvarint(what)
	if d.err == nil && v > uint64(len(d.b)/min) {
		d.fail("%s %d is more than the %d bytes left can hold", what, v, len(d.b))
		return 0
	}
	return int(v)
}

func (d *decoder) string(what string) string {
	n := d.uvarint(what + " length")
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)) {
		d.fail("%s of %d bytes runs past the end", what, n)
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *decoder) float(what string) float64 {
	if d.err != nil {
		return 0
	}
	if len(d.b) < 8 {
		d.fail("truncated %s", what)
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
	d.b = d.b[8:]
	return v
}

func decodeIndex(data []byte) (*Index, error) {
	if len(data) < len(indexMagic)+4 || string(data[:len(indexMagic)]) != indexMagic {
		return nil, fmt.Errorf("not a troupe BM25 index (build one with `train index`)")
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return nil, fmt.Errorf("checksum mismatch: the file is damaged or incomplete; rebuild it")
	}
	d := &decoder{b: body[len(indexMagic):]}
	ix := &Index{K1: d.float("k1"), B: d.float("b"), postings: map[string][]posting{}}
	if d.err == nil && !(ix.K1 > 0 && ix.B >= 0 && ix.B <= 1) {
		d.fail("parameters k1=%g b=%g are out of range", ix.K1, ix.B)
	}
	nd := d.count("document count", 3)
	if d.err == nil && nd == 0 {
		d.fail("no documents")
	}
	ix.docs = make([]Document, 0, nd)
	ix.lengths = make([]uint32, 0, nd)
	var total float64
	for i := 0; i < nd && d.err == nil; i++ {
		doc := Document{ID: d.string("document id"), Contents: d.string("document contents")}
		l := d.uvarint("document length")
		if l > math.MaxUint32 {
			d.fail("document %d length %d is out of range", i, l)
		}
		ix.docs = append(ix.docs, doc)
		ix.lengths = append(ix.lengths, uint32(l))
		total += float64(l)
	}
	nt := d.count("term count", 3)
	for i := 0; i < nt && d.err == nil; i++ {
		t := d.string("term")
		np := d.count("posting count", 2)
		if d.err == nil && np == 0 {
			d.fail("term %q has no postings", t)
		}
		ps := make([]posting, 0, np)
		doc := uint64(0)
		for j := 0; j < np && d.err == nil; j++ {
			doc += d.uvarint("posting document")
			tf := d.uvarint("posting frequency")
			if d.err == nil && (doc >= uint64(nd) || (j > 0 && doc == uint64(ps[j-1].doc)) || tf == 0 || tf > math.MaxUint32) {
				d.fail("term %q: posting %d (document %d, frequency %d) is out of range", t, j, doc, tf)
			}
			ps = append(ps, posting{doc: uint32(doc), tf: uint32(tf)})
		}
		ix.postings[t] = ps
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d unexpected bytes after the postings", len(d.b))
	}
	if d.err != nil {
		return nil, d.err
	}
	ix.avgLen = total / float64(nd)
	if !(ix.avgLen > 0) {
		return nil, fmt.Errorf("every document is empty")
	}
	return ix, nil
}
