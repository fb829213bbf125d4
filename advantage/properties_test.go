package advantage

// Property tests over random row sets: normalised groups have mean 0 and the
// configured std 1 (up to ε); results do not depend on row order; scaling
// every reward by c > 0 leaves normalised advantages unchanged.

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

var testAgents = []string{"solver", "verifier", "search"}

// randomRows builds a batch of prompts × trajectories with 1–4 rows each,
// agents cycling, rewards in [−1, 1] (some rounded to 0/1 to create ties and
// all-equal groups), and for tree estimators K candidates per (env, turn,
// agent) state.
func randomRows(rng *rand.Rand, prompts, trajs int) []Row {
	var rows []Row
	for p := range prompts {
		for tr := range trajs {
			n := 1 + rng.IntN(4)
			for turn := range n {
				r := 2*rng.Float64() - 1
				if rng.IntN(4) == 0 {
					r = math.Round(r)
				}
				rows = append(rows, Row{
					Prompt:    p,
					Traj:      tr,
					Agent:     testAgents[(turn+rng.IntN(2))%len(testAgents)],
					Turn:      turn,
					Env:       rng.IntN(2),
					Candidate: tr, // trajectories act as the K candidates of each state
					Reward:    r,
				})
			}
		}
	}
	return rows
}

// groupEstimators are the estimators whose groups are normalised by §1.
var groupEstimators = []string{nameGRPO, nameGRPOStep, nameDrMAS, nameATGRPO}

// sampleAdvantages returns the advantage of each sample of a group: one value
// per trajectory for grpo, one per row otherwise.
func sampleAdvantages(name string, rows []Row, res Result, g Group) []float64 {
	if name != nameGRPO {
		out := make([]float64, len(g.Rows))
		for j, i := range g.Rows {
			out[j] = res.Advantages[i]
		}
		return out
	}
	seen := map[int]bool{}
	var out []float64
	for _, i := range g.Rows {
		if !seen[rows[i].Traj] {
			seen[rows[i].Traj] = true
			out = append(out, res.Advantages[i])
		}
	}
	return out
}

func TestNormalisedGroupsHaveMeanZeroStdOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, std := range []string{StdSample, StdPopulation} {
		opt := DefaultOptions()
		opt.Std = std
		for _, name := range groupEstimators {
			checked := 0
			for range 20 {
				rows := randomRows(rng, 4, 6)
				res := mustCompute(t, name, opt, rows)
				for _, g := range res.Groups {
					if g.Singleton || g.ZeroVariance {
						continue
					}
					adv := sampleAdvantages(name, rows, res, g)
					if len(adv) != g.Samples {
						t.Fatalf("%s %s: %d sample advantages, group says %d samples", name, g.Label, len(adv), g.Samples)
					}
					m := naiveMean(adv)
					sd := naiveStd(adv, std)
					// With std s the advantages' std is s/(s+ε), i.e. 1 up to ε/s.
					tol := 1e-9 + 2*opt.Epsilon/g.Std
					if math.Abs(m) > 1e-9 || math.Abs(sd-1) > tol {
						t.Errorf("%s %s std=%s: advantages %v have mean %g, std %g; want 0 and 1 (tol %g)", name, g.Label, std, adv, m, sd, tol)
					}
					checked++
				}
			}
			if checked < 20 {
				t.Errorf("%s: only %d non-degenerate groups checked", name, checked)
			}
		}
	}
}

// naiveMean and naiveStd are the textbook formulas, independent of the
// package's sorted-sum helpers.
func naiveMean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func naiveStd(xs []float64, kind string) float64 {
	m := naiveMean(xs)
	var s float64
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	n := float64(len(xs))
	if kind == StdSample {
		n--
	}
	return math.Sqrt(s / n)
}

func TestAllEqualGroupsAreExactlyZero(t *testing.T) {
	// 0.1 three times: the float mean is not exactly 0.1, yet A must be 0.
	rows := []Row{{Traj: 0, Reward: 0.1}, {Traj: 1, Reward: 0.1}, {Traj: 2, Reward: 0.1}}
	for i := range rows {
		rows[i].Candidate = i
	}
	for _, name := range Names() {
		opt := DefaultOptions()
		if name == nameMAGRPO {
			for i := range rows {
				rows[i].Joint = i + 1
			}
			opt.MAGRPO.Normalize = true
		}
		res := mustCompute(t, name, opt, rows)
		for i, a := range res.Advantages {
			if a != 0 {
				t.Errorf("%s: row %d: advantage %g, want exactly 0", name, i, a)
			}
		}
	}
}

func TestResultsDoNotDependOnRowOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, name := range Names() {
		for trial := range 10 {
			var rows []Row
			if name == nameMAGRPO {
				rows = randomTree(rng, 3, []string{"a", "b"}, 3, 2, JointAligned)
			} else {
				rows = randomRows(rng, 3, 5)
			}
			opt := DefaultOptions()
			if trial%2 == 1 {
				opt.Filter = FilterOptions{ZeroVariance: true, LowestMeanFraction: 0.3}
			}
			base := mustCompute(t, name, opt, rows)
			perm := rng.Perm(len(rows))
			shuffled := make([]Row, len(rows))
			for newIdx, oldIdx := range perm {
				shuffled[newIdx] = rows[oldIdx]
			}
			got := mustCompute(t, name, opt, shuffled)
			for newIdx, oldIdx := range perm {
				if got.Advantages[newIdx] != base.Advantages[oldIdx] || got.Train[newIdx] != base.Train[oldIdx] {
					t.Fatalf("%s: row %d: advantage %v train %v after shuffling, %v %v before",
						name, oldIdx, got.Advantages[newIdx], got.Train[newIdx], base.Advantages[oldIdx], base.Train[oldIdx])
				}
			}
			if len(got.Groups) != len(base.Groups) {
				t.Fatalf("%s: %d groups after shuffling, %d before", name, len(got.Groups), len(base.Groups))
			}
			for g := range base.Groups {
				a, b := base.Groups[g], got.Groups[g]
				mapped := make([]int, len(b.Rows))
				for j, i := range b.Rows {
					mapped[j] = perm[i]
				}
				slices.Sort(mapped)
				if a.Label != b.Label || a.Mean != b.Mean || a.Std != b.Std || a.Dropped != b.Dropped || !slices.Equal(a.Rows, mapped) {
					t.Fatalf("%s: group %d differs after shuffling: %+v vs %+v", name, g, a, b)
				}
				if a.Best >= 0 && perm[b.Best] != a.Best {
					t.Fatalf("%s: group %s: best row %d after shuffling, %d before", name, a.Label, perm[b.Best], a.Best)
				}
			}
			da, db := base.Diagnostics, got.Diagnostics
			if da.GlobalMean != db.GlobalMean || da.AdvantageStd != db.AdvantageStd || !slices.Equal(da.Agents, db.Agents) {
				t.Fatalf("%s: diagnostics differ after shuffling:\n%+v\n%+v", name, da, db)
			}
		}
	}
}

func TestScalingRewardsLeavesNormalisedAdvantagesUnchanged(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, name := range append(slices.Clone(groupEstimators), nameMAGRPO) {
		opt := DefaultOptions()
		// A raw singleton keeps its (scaled) score, so it is left out here.
		opt.Singleton = SingletonZero
		opt.MAGRPO.Normalize = true
		opt.MAGRPO.Joint = JointCross
		for range 10 {
			var rows []Row
			if name == nameMAGRPO {
				rows = randomTree(rng, 2, []string{"a", "b"}, 4, 2, JointCross)
			} else {
				rows = randomRows(rng, 3, 5)
			}
			base := mustCompute(t, name, opt, rows)
			for _, c := range []float64{0.05, 3, 1000} {
				scaled := slices.Clone(rows)
				for i := range scaled {
					scaled[i].Reward *= c
				}
				got := mustCompute(t, name, opt, scaled)
				for _, g := range base.Groups {
					// (cs − cμ)/(cσ + ε) differs from (s − μ)/(σ + ε) by at
					// most |A|·ε·|1/c − 1|/σ: unchanged up to ε, no more.
					// MAGRPO's clamp at 1e-6 behaves the same way.
					for _, i := range g.Rows {
						tol := 1e-12 + math.Abs(base.Advantages[i])*opt.Epsilon*math.Abs(1/c-1)/g.Std
						if math.Abs(got.Advantages[i]-base.Advantages[i]) > tol {
							t.Fatalf("%s: rewards ×%g: row %d advantage %g, unscaled %g (tol %g)", name, c, i, got.Advantages[i], base.Advantages[i], tol)
						}
					}
				}
				for k, a := range base.Diagnostics.Agents {
					b := got.Diagnostics.Agents[k]
					if a.AmplificationDefined && math.Abs(a.Amplification-b.Amplification) > 1e-9*math.Max(1, a.Amplification) {
						t.Errorf("%s: rewards ×%g: agent %s amplification %g, unscaled %g", name, c, a.Agent, b.Amplification, a.Amplification)
					}
				}
			}
		}
	}
}
