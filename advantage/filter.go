package advantage

// filter.go — the group filter PettingLLMs applies to every model's batch
// before its update (filter_method, filter_ratio), for any estimator:
//
//	lowest_mean_fraction f: per model, rank the groups that hold the model's
//	rows by their mean score and drop the floor(f·n) lowest of the n
//	zero_variance: drop every group whose scores are all equal (singletons
//	included), before the ranking (DAPO's dynamic-sampling filter)
//
// A dropped group's rows get advantage 0 and Result.Train false, so the
// update never sees them; the remaining groups' advantages are unchanged
// (every group is normalised on its own, so removing whole groups before or
// after normalising gives the same numbers).
//
// As the reference: the ranking is per model (each trained model filters its
// own batch), a singleton group ranks with mean 0, and the count is the
// floor. Departures:
//  1. Mean ties are broken by the group key (Result.Groups order), not by the
//     order in which the groups first appeared in the batch, so a filter's
//     choice does not change when the rows are shuffled.
//  2. A group whose rows come from several models (grpo's prompt groups in a
//     team of two models) is ranked in each of those models' lists and only
//     that model's rows leave with it; the reference's groups never span
//     models, as each model keys its own batch.
//
// What this file is not: an estimator. New wraps the named estimator with
// the filter when the options switch it on, so a caller gets filtered
// results from Compute and never calls Filter itself.

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// FilterOptions are the group filter's settings (advantage.filter). The zero
// value filters nothing.
type FilterOptions struct {
	// LowestMeanFraction drops floor(f·n) of the n groups of each model,
	// those with the lowest mean score (PettingLLMs' filter_method: mean,
	// filter_ratio: f; its AT-GRPO configs use 0.5). 0 turns it off.
	LowestMeanFraction float64 `yaml:"lowest_mean_fraction"`
	// ZeroVariance drops groups whose scores are all equal, singletons
	// included (filter_method: dapo).
	ZeroVariance bool `yaml:"zero_variance"`
}

// On reports whether the filter drops anything at all.
func (f FilterOptions) On() bool { return f.LowestMeanFraction > 0 || f.ZeroVariance }

// Validate reports a fraction outside [0, 1).
func (f FilterOptions) Validate() error {
	if x := f.LowestMeanFraction; !(x >= 0 && x < 1) {
		return fmt.Errorf("advantage.filter.lowest_mean_fraction: must be in [0, 1), got %g; 0 turns the filter off, the AT-GRPO reference uses 0.5", x)
	}
	return nil
}

// Filter returns res with the groups the options drop removed from training
// (advantage 0, Train false, Group.Dropped) and the diagnostics recomputed.
// rows are the rows res was computed from; opt are the estimator's options
// (their MixRewards decides the scores the diagnostics describe).
func Filter(rows []Row, res Result, opt Options) (Result, error) {
	if err := opt.Filter.Validate(); err != nil {
		return Result{}, err
	}
	if len(res.Advantages) != len(rows) || len(res.Train) != len(rows) {
		return Result{}, fmt.Errorf("advantage: filter: %d rows but %d advantages and %d train flags; pass the rows the result was computed from", len(rows), len(res.Advantages), len(res.Train))
	}
	if !opt.Filter.On() {
		return res, nil
	}
	out := Result{
		Advantages: slices.Clone(res.Advantages),
		Train:      slices.Clone(res.Train),
		Groups:     slices.Clone(res.Groups),
	}
	drop := func(gi int, model string, all bool) {
		g := &out.Groups[gi]
		for _, i := range g.Rows {
			if all || rows[i].Model == model {
				out.Advantages[i], out.Train[i] = 0, false
			}
		}
		g.Dropped = true
	}
	if opt.Filter.ZeroVariance {
		for gi, g := range out.Groups {
			if g.Singleton || g.ZeroVariance {
				drop(gi, "", true)
			}
		}
	}
	if f := opt.Filter.LowestMeanFraction; f > 0 {
		byModel := map[string][]int{}
		for gi, g := range out.Groups {
			if g.Dropped {
				continue
			}
			var models []string
			for _, i := range g.Rows {
				if !slices.Contains(models, rows[i].Model) {
					models = append(models, rows[i].Model)
				}
			}
			for _, m := range models {
				byModel[m] = append(byModel[m], gi)
			}
		}
		for model, members := range byModel {
			// out.Groups is sorted by key, so the stable sort breaks mean ties by key.
			slices.SortStableFunc(members, func(a, b int) int {
				return cmp.Compare(rankingMean(out.Groups[a]), rankingMean(out.Groups[b]))
			})
			n := int(math.Floor(f*float64(len(members)) + 1e-9))
			for _, gi := range members[:n] {
				drop(gi, model, false)
			}
		}
	}
	scores, err := rowScores(rows, opt)
	if err != nil {
		return Result{}, err
	}
	out.Diagnostics = diagnose(res.Diagnostics.Estimator, rows, scores, out)
	return out, nil
}

// rankingMean is the mean a group is ranked by: PettingLLMs ranks a
// singleton group at 0.
func rankingMean(g Group) float64 {
	if g.Singleton {
		return 0
	}
	return g.Mean
}

// filtered is an estimator whose results pass through Filter.
type filtered struct {
	Estimator
	opt Options
}

// Compute runs the estimator, then the filter.
func (e filtered) Compute(rows []Row) (Result, error) {
	res, err := e.Estimator.Compute(rows)
	if err != nil {
		return Result{}, err
	}
	return Filter(rows, res, e.opt)
}
