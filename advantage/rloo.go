package advantage

// rloo.go — REINFORCE leave-one-out over the prompt group.
//
//	A_τ = r̄_τ − mean_{τ'≠τ} r̄_τ' = (n·r̄_τ − Σ r̄) / (n − 1)
//	groups: prompt u; samples: trajectories (score = mean of the rows' scores,
//	as in grpo); every row of τ gets τ's A.
//
// What this is not: a normalised estimator. RLOO's baseline is unbiased and
// it is used unscaled, so divide_by_std, std and epsilon are ignored.
// A singleton group has no other sample to compare with: raw keeps the score
// (as verl's RLOO does), zero gives 0. An all-equal group gets exactly 0.

// RLOO uses the mean of the other trajectories of the prompt group as the
// baseline.
type RLOO struct{ Options Options }

// Name returns "rloo".
func (RLOO) Name() string { return nameRLOO }

// Compute gives every row its trajectory's leave-one-out advantage.
func (e RLOO) Compute(rows []Row) (Result, error) {
	scores, err := prepare(nameRLOO, rows, e.Options)
	if err != nil {
		return Result{}, err
	}
	groups := groupTrajectories(rows, scores)
	res := normaliseGroups(len(rows), groups, keyFields{}, func(s []float64) ([]float64, groupStats) {
		return leaveOneOut(s, e.Options)
	})
	res.Diagnostics = diagnose(nameRLOO, rows, scores, res)
	return res, nil
}

// leaveOneOut returns (n·s − Σs)/(n−1) for each score.
func leaveOneOut(scores []float64, opt Options) ([]float64, groupStats) {
	adv := make([]float64, len(scores))
	switch {
	case len(scores) == 1:
		if opt.Singleton == SingletonRaw {
			adv[0] = scores[0]
		}
		return adv, groupStats{mean: scores[0], singleton: true}
	case allEqual(scores):
		return adv, groupStats{mean: scores[0], zeroVariance: true}
	}
	n := float64(len(scores))
	m := orderFreeMean(scores)
	for i, s := range scores {
		adv[i] = n * (s - m) / (n - 1) // = (n·s − Σs)/(n−1)
	}
	return adv, groupStats{mean: m, std: orderFreeStd(scores, m, opt.Std)}
}
