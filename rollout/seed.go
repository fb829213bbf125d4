// seed.go — deterministic seeds and shuffles for rollouts and data order.
//
// What it is: SplitMix64 for deriving independent seeds from (seed, counter)
// pairs, and a Fisher–Yates shuffle driven by it. Written out here rather
// than taken from math/rand so the streams are fixed by this file, not by
// the Go release: a checkpoint restored under a newer Go must replay the
// same data order and the same per-call generation seeds.
package rollout

// SplitMix64 advances state and returns the next output of Steele, Lea and
// Flood's SplitMix64 generator.
func SplitMix64(state *uint64) uint64 {
	*state += 0x9e3779b97f4a7c15
	z := *state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// DeriveSeed mixes a base seed with a sequence of indices (a call counter, a
// split, a task number…) into a new, well-scrambled seed. Distinct index
// sequences give independent-looking seeds.
func DeriveSeed(base uint64, indices ...uint64) uint64 {
	state := base
	out := SplitMix64(&state)
	for _, ix := range indices {
		state = out ^ (ix * 0xd1b54a32d192ed03)
		out = SplitMix64(&state)
	}
	return out
}

// Rand is a small deterministic generator (SplitMix64) with the few draws
// rollout and the procedural environments need.
type Rand struct{ state uint64 }

// NewRand seeds a generator.
func NewRand(seed uint64) *Rand { return &Rand{state: seed} }

// Uint64 returns 64 random bits.
func (r *Rand) Uint64() uint64 { return SplitMix64(&r.state) }

// IntN returns a uniform integer in [0, n); n must be > 0.
func (r *Rand) IntN(n int) int {
	if n <= 0 {
		panic("rollout: Rand.IntN: n must be > 0")
	}
	bound := uint64(n)
	limit := -bound % bound // 2^64 mod n: reject the incomplete top range
	for {
		x := r.Uint64()
		if x >= limit {
			return int(x % bound)
		}
	}
}

// Range returns a uniform integer in [lo, hi].
func (r *Rand) Range(lo, hi int) int { return lo + r.IntN(hi-lo+1) }

// Float64 returns a uniform float in [0, 1).
func (r *Rand) Float64() float64 { return float64(r.Uint64()>>11) / (1 << 53) }

// Perm returns a uniformly random permutation of 0..n-1 (Fisher–Yates).
func (r *Rand) Perm(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	for i := n - 1; i > 0; i-- {
		j := r.IntN(i + 1)
		p[i], p[j] = p[j], p[i]
	}
	return p
}
