package advantage

// groups.go — the machinery the group estimators share: samples (a score and
// the rows that receive its advantage), group keys, and the loop that
// normalises each group and writes its advantages back to the rows.
//
// What this file is not: any choice of key or sample unit; each estimator's
// file makes those.

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// sample is one unit a group normalises: a score and the rows that all
// receive its advantage (one row, or every row of a trajectory).
type sample struct {
	score float64
	rows  []int
}

// groupKey holds every key any estimator groups by; an estimator leaves the
// fields it does not use at zero.
type groupKey struct {
	prompt, env, turn, node int
	agent                   string
}

func (a groupKey) compare(b groupKey) int {
	return cmp.Or(
		cmp.Compare(a.prompt, b.prompt),
		cmp.Compare(a.env, b.env),
		cmp.Compare(a.turn, b.turn),
		cmp.Compare(a.node, b.node),
		strings.Compare(a.agent, b.agent),
	)
}

// keyFields says which fields of a groupKey an estimator uses, for labels.
type keyFields struct{ env, turn, node, agent bool }

func (k groupKey) label(f keyFields) string {
	var b strings.Builder
	fmt.Fprintf(&b, "prompt=%d", k.prompt)
	if f.env {
		fmt.Fprintf(&b, " env=%d", k.env)
	}
	if f.turn {
		fmt.Fprintf(&b, " turn=%d", k.turn)
	}
	if f.node {
		fmt.Fprintf(&b, " node=%d", k.node)
	}
	if f.agent {
		fmt.Fprintf(&b, " agent=%s", k.agent)
	}
	return b.String()
}

// sampleGroup is a group of samples before normalisation.
type sampleGroup struct {
	key     groupKey
	samples []sample
}

// groupRowSamples makes every row its own sample and groups them by key.
// Groups come back sorted by key; samples keep the rows' order.
func groupRowSamples(rows []Row, scores []float64, key func(Row) groupKey) []sampleGroup {
	byKey := map[groupKey]*sampleGroup{}
	for i, r := range rows {
		k := key(r)
		g := byKey[k]
		if g == nil {
			g = &sampleGroup{key: k}
			byKey[k] = g
		}
		g.samples = append(g.samples, sample{score: scores[i], rows: []int{i}})
	}
	return sortedGroups(byKey)
}

func sortedGroups(byKey map[groupKey]*sampleGroup) []sampleGroup {
	groups := make([]sampleGroup, 0, len(byKey))
	for _, g := range byKey {
		groups = append(groups, *g)
	}
	slices.SortFunc(groups, func(a, b sampleGroup) int { return a.key.compare(b.key) })
	return groups
}

// groupNormaliser computes the advantages of one group's sample scores.
type groupNormaliser func(scores []float64) ([]float64, groupStats)

// normaliseGroups runs norm over every group, writes each sample's advantage
// to its rows, and returns a Result with all rows trainable.
func normaliseGroups(nRows int, groups []sampleGroup, fields keyFields, norm groupNormaliser) Result {
	res := Result{
		Advantages: make([]float64, nRows),
		Train:      make([]bool, nRows),
		Groups:     make([]Group, 0, len(groups)),
	}
	for i := range res.Train {
		res.Train[i] = true
	}
	for _, g := range groups {
		scores := make([]float64, len(g.samples))
		for i, s := range g.samples {
			scores[i] = s.score
		}
		adv, st := norm(scores)
		out := Group{
			Label:        g.key.label(fields),
			Samples:      len(g.samples),
			Mean:         st.mean,
			Std:          st.std,
			Singleton:    st.singleton,
			ZeroVariance: st.zeroVariance,
			Best:         -1,
		}
		for i, s := range g.samples {
			for _, row := range s.rows {
				res.Advantages[row] = adv[i]
				out.Rows = append(out.Rows, row)
			}
		}
		slices.Sort(out.Rows)
		res.Groups = append(res.Groups, out)
	}
	return res
}

// optionNormaliser is §1's normalisation under opt.
func optionNormaliser(opt Options) groupNormaliser {
	return func(scores []float64) ([]float64, groupStats) { return normaliseGroup(scores, opt) }
}
