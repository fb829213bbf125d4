// limits.go — what one retrieval server may hold at once: the bounds on a
// request, on its answer, on the requests being answered and on the open
// connections, the timeouts that drop slow or stalled peers, and the memory
// those bounds add up to.
//
// Each limit has a `train serve` flag (Flag names it); every refusal names
// the limit and its flag, so whoever hits one knows what to send instead or
// what to raise.
//
// What it deliberately is not: a rate limiter per client, or a bound on the
// retriever's own working memory (BM25 keeps a score per matching document
// of each query being answered; MaxInFlight bounds how many at once).
package retrieval

import (
	"fmt"
	"time"
	"unsafe"
)

// MaxTopK is the largest topk a troupe config may ask of a retriever
// (env.search.retriever.topk); a server's own bound is Limits.MaxTopK.
const MaxTopK = 1000

// DefaultTopK is the topk of a request that names none, as in Search-R1's
// retrieval server (its --topk default).
const DefaultTopK = 3

// maxHeaderBytes bounds a request's header block (Authorization included).
const maxHeaderBytes = 64 << 10

// hitsPerBatch is how many hits one call of the retriever may return at
// most: the queries of a request are retrieved in batches of
// max(1, hitsPerBatch/topk) and each batch is encoded before the next, so the
// hits held at once stay small whatever the request asks.
const hitsPerBatch = 4096

// Limits bound a server. The zero value of a field is not "unlimited":
// Validate refuses it; start from DefaultLimits.
type Limits struct {
	MaxBodyBytes      int64         // largest request body
	MaxQueries        int           // queries in one request
	MaxTopK           int           // largest topk a request may ask
	MaxResponseBytes  int64         // largest answer; a larger one is refused, never sent in part
	MaxInFlight       int           // requests being answered at once (retrieval and encoding)
	QueueTimeout      time.Duration // how long a request waits for one of those slots before a 503
	MaxConns          int           // open connections; one more is answered 503 and closed
	ReadHeaderTimeout time.Duration // to read a request's headers
	ReadTimeout       time.Duration // to read a whole request, headers and body
	WriteTimeout      time.Duration // to write an answer once it is ready (a client that stops reading is dropped)
	IdleTimeout       time.Duration // a kept-alive connection with no request is closed after this
}

// DefaultLimits suit a trainer sending a batch of a few thousand short
// queries with topk up to 100 over a corpus of Wikipedia-sized passages
// (~700 bytes): a Search-R1 batch of 2,560 queries × 3 passages answers in
// about 6 MB. Their worst case holds about 457 MiB (MemoryBound).
func DefaultLimits() Limits {
	return Limits{
		MaxBodyBytes:      1 << 20,
		MaxQueries:        4096,
		MaxTopK:           100,
		MaxResponseBytes:  16 << 20,
		MaxInFlight:       8,
		QueueTimeout:      5 * time.Second,
		MaxConns:          64,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       20 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       30 * time.Second,
	}
}

// Flag names the `train serve` flag of each limit, by Limits field.
var Flag = map[string]string{
	"MaxBodyBytes":      "--max-body-bytes",
	"MaxQueries":        "--max-queries",
	"MaxTopK":           "--max-topk",
	"MaxResponseBytes":  "--max-response-bytes",
	"MaxInFlight":       "--max-inflight",
	"QueueTimeout":      "--queue-timeout",
	"MaxConns":          "--max-conns",
	"ReadHeaderTimeout": "--read-header-timeout",
	"ReadTimeout":       "--read-timeout",
	"WriteTimeout":      "--write-timeout",
	"IdleTimeout":       "--idle-timeout",
}

// Validate refuses a limit that is not positive or is past what a server
// can honour, naming the flag.
func (l Limits) Validate() error {
	ints := []struct {
		field     string
		v, lo, hi int64
	}{
		{"MaxBodyBytes", l.MaxBodyBytes, 64, 1 << 30},
		{"MaxQueries", int64(l.MaxQueries), 1, 1 << 20},
		{"MaxTopK", int64(l.MaxTopK), 1, MaxTopK},
		{"MaxResponseBytes", l.MaxResponseBytes, 1024, 1 << 30},
		{"MaxInFlight", int64(l.MaxInFlight), 1, 4096},
		{"MaxConns", int64(l.MaxConns), 1, 1 << 16},
	}
	for _, c := range ints {
		if c.v < c.lo || c.v > c.hi {
			return fmt.Errorf("retrieval: %s: must be in [%d, %d], got %d", Flag[c.field], c.lo, c.hi, c.v)
		}
	}
	for _, c := range []struct {
		field string
		v     time.Duration
	}{
		{"QueueTimeout", l.QueueTimeout}, {"ReadHeaderTimeout", l.ReadHeaderTimeout}, {"ReadTimeout", l.ReadTimeout},
		{"WriteTimeout", l.WriteTimeout}, {"IdleTimeout", l.IdleTimeout},
	} {
		if c.v <= 0 {
			return fmt.Errorf("retrieval: %s: must be > 0 (e.g. 10s), got %v", Flag[c.field], c.v)
		}
	}
	if l.ReadHeaderTimeout > l.ReadTimeout {
		return fmt.Errorf("retrieval: %s (%v) is longer than %s (%v), which covers the headers too; lower the first or raise the second",
			Flag["ReadHeaderTimeout"], l.ReadHeaderTimeout, Flag["ReadTimeout"], l.ReadTimeout)
	}
	return nil
}

// Per-connection memory besides the request: bufio reader and writer (4 KiB
// each), the goroutine's stack and the runtime's bookkeeping, and a refusal
// past the cap being written and drained (listen.go), generously.
const connOverhead = 64 << 10

// MemoryBound is the most the server's requests hold at once, in bytes, by
// construction of the limits:
//
//	MaxConns    × (header block + connection overhead + 3 × MaxBodyBytes)
//	MaxInFlight × (2 × MaxResponseBytes + one batch of hits)
//
// A body is read into one buffer (up to twice its size while it grows) and
// decoded into the queries (about its size again); an answer is built in a
// buffer that never grows past MaxResponseBytes (twice that while it is
// copied into a larger one). Not counted: the index, the retriever's own
// working memory per query, and the garbage collector's headroom (Go lets
// the heap reach twice the live memory before collecting, GOGC=100).
func (l Limits) MemoryBound() int64 {
	perConn := int64(maxHeaderBytes) + connOverhead + 3*l.MaxBodyBytes
	perRequest := 2*l.MaxResponseBytes + hitsPerBatch*int64(unsafe.Sizeof(Hit{}))
	return int64(l.MaxConns)*perConn + int64(l.MaxInFlight)*perRequest
}
