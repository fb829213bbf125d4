// TrainMerges: learn a short BPE merge list from a small corpus, for the
// vocabularies WriteByteLevel writes for tiny models.
//
// The classic greedy procedure (Sennrich et al., 2016): cut the NFC text into
// pieces with the Qwen split pattern, start from bytes, and repeatedly merge
// the most frequent adjacent pair inside pieces. Ties go to the pair whose
// left, then right, token sorts first, so the result is deterministic.
//
// What this file is not: a production trainer. Each merge recounts all
// pairs (O(merges × corpus)); fine for the kilobytes a tiny model's demo
// uses, far too slow for a real vocabulary.

package tokenizer

import (
	"golang.org/x/text/unicode/norm"
)

// TrainMerges returns up to n merges learned from texts, stopping early when
// no pair occurs twice. Added tokens written in texts are not treated
// specially; leave them out.
func TrainMerges(texts []string, n int) []Merge {
	counts := map[string]int{}
	for _, s := range texts {
		splitPieces(norm.NFC.String(s), func(p string) { counts[p]++ })
	}
	type word struct {
		symbols []string
		count   int
	}
	words := make([]word, 0, len(counts))
	for p, c := range counts {
		syms := make([]string, len(p))
		for i := 0; i < len(p); i++ {
			syms[i] = p[i : i+1]
		}
		words = append(words, word{syms, c})
	}

	var merges []Merge
	for len(merges) < n {
		pairCount := map[Merge]int{}
		for _, w := range words {
			for i := 0; i+1 < len(w.symbols); i++ {
				pairCount[Merge{w.symbols[i], w.symbols[i+1]}] += w.count
			}
		}
		var best Merge
		bestCount := 1
		for p, c := range pairCount {
			if c > bestCount || c == bestCount && c > 1 && (p.Left < best.Left || p.Left == best.Left && p.Right < best.Right) {
				best, bestCount = p, c
			}
		}
		if bestCount < 2 {
			break
		}
		merges = append(merges, best)
		for wi := range words {
			syms := words[wi].symbols
			out := syms[:0]
			for i := 0; i < len(syms); i++ {
				if i+1 < len(syms) && syms[i] == best.Left && syms[i+1] == best.Right {
					out = append(out, best.Left+best.Right)
					i++
					continue
				}
				out = append(out, syms[i])
			}
			words[wi].symbols = out
		}
	}
	return merges
}
