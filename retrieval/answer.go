// answer.go — building a /retrieve answer inside its byte budget.
//
// What it is: the queries are retrieved a batch at a time and every hit is
// encoded into one buffer whose capacity never passes the budget
// (Limits.MaxResponseBytes); the hit that would pass it stops the answer
// with errAnswerTooLarge, before anything is sent, so a client gets the
// whole answer or a refusal, never a huge body or a truncated one. The
// bytes are those of encoding/json with HTML escaping off, as before:
//
//	{"result": [[{"document": {"id": …, "contents": …}, "score": s}, …], …]}
//
// (or bare documents without return_scores), in the compact form
// {"result":[[…]]} plus a final newline.
//
// What it deliberately is not: streaming. The answer's size must be known
// before its status line, so it is built first and sent with a
// Content-Length.
package retrieval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
)

// errAnswerTooLarge: the answer would pass its budget.
var errAnswerTooLarge = errors.New("the answer would pass its byte budget")

// boundedBuffer is a byte buffer that refuses to grow past max.
type boundedBuffer struct {
	b   []byte
	max int
}

func (w *boundedBuffer) append(p []byte) error {
	need := len(w.b) + len(p)
	if need > w.max {
		return errAnswerTooLarge
	}
	if need > cap(w.b) {
		// double, but never past the budget: append's own growth could
		// reserve up to twice it
		next := make([]byte, len(w.b), min(max(2*cap(w.b), need, 4096), w.max))
		copy(next, w.b)
		w.b = next
	}
	w.b = append(w.b, p...)
	return nil
}

// answerBuilder encodes one answer.
type answerBuilder struct {
	out     boundedBuffer
	scratch bytes.Buffer // one value's encoding
	enc     *json.Encoder
}

func newAnswerBuilder(budget int64) *answerBuilder {
	a := &answerBuilder{out: boundedBuffer{max: int(budget)}}
	a.enc = json.NewEncoder(&a.scratch)
	a.enc.SetEscapeHTML(false)
	return a
}

func (a *answerBuilder) raw(s string) error { return a.out.append([]byte(s)) }

// value appends v's JSON without the encoder's trailing newline.
func (a *answerBuilder) value(v any) error {
	a.scratch.Reset()
	if err := a.enc.Encode(v); err != nil {
		return err
	}
	return a.out.append(bytes.TrimSuffix(a.scratch.Bytes(), []byte("\n")))
}

// buildAnswer retrieves the top k of each query from r and encodes the
// answer, stopping at the first batch whose hits do not fit in budget bytes
// (errAnswerTooLarge) or when ctx ends (the client went away).
func buildAnswer(ctx context.Context, r Retriever, queries []string, k int, scores bool, budget int64) ([]byte, error) {
	a := newAnswerBuilder(budget)
	if err := a.raw(`{"result":[`); err != nil {
		return nil, err
	}
	per := max(1, hitsPerBatch/k)
	for lo := 0; lo < len(queries); lo += per {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		batch := queries[lo:min(lo+per, len(queries))]
		hits, err := r.Retrieve(batch, k)
		if err != nil {
			return nil, err
		}
		if len(hits) != len(batch) {
			return nil, errors.New("the retriever answered a different number of queries than it was asked")
		}
		for i, hs := range hits {
			sep := "["
			if lo+i > 0 {
				sep = ",["
			}
			if err := a.raw(sep); err != nil {
				return nil, err
			}
			for j, h := range hs {
				if j > 0 {
					if err := a.raw(","); err != nil {
						return nil, err
					}
				}
				var v any = h
				if !scores {
					v = h.Document
				}
				if err := a.value(v); err != nil {
					return nil, err
				}
			}
			if err := a.raw("]"); err != nil {
				return nil, err
			}
		}
	}
	if err := a.raw("]}\n"); err != nil {
		return nil, err
	}
	return a.out.b, nil
}
