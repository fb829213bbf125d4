package advantage

// grpo.go — GRPO as the Dr. MAS codebase implements it (algorithms.md §2), and
// its step-level ablation.
//
//	grpo:       r̄_τ = mean_{i∈τ} r_i;  A_i = (r̄_τ(i) − μ_u)/(σ_u + ε)
//	            groups: prompt u; samples: trajectories; every row of τ gets τ's A
//	grpo-step:  A_i = (r_i − μ_u)/(σ_u + ε)
//	            groups: prompt u; samples: rows
//
// grpo-step is Dr. MAS without the agent key: it changes only the sample unit
// (row instead of trajectory), so comparing grpo, grpo-step and drmas
// separates "per-row weighting" from "group by agent".
//
// grpo matches the Dr. MAS code's GRPO (singletons: mean 0, std 1 by
// default). grpo-step has no reference implementation: it is the ablation
// that the public question on the Dr. MAS repository asks for.
//
// What this file is not: the std/ε/singleton rules (normalise.go).

import (
	"cmp"
	"slices"
)

// GRPO is the Dr. MAS codebase's baseline: trajectories within a prompt group.
type GRPO struct{ Options Options }

// Name returns "grpo".
func (GRPO) Name() string { return nameGRPO }

// Compute gives every row its trajectory's group-normalised mean score.
func (e GRPO) Compute(rows []Row) (Result, error) {
	scores, err := prepare(nameGRPO, rows, e.Options)
	if err != nil {
		return Result{}, err
	}
	groups := groupTrajectories(rows, scores)
	res := normaliseGroups(len(rows), groups, keyFields{}, optionNormaliser(e.Options))
	res.Diagnostics = diagnose(nameGRPO, rows, scores, res)
	return res, nil
}

// GRPOStep groups by prompt and makes every row its own sample.
type GRPOStep struct{ Options Options }

// Name returns "grpo-step".
func (GRPOStep) Name() string { return nameGRPOStep }

// Compute normalises every row's score within its prompt group.
func (e GRPOStep) Compute(rows []Row) (Result, error) {
	scores, err := prepare(nameGRPOStep, rows, e.Options)
	if err != nil {
		return Result{}, err
	}
	groups := groupRowSamples(rows, scores, func(r Row) groupKey { return groupKey{prompt: r.Prompt} })
	res := normaliseGroups(len(rows), groups, keyFields{}, optionNormaliser(e.Options))
	res.Diagnostics = diagnose(nameGRPOStep, rows, scores, res)
	return res, nil
}

// groupTrajectories makes one sample per trajectory (Prompt, Traj), scored by
// the mean of its rows' scores, and groups them by prompt. Samples are sorted
// by trajectory id.
func groupTrajectories(rows []Row, scores []float64) []sampleGroup {
	type trajKey struct{ prompt, traj int }
	trajRows := map[trajKey][]int{}
	for i, r := range rows {
		k := trajKey{r.Prompt, r.Traj}
		trajRows[k] = append(trajRows[k], i)
	}
	keys := make([]trajKey, 0, len(trajRows))
	for k := range trajRows {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b trajKey) int {
		return cmp.Or(cmp.Compare(a.prompt, b.prompt), cmp.Compare(a.traj, b.traj))
	})
	byKey := map[groupKey]*sampleGroup{}
	for _, tk := range keys {
		members := trajRows[tk]
		rowScores := make([]float64, len(members))
		for j, i := range members {
			rowScores[j] = scores[i]
		}
		gk := groupKey{prompt: tk.prompt}
		g := byKey[gk]
		if g == nil {
			g = &sampleGroup{key: gk}
			byKey[gk] = g
		}
		g.samples = append(g.samples, sample{score: orderFreeMean(rowScores), rows: members})
	}
	return sortedGroups(byKey)
}
