// Rank-based byte-pair encoding of one pre-tokenized piece.
//
// A piece starts as one symbol per byte (the 256 byte tokens); the adjacent
// pair with the lowest merge rank is merged, leftmost first on ties, until no
// adjacent pair has a merge. This is the order Hugging Face's BPE model
// applies merges in (its priority queue pops the lowest (rank, position)).
//
// Two implementations of that one rule: mergeShort keeps symbols in a small
// array and scans it for the best pair (fast for the short pieces of ordinary
// text); mergeLong keeps a linked list and a heap, so a megabyte-long run of
// letters costs O(n log n) instead of O(n²). Tests check they agree.
//
// What this file is not: a trainer (trainmerges.go builds merge lists for tiny
// models), and it has no dropout, unknown token or byte fallback (Load refuses
// models that use them).

package tokenizer

import (
	"container/heap"
	"math"
)

const noMerge = math.MaxUint32

// bpeModel holds the merge table and the whole-piece shortcut.
type bpeModel struct {
	byteID [256]int32 // the token of each single byte

	// merges maps a pair of token ids (left<<32 | right) to the merge's rank
	// (high 32 bits) and the id of the merged token (low 32 bits).
	merges map[uint64]uint64

	// wholeID maps the raw bytes of a vocabulary entry to its id when BPE of
	// those bytes yields exactly that entry, so such pieces skip merging. With
	// ignore_merges every entry is in it (Hugging Face then looks the whole
	// piece up before merging).
	wholeID map[string]int32
}

// shortPiece is the longest piece mergeShort handles; longer ones go to mergeLong.
const shortPiece = 128

// appendPiece appends the ids of one non-empty piece (raw bytes) to dst.
func (m *bpeModel) appendPiece(dst []int, piece string) []int {
	if len(piece) == 1 {
		return append(dst, int(m.byteID[piece[0]]))
	}
	if id, ok := m.wholeID[piece]; ok {
		return append(dst, int(id))
	}
	return m.merge(dst, piece)
}

func (m *bpeModel) merge(dst []int, piece string) []int {
	if len(piece) <= shortPiece {
		return m.mergeShort(dst, piece)
	}
	return m.mergeLong(dst, piece)
}

// pairMerge returns the rank and merged id of the pair (left, right), or
// rank noMerge.
func (m *bpeModel) pairMerge(left, right int32) (rank uint32, merged int32) {
	v, ok := m.merges[uint64(uint32(left))<<32|uint64(uint32(right))]
	if !ok {
		return noMerge, -1
	}
	return uint32(v >> 32), int32(uint32(v))
}

func (m *bpeModel) mergeShort(dst []int, piece string) []int {
	var symBuf [shortPiece]int32
	var rankBuf, mergedBuf [shortPiece]uint32
	n := len(piece)
	sym := symBuf[:n]
	for i := 0; i < n; i++ {
		sym[i] = m.byteID[piece[i]]
	}
	// rank[k], merged[k] describe the pair (sym[k], sym[k+1]).
	rank, merged := rankBuf[:n-1], mergedBuf[:n-1]
	for k := 0; k < n-1; k++ {
		r, id := m.pairMerge(sym[k], sym[k+1])
		rank[k], merged[k] = r, uint32(id)
	}
	for {
		best, bestRank := -1, uint32(noMerge)
		for k, r := range rank {
			if r < bestRank {
				best, bestRank = k, r
			}
		}
		if best < 0 {
			break
		}
		sym[best] = int32(merged[best])
		copy(sym[best+1:], sym[best+2:])
		sym = sym[:len(sym)-1]
		copy(rank[best:], rank[best+1:])
		copy(merged[best:], merged[best+1:])
		rank, merged = rank[:len(rank)-1], merged[:len(merged)-1]
		if best > 0 {
			r, id := m.pairMerge(sym[best-1], sym[best])
			rank[best-1], merged[best-1] = r, uint32(id)
		}
		if best < len(rank) {
			r, id := m.pairMerge(sym[best], sym[best+1])
			rank[best], merged[best] = r, uint32(id)
		}
	}
	for _, id := range sym {
		dst = append(dst, int(id))
	}
	return dst
}

// pairCandidate is a possible merge of the symbol at pos with its right
// neighbour, valid while both still hold left and right.
type pairCandidate struct {
	rank        uint32
	pos         int32
	left, right int32
	merged      int32
}

type candidateHeap []pairCandidate

func (h candidateHeap) Len() int { return len(h) }
func (h candidateHeap) Less(i, j int) bool {
	if h[i].rank != h[j].rank {
		return h[i].rank < h[j].rank
	}
	return h[i].pos < h[j].pos
}
func (h candidateHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *candidateHeap) Push(x any)   { *h = append(*h, x.(pairCandidate)) }
func (h *candidateHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (m *bpeModel) mergeLong(dst []int, piece string) []int {
	n := len(piece)
	sym := make([]int32, n)
	next := make([]int32, n) // -1 at the end
	prev := make([]int32, n) // -1 at the start
	for i := 0; i < n; i++ {
		sym[i] = m.byteID[piece[i]]
		next[i], prev[i] = int32(i+1), int32(i-1)
	}
	next[n-1] = -1
	h := make(candidateHeap, 0, n)
	push := func(pos int32) {
		nx := next[pos]
		if nx < 0 {
			return
		}
		if r, id := m.pairMerge(sym[pos], sym[nx]); r != noMerge {
			heap.Push(&h, pairCandidate{rank: r, pos: pos, left: sym[pos], right: sym[nx], merged: id})
		}
	}
	for i := 0; i < n-1; i++ {
		r, id := m.pairMerge(sym[i], sym[i+1])
		if r != noMerge {
			h = append(h, pairCandidate{rank: r, pos: int32(i), left: sym[i], right: sym[i+1], merged: id})
		}
	}
	heap.Init(&h)
	for h.Len() > 0 {
		c := heap.Pop(&h).(pairCandidate)
		nx := next[c.pos]
		if sym[c.pos] != c.left || nx < 0 || sym[nx] != c.right {
			continue // stale: one side was merged into something else
		}
		sym[c.pos] = c.merged
		sym[nx] = -1
		next[c.pos] = next[nx]
		if next[nx] >= 0 {
			prev[next[nx]] = c.pos
		}
		if p := prev[c.pos]; p >= 0 {
			push(p)
		}
		push(c.pos)
	}
	for i := int32(0); i >= 0; i = next[i] {
		dst = append(dst, int(sym[i]))
	}
	return dst
}
