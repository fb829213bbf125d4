package advantage

// atgrpo.go — AT-GRPO's agent- and turn-wise groups over tree-sampled
// candidates (algorithms.md §4).
//
//	A_i = (r_i − μ_g) / (σ_g + ε),  g = (env, turn, agent)
//	r_i = α·r_team + r_local   (with Options.MixRewards; else Reward)
//
// Tree sampling gives, for each environment, turn and agent, K candidates
// sampled from the same state; each group holds exactly those K candidates.
// The sampler continues every branch from the best candidate's state
// (BestCandidate; Group.Best names its row).
//
// Departures from the reference code (its defects, not replicated):
//  1. Its group key divides the environment index by K a second time, which
//     merges K prompts' groups into one. Here an environment is (Prompt, Env)
//     and two environments are never merged; two rows of one group with the
//     same Candidate index are an error, which catches a sampler that forgot
//     to set Env.
//  2. At its latest version the best branch is copied after all agents acted,
//     so every later agent's K rewards are identical, and after the first copy
//     it steps different environment objects from the ones it scores. Those
//     are rollout concerns; this estimator trusts the rewards it is given and
//     its tests use K distinct rewards for the second agent.
//
// With atgrpo.key: prompt the groups are (Prompt, Turn, Agent) instead: the
// n environments of one task, each sampled without a tree (one candidate per
// turn and agent), pooled turn by turn; within such a group (Env, Candidate)
// must be distinct. With atgrpo.key: merged they are (Prompt / m, Turn,
// Agent), m = atgrpo.tasks_per_group: the environments of m consecutive
// tasks pooled, as the reference's no_tree runs group them (its key divides
// the task index by the sample count, so 8 tasks × 8 rollouts share one
// mean and std); the group's label then names the first task's group index.
// The group filter (filter.go) applies to atgrpo as to every estimator.

import "fmt"

// ATGRPO normalises the K candidates of each (environment, turn, agent) state.
type ATGRPO struct{ Options Options }

// Name returns "atgrpo".
func (ATGRPO) Name() string { return nameATGRPO }

var (
	atgrpoFields       = keyFields{env: true, turn: true, agent: true}
	atgrpoPromptFields = keyFields{turn: true, agent: true}
)

// Compute groups rows by (Prompt, Env, Turn, Agent) — (Prompt, Turn, Agent)
// with atgrpo.key: prompt, (Prompt / tasks_per_group, Turn, Agent) with
// merged — normalises each group and marks each group's best candidate.
func (e ATGRPO) Compute(rows []Row) (Result, error) {
	scores, err := prepare(nameATGRPO, rows, e.Options)
	if err != nil {
		return Result{}, err
	}
	key := e.Options.ATGRPO.Key
	fields := atgrpoFields
	if key != KeyEnv {
		fields = atgrpoPromptFields
	}
	groups := groupRowSamples(rows, scores, func(r Row) groupKey {
		switch key {
		case KeyPrompt:
			return groupKey{prompt: r.Prompt, turn: r.Turn, agent: r.Agent}
		case KeyMerged:
			return groupKey{prompt: r.Prompt / e.Options.ATGRPO.TasksPerGroup, turn: r.Turn, agent: r.Agent}
		}
		return groupKey{prompt: r.Prompt, env: r.Env, turn: r.Turn, agent: r.Agent}
	})
	if err := checkCandidateGroups(rows, groups, fields); err != nil {
		return Result{}, err
	}
	res := normaliseGroups(len(rows), groups, fields, optionNormaliser(e.Options))
	for gi, g := range groups {
		res.Groups[gi].Best = bestRow(rows, g, scores)
	}
	res.Diagnostics = diagnose(nameATGRPO, rows, scores, res)
	return res, nil
}

// BestCandidate returns the index of the highest score, the lowest index on
// ties: the candidate whose state every branch continues from.
func BestCandidate(scores []float64) int {
	best := 0
	for i, s := range scores {
		if s > scores[best] {
			best = i
		}
	}
	return best
}

// bestRow is BestCandidate over a group's rows, with ties broken by the
// lowest Candidate index rather than by row order.
func bestRow(rows []Row, g sampleGroup, scores []float64) int {
	best := g.samples[0].rows[0]
	for _, s := range g.samples[1:] {
		i := s.rows[0]
		if scores[i] > scores[best] || (scores[i] == scores[best] && rows[i].Candidate < rows[best].Candidate) {
			best = i
		}
	}
	return best
}

// checkCandidateGroups requires distinct (Prompt, Env, Candidate) triples
// and one Model within each group.
func checkCandidateGroups(rows []Row, groups []sampleGroup, fields keyFields) error {
	type slot struct{ prompt, env, candidate int }
	for _, g := range groups {
		seen := map[slot]int{}
		first := g.samples[0].rows[0]
		for _, s := range g.samples {
			i := s.rows[0]
			at := slot{rows[i].Prompt, rows[i].Env, rows[i].Candidate}
			if j, dup := seen[at]; dup {
				return fmt.Errorf("advantage: atgrpo: rows %d and %d are both candidate %d of environment %d in group %s; number the K candidates of one state in Row.Candidate and give different environments of a prompt different Row.Env",
					j, i, rows[i].Candidate, rows[i].Env, g.key.label(fields))
			}
			seen[at] = i
			if rows[i].Model != rows[first].Model {
				return fmt.Errorf("advantage: atgrpo: rows %d and %d of group %s name models %q and %q; one agent's rows must come from one model",
					first, i, g.key.label(fields), rows[first].Model, rows[i].Model)
			}
		}
	}
	return nil
}
