package advantage

// drmas.go — Dr. MAS's agent-wise normalisation (algorithms.md §3).
//
//	A_i = (r_i − μ_{u,k}) / (σ_{u,k} + ε)
//	groups: (prompt u, agent k); samples: rows — an agent that acts twice in
//	one trajectory contributes two samples, each with its own score.
//
// Why: with a prompt-level baseline, agent k's gradient second moment is
// scaled by (σ_k² + (μ_k − μ)²)/σ² (Dr. MAS, Lemma 4.2), which grows when the
// agents' rewards drift apart and makes gradient norms spike (Prop. 4.3).
// Normalising with the agent's own statistics makes that factor 1.
// diagnostics.go logs the factor so the effect is visible.
//
// Matches the reference code (group_by_agent_id); no departures.

// DrMAS normalises each agent's rows with that agent's own statistics within
// the prompt group.
type DrMAS struct{ Options Options }

// Name returns "drmas".
func (DrMAS) Name() string { return nameDrMAS }

// Compute groups rows by (Prompt, Agent) and normalises each row's score.
func (e DrMAS) Compute(rows []Row) (Result, error) {
	scores, err := prepare(nameDrMAS, rows, e.Options)
	if err != nil {
		return Result{}, err
	}
	groups := groupRowSamples(rows, scores, func(r Row) groupKey {
		return groupKey{prompt: r.Prompt, agent: r.Agent}
	})
	res := normaliseGroups(len(rows), groups, keyFields{agent: true}, optionNormaliser(e.Options))
	res.Diagnostics = diagnose(nameDrMAS, rows, scores, res)
	return res, nil
}
