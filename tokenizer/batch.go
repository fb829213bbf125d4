// EncodeBatch: Encode over many texts on all CPUs.
//
// Workers take texts one at a time from a shared counter, so one long text
// does not hold up a fixed share of the batch. Results keep the input order.
// Small batches (under batchSerialBytes in total) are encoded on the calling
// goroutine: starting workers would cost more than it saves.

package tokenizer

import (
	"runtime"
	"sync"
	"sync/atomic"
)

const batchSerialBytes = 16 << 10

// EncodeBatch returns Encode(texts[i]) for every i, encoding in parallel on
// up to GOMAXPROCS goroutines.
func (t *Tokenizer) EncodeBatch(texts []string) [][]int {
	out := make([][]int, len(texts))
	total := 0
	for _, s := range texts {
		total += len(s)
	}
	workers := min(runtime.GOMAXPROCS(0), len(texts))
	if workers <= 1 || total < batchSerialBytes {
		for i, s := range texts {
			out[i] = t.Encode(s)
		}
		return out
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(texts) {
					return
				}
				out[i] = t.Encode(texts[i])
			}
		}()
	}
	wg.Wait()
	return out
}
