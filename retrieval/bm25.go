// bm25.go — an in-memory Okapi BM25 index over a passage corpus.
//
// What it is: an inverted index (term → postings of (document, term
// frequency)) with document lengths, scored by Okapi BM25:
//
//	score(q, d) = Σ_{t ∈ q} idf(t) · tf(t,d)·(k1+1) / (tf(t,d) + k1·(1 − b + b·|d|/avgdl))
//	idf(t)      = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))
//
// with the Lucene/Pyserini defaults k1 = 0.9, b = 0.4 (the BM25 baseline of
// Search-R1's retrievers). Text is lower-cased and split on anything that is
// not a letter or a digit; there is no stemming and no stop-word list, so
// results are reproducible from the corpus alone.
//
// What it deliberately is not: a dense retriever or an on-disk index. It
// holds everything in memory, which fits corpora of up to a few million
// passages; for Wikipedia-scale e5/FAISS retrieval point troupe at a
// Search-R1 retrieval server instead (client.go).
package retrieval

import (
	"container/heap"
	"fmt"
	"math"
	"strings"
	"unicode"
)

// Document is one passage of a corpus, in Search-R1's layout: the first
// line of Contents is the title.
type Document struct {
	ID       string `json:"id"`
	Contents string `json:"contents"`
}

// Title returns the first line of the contents.
func (d Document) Title() string {
	t, _, _ := strings.Cut(d.Contents, "\n")
	return strings.TrimSpace(t)
}

// Text returns the contents after the title line.
func (d Document) Text() string {
	_, rest, ok := strings.Cut(d.Contents, "\n")
	if !ok {
		return ""
	}
	return strings.TrimSpace(rest)
}

// Hit is one retrieved document and its score.
type Hit struct {
	Document Document `json:"document"`
	Score    float64  `json:"score"`
}

// BM25 parameters.
const (
	DefaultK1 = 0.9
	DefaultB  = 0.4
)

type posting struct {
	doc uint32 // index into docs
	tf  uint32 // term frequency in the document
}

// Index is a BM25 index. Search is safe for concurrent use; the index is
// immutable once built.
type Index struct {
	K1, B    float64
	docs     []Document
	lengths  []uint32             // tokens per document
	avgLen   float64              // mean of lengths
	postings map[string][]posting // sorted by doc
}

// Tokens splits text into lower-case runs of letters and digits.
func Tokens(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// Build indexes docs. Document ids must be unique and non-empty.
func Build(docs []Document) (*Index, error) {
	if len(docs) == 0 {
		return nil, fmt.Errorf("retrieval: the corpus is empty; give at least one document")
	}
	if len(docs) > math.MaxUint32 {
		return nil, fmt.Errorf("retrieval: %d documents is more than this index holds (%d)", len(docs), uint32(math.MaxUint32))
	}
	ix := &Index{K1: DefaultK1, B: DefaultB, docs: docs, lengths: make([]uint32, len(docs)), postings: map[string][]posting{}}
	seen := make(map[string]int, len(docs))
	var total float64
	for i, d := range docs {
		if d.ID == "" {
			return nil, fmt.Errorf("retrieval: document %d has no id", i)
		}
		if j, dup := seen[d.ID]; dup {
			return nil, fmt.Errorf("retrieval: documents %d and %d share the id %q; ids must be unique", j, i, d.ID)
		}
		seen[d.ID] = i
		tf := map[string]uint32{}
		toks := Tokens(d.Contents)
		for _, t := range toks {
			tf[t]++
		}
		for t, n := range tf {
			ix.postings[t] = append(ix.postings[t], posting{doc: uint32(i), tf: n})
		}
		ix.lengths[i] = uint32(len(toks))
		total += float64(len(toks))
	}
	if total == 0 {
		return nil, fmt.Errorf("retrieval: every document of the corpus is empty")
	}
	ix.avgLen = total / float64(len(docs))
	return ix, nil
}

// Len is the number of documents.
func (ix *Index) Len() int { return len(ix.docs) }

// Doc returns document i.
func (ix *Index) Doc(i int) Document { return ix.docs[i] }

func (ix *Index) idf(df int) float64 {
	n := float64(len(ix.docs))
	return math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5))
}

// Search returns the k best documents for a query, best first; ties go to
// the earlier document. A query with no known term returns no hits.
func (ix *Index) Search(query string, k int) []Hit {
	if k <= 0 {
		return nil
	}
	scores := map[uint32]float64{}
	for _, t := range Tokens(query) { // a repeated query term counts again, as in Lucene
		ps := ix.postings[t]
		if len(ps) == 0 {
			continue
		}
		idf := ix.idf(len(ps))
		for _, p := range ps {
			tf := float64(p.tf)
			norm := ix.K1 * (1 - ix.B + ix.B*float64(ix.lengths[p.doc])/ix.avgLen)
			scores[p.doc] += idf * tf * (ix.K1 + 1) / (tf + norm)
		}
	}
	// keep the k best in a min-heap (worst on top): O(matches · log k), not a
	// sort of every matching document — common terms match most of a corpus
	h := &topK{scores: scores}
	for d := range scores {
		switch {
		case len(h.docs) < k:
			heap.Push(h, d)
		case h.better(d, h.docs[0]):
			h.docs[0] = d
			heap.Fix(h, 0)
		}
	}
	best := make([]uint32, len(h.docs))
	for i := len(best) - 1; i >= 0; i-- {
		best[i] = heap.Pop(h).(uint32)
	}
	hits := make([]Hit, len(best))
	for i, d := range best {
		hits[i] = Hit{Document: ix.docs[d], Score: scores[d]}
	}
	return hits
}

// topK is a min-heap of documents by (score, then earlier document first):
// its root is the worst of the kept documents.
type topK struct {
	scores map[uint32]float64
	docs   []uint32
}

// better reports whether a ranks above b: a higher score, or the same score
// and an earlier document.
func (h *topK) better(a, b uint32) bool {
	if sa, sb := h.scores[a], h.scores[b]; sa != sb {
		return sa > sb
	}
	return a < b
}

func (h *topK) Len() int           { return len(h.docs) }
func (h *topK) Less(i, j int) bool { return h.better(h.docs[j], h.docs[i]) }
func (h *topK) Swap(i, j int)      { h.docs[i], h.docs[j] = h.docs[j], h.docs[i] }
func (h *topK) Push(x any)         { h.docs = append(h.docs, x.(uint32)) }
func (h *topK) Pop() any {
	d := h.docs[len(h.docs)-1]
	h.docs = h.docs[:len(h.docs)-1]
	return d
}

// Retrieve answers a batch of queries; it makes Index a Retriever.
func (ix *Index) Retrieve(queries []string, k int) ([][]Hit, error) {
	out := make([][]Hit, len(queries))
	for i, q := range queries {
		out[i] = ix.Search(q, k)
	}
	return out, nil
}

// Retriever answers batches of queries with the top k documents of each.
// Implementations must be safe for concurrent use.
type Retriever interface {
	Retrieve(queries []string, k int) ([][]Hit, error)
}
