package advantage

// normalise.go — the group normalisation every group estimator shares
// (algorithms.md §1):
//
//	A = (s − mean_g) / (std_g + ε)     or, without std,  A = s − mean_g
//
// with the sample (N−1) or population (N) std; an all-equal group gets
// exactly 0; a singleton group gets s/(1+ε) (raw: mean 0, std 1, as the
// Dr. MAS code does) or 0 (zero, as PettingLLMs does).
//
// What this file is not: MAGRPO's baselines (magrpo.go), which clamp the
// population std at 1e-6 instead of adding ε.
//
// Departure from the reference code: the statistics are summed over the
// scores in sorted order, so the advantages are bit-for-bit the same whatever
// order the rows arrive in (torch sums in storage order).

import (
	"math"
	"slices"
)

// groupStats describes one normalised group.
type groupStats struct {
	mean, std    float64 // of the scores; std as configured, 0 for a singleton
	singleton    bool
	zeroVariance bool // two or more samples, all equal
}

// normaliseGroup returns the advantage of each score of one group.
func normaliseGroup(scores []float64, opt Options) ([]float64, groupStats) {
	adv := make([]float64, len(scores))
	switch {
	case len(scores) == 1:
		st := groupStats{mean: scores[0], singleton: true}
		if opt.Singleton == SingletonRaw {
			adv[0] = scores[0]
			if opt.DivideByStd {
				adv[0] = scores[0] / (1 + opt.Epsilon)
			}
		}
		return adv, st
	case allEqual(scores):
		return adv, groupStats{mean: scores[0], zeroVariance: true}
	}
	m := orderFreeMean(scores)
	sd := orderFreeStd(scores, m, opt.Std)
	for i, s := range scores {
		adv[i] = s - m
		if opt.DivideByStd {
			adv[i] /= sd + opt.Epsilon
		}
	}
	return adv, groupStats{mean: m, std: sd}
}

func allEqual(xs []float64) bool {
	for _, x := range xs[1:] {
		if x != xs[0] {
			return false
		}
	}
	return true
}

// orderFreeSum is the sum of xs in ascending order, so that it does not
// depend on the order of xs.
func orderFreeSum(xs []float64) float64 {
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	var sum float64
	for _, x := range sorted {
		sum += x
	}
	return sum
}

// orderFreeMean is orderFreeSum over len(xs); 0 for no values.
func orderFreeMean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return orderFreeSum(xs) / float64(len(xs))
}

// orderFreeStd is the sample or population std of xs around mean, summed in
// ascending order of the squared deviations. It returns 0 when the divisor
// would be zero (one sample std, or no values).
func orderFreeStd(xs []float64, mean float64, kind string) float64 {
	n := float64(len(xs))
	if kind == StdSample {
		n--
	}
	if n <= 0 {
		return 0
	}
	sq := make([]float64, len(xs))
	for i, x := range xs {
		d := x - mean
		sq[i] = d * d
	}
	return math.Sqrt(orderFreeSum(sq) / n)
}
