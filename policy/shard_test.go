package policy

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// The bucket layout: every element of every weight lies in exactly one
// bucket of its unit, and exactly one rank owns it, at the position the
// bucket's flat layout gives it; buckets hold at most maxElems, chunks are
// equal and cover the bucket. Sizes, units, bucket bounds and W vary,
// including buckets smaller than W (ranks that own only padding).
func TestLayoutBuckets(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		world := 1 + rng.IntN(8)
		maxElems := int64(1 + rng.IntN(40))
		n := 1 + rng.IntN(12)
		sizes := make([]int64, n)
		for i := range sizes {
			sizes[i] = int64(1 + rng.IntN(60))
		}
		units := make([][]int, 1+rng.IntN(4))
		for i := range sizes {
			u := rng.IntN(len(units))
			units[u] = append(units[u], i)
		}
		what := fmt.Sprintf("trial %d: W=%d, buckets of %d, sizes %v, units %v", trial, world, maxElems, sizes, units)
		owner := make([][]int, n) // weight → element → owning rank (−1: none yet)
		for i := range owner {
			owner[i] = make([]int, sizes[i])
			for e := range owner[i] {
				owner[i][e] = -1
			}
		}
		for rank := range world {
			byUnit, all := layoutBuckets(sizes, units, maxElems, rank, world)
			for u, bs := range byUnit {
				for _, b := range bs {
					if b.numel > maxElems || b.chunk*int64(world) < b.numel || (b.chunk-1)*int64(world) >= b.numel {
						t.Fatalf("%s: bucket of %d elements, chunk %d", what, b.numel, b.chunk)
					}
					at := int64(0)
					for _, p := range b.pieces {
						if p.at != at || !slices.Contains(units[u], p.param) {
							t.Fatalf("%s: piece %+v of unit %d", what, p, u)
						}
						at += p.n
					}
					for _, p := range b.own {
						if p.at < 0 || p.at+p.n > b.chunk {
							t.Fatalf("%s: own piece %+v outside the chunk of %d", what, p, b.chunk)
						}
						for k := range p.n {
							e := p.from + k
							if owner[p.param][e] != -1 {
								t.Fatalf("%s: element %d of weight %d owned by ranks %d and %d", what, e, p.param, owner[p.param][e], rank)
							}
							owner[p.param][e] = rank
							// the same element's place in the whole bucket
							if !inBucket(b, p.param, e, int64(rank)*b.chunk+p.at+k) {
								t.Fatalf("%s: rank %d holds element %d of weight %d at the wrong place", what, rank, e, p.param)
							}
						}
					}
				}
			}
			if len(all) == 0 {
				t.Fatalf("%s: no buckets", what)
			}
		}
		for i := range owner {
			for e, r := range owner[i] {
				if r == -1 {
					t.Fatalf("%s: element %d of weight %d has no owner", what, e, i)
				}
			}
		}
	}
}

// inBucket says whether bucket b's flat position at holds element e of
// weight i.
func inBucket(b *shardBucket, i int, e, at int64) bool {
	for _, p := range b.pieces {
		if p.param == i && e >= p.from && e < p.from+p.n {
			return p.at+e-p.from == at
		}
	}
	return false
}
