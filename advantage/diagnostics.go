package advantage

// diagnostics.go — per-step and per-agent statistics for the metrics log,
// including Dr. MAS's amplification factor (Lemma 4.2):
//
//	amplification_k = (σ_k² + (μ_k − μ)²) / σ²
//
// the factor by which a global baseline (mean μ, std σ) scales agent k's
// gradient second moment relative to its own normalisation. It is 1 for
// every agent when agents share one reward distribution and grows for agents
// whose rewards drift from the rest: the source of the gradient-norm spikes
// Dr. MAS removes.
//
// Two versions are logged:
//   - amplification: μ, σ over all rows of the step, μ_k, σ_k over agent k's
//     rows (the lemma as stated);
//   - amplification_by_prompt: the same measured against each prompt group's
//     own μ_u, σ_u, as a prompt-level baseline actually normalises:
//     mean over agent k's rows of ((r_i − μ_u)/σ_u)², over prompts with
//     σ_u > 0. It equals amplification when there is one prompt group.
//
// All moments here are population moments (divide by N), for which
// σ_k² + (μ_k − μ)² is exactly agent k's mean squared deviation from μ, so
// Σ_k n_k·amplification_k = n.
//
// What this file is not: a metrics writer. Metrics() returns a flat map; the
// caller writes the JSONL line.

import (
	"fmt"
	"slices"
)

// Diagnostics summarises one Compute call.
type Diagnostics struct {
	// Estimator is the estimator's config name.
	Estimator string
	// Rows is the number of input rows; TrainRows those with Train true.
	Rows, TrainRows int
	// Samples is the number of samples over all groups.
	Samples int
	// Groups counts the groups; SingletonGroups, ZeroVarianceGroups and
	// DroppedGroups count those that were singletons, all-equal (two or more
	// samples), or dropped by a filter.
	Groups, SingletonGroups, ZeroVarianceGroups, DroppedGroups int
	// GlobalMean and GlobalStd are μ and σ of all rows' scores.
	GlobalMean, GlobalStd float64
	// AdvantageMean, AdvantageStd and AdvantageAbsMax describe the advantages
	// of the rows to train on.
	AdvantageMean, AdvantageStd, AdvantageAbsMax float64
	// Agents holds one entry per agent, sorted by name.
	Agents []AgentDiagnostics
}

// AgentDiagnostics are one agent's statistics for the step.
type AgentDiagnostics struct {
	Agent string
	// Rows is the number of the agent's rows.
	Rows int
	// Mean and Std are μ_k and σ_k of the agent's row scores.
	Mean, Std float64
	// Amplification is (σ_k² + (μ_k − μ)²)/σ²; defined only when σ > 0.
	Amplification        float64
	AmplificationDefined bool
	// PromptAmplification is the per-prompt version (see the file header);
	// defined only when some prompt of the agent has σ_u > 0.
	PromptAmplification        float64
	PromptAmplificationDefined bool
	// AdvantageMean and AdvantageStd describe the agent's advantages on the
	// rows to train on (0 when it has none).
	AdvantageMean, AdvantageStd float64
}

// diagnose computes the diagnostics of a finished Result.
func diagnose(name string, rows []Row, scores []float64, res Result) Diagnostics {
	d := Diagnostics{Estimator: name, Rows: len(rows), Groups: len(res.Groups)}
	for _, g := range res.Groups {
		d.Samples += g.Samples
		switch {
		case g.Singleton:
			d.SingletonGroups++
		case g.ZeroVariance:
			d.ZeroVarianceGroups++
		}
		if g.Dropped {
			d.DroppedGroups++
		}
	}
	d.GlobalMean = orderFreeMean(scores)
	d.GlobalStd = orderFreeStd(scores, d.GlobalMean, StdPopulation)

	var trained []float64
	for i, a := range res.Advantages {
		if res.Train[i] {
			trained = append(trained, a)
			d.AdvantageAbsMax = max(d.AdvantageAbsMax, a, -a)
		}
	}
	d.TrainRows = len(trained)
	d.AdvantageMean = orderFreeMean(trained)
	d.AdvantageStd = orderFreeStd(trained, d.AdvantageMean, StdPopulation)

	promptZ := promptZSquares(rows, scores)
	byAgent := map[string][]int{}
	for i, r := range rows {
		byAgent[r.Agent] = append(byAgent[r.Agent], i)
	}
	for agent, members := range byAgent {
		a := AgentDiagnostics{Agent: agent, Rows: len(members)}
		var own, adv, z []float64
		for _, i := range members {
			own = append(own, scores[i])
			if res.Train[i] {
				adv = append(adv, res.Advantages[i])
			}
			if v, ok := promptZ[i]; ok {
				z = append(z, v)
			}
		}
		a.Mean = orderFreeMean(own)
		a.Std = orderFreeStd(own, a.Mean, StdPopulation)
		if d.GlobalStd > 0 {
			// As ratios first, so that tiny σ cannot underflow to 0 when squared.
			spread := a.Std / d.GlobalStd
			shift := (a.Mean - d.GlobalMean) / d.GlobalStd
			a.Amplification = spread*spread + shift*shift
			a.AmplificationDefined = true
		}
		if len(z) > 0 {
			a.PromptAmplification = orderFreeMean(z)
			a.PromptAmplificationDefined = true
		}
		a.AdvantageMean = orderFreeMean(adv)
		a.AdvantageStd = orderFreeStd(adv, a.AdvantageMean, StdPopulation)
		d.Agents = append(d.Agents, a)
	}
	slices.SortFunc(d.Agents, func(x, y AgentDiagnostics) int {
		switch {
		case x.Agent < y.Agent:
			return -1
		case x.Agent > y.Agent:
			return 1
		}
		return 0
	})
	return d
}

// promptZSquares returns ((r_i − μ_u)/σ_u)² for every row whose prompt group
// u has σ_u > 0 (population moments over the prompt's rows).
func promptZSquares(rows []Row, scores []float64) map[int]float64 {
	byPrompt := map[int][]int{}
	for i, r := range rows {
		byPrompt[r.Prompt] = append(byPrompt[r.Prompt], i)
	}
	z := map[int]float64{}
	for _, members := range byPrompt {
		s := make([]float64, len(members))
		for j, i := range members {
			s[j] = scores[i]
		}
		mu := orderFreeMean(s)
		sigma := orderFreeStd(s, mu, StdPopulation)
		if sigma == 0 {
			continue
		}
		for _, i := range members {
			v := (scores[i] - mu) / sigma
			z[i] = v * v
		}
	}
	return z
}

// Metrics flattens the diagnostics into metric keys for one JSONL line:
//
//	adv/rows, adv/train_rows, adv/samples, adv/groups, adv/singleton_groups,
//	adv/zero_variance_groups, adv/dropped_groups,
//	adv/global_mean, adv/global_std,
//	adv/advantage_mean, adv/advantage_std, adv/advantage_abs_max,
//	adv/agent/<name>/{rows, mean, std, amplification,
//	                  amplification_by_prompt, advantage_mean, advantage_std}
//
// An undefined amplification (σ = 0) is left out rather than written as NaN.
func (d Diagnostics) Metrics() map[string]float64 {
	m := map[string]float64{
		"adv/rows":                 float64(d.Rows),
		"adv/train_rows":           float64(d.TrainRows),
		"adv/samples":              float64(d.Samples),
		"adv/groups":               float64(d.Groups),
		"adv/singleton_groups":     float64(d.SingletonGroups),
		"adv/zero_variance_groups": float64(d.ZeroVarianceGroups),
		"adv/dropped_groups":       float64(d.DroppedGroups),
		"adv/global_mean":          d.GlobalMean,
		"adv/global_std":           d.GlobalStd,
		"adv/advantage_mean":       d.AdvantageMean,
		"adv/advantage_std":        d.AdvantageStd,
		"adv/advantage_abs_max":    d.AdvantageAbsMax,
	}
	for _, a := range d.Agents {
		p := fmt.Sprintf("adv/agent/%s/", a.Agent)
		m[p+"rows"] = float64(a.Rows)
		m[p+"mean"] = a.Mean
		m[p+"std"] = a.Std
		m[p+"advantage_mean"] = a.AdvantageMean
		m[p+"advantage_std"] = a.AdvantageStd
		if a.AmplificationDefined {
			m[p+"amplification"] = a.Amplification
		}
		if a.PromptAmplificationDefined {
			m[p+"amplification_by_prompt"] = a.PromptAmplification
		}
	}
	return m
}
