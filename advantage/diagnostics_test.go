package advantage

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

func TestAmplificationByHand(t *testing.T) {
	// S = [0, 2], V = [10, 10]. All rows: μ = 5.5, σ² = (0+4+100+100)/4 − 5.5² = 20.75.
	// S: σ_S² = 1, (1 − 5.5)² = 20.25 → 21.25/20.75 = 1.024096.
	// V: σ_V² = 0, (10 − 5.5)² = 20.25 → 20.25/20.75 = 0.975904.
	rows := []Row{
		{Traj: 0, Agent: "S", Reward: 0}, {Traj: 1, Agent: "S", Reward: 2},
		{Traj: 0, Agent: "V", Reward: 10}, {Traj: 1, Agent: "V", Reward: 10},
	}
	res := mustCompute(t, nameGRPOStep, DefaultOptions(), rows)
	d := res.Diagnostics
	if math.Abs(d.GlobalMean-5.5) > 1e-12 || math.Abs(d.GlobalStd-math.Sqrt(20.75)) > 1e-12 {
		t.Errorf("global μ, σ: %g, %g; want 5.5, %g", d.GlobalMean, d.GlobalStd, math.Sqrt(20.75))
	}
	m := res.Metrics()
	for key, want := range map[string]float64{
		"adv/agent/S/mean":                    1,
		"adv/agent/S/std":                     1,
		"adv/agent/S/amplification":           1.024096,
		"adv/agent/V/mean":                    10,
		"adv/agent/V/std":                     0,
		"adv/agent/V/amplification":           0.975904,
		"adv/agent/S/amplification_by_prompt": 1.024096, // one prompt: the same
		"adv/agent/V/amplification_by_prompt": 0.975904,
		"adv/rows":                            4,
		"adv/groups":                          1,
		"adv/samples":                         4,
	} {
		got, ok := m[key]
		if !ok || math.Abs(got-want) > 1e-6 {
			t.Errorf("%s: got %g (present %v), want %g", key, got, ok, want)
		}
	}
}

func TestAmplificationWeightedByRowsSumsToRowCount(t *testing.T) {
	// Σ_k n_k (σ_k² + (μ_k − μ)²) = n σ² (the law of total variance), so
	// Σ_k n_k·amplification_k = n; per prompt the same holds for the
	// prompt-level version, so its row-weighted mean is 1 when every prompt
	// has σ_u > 0.
	rng := rand.New(rand.NewPCG(9, 10))
	for range 20 {
		rows := randomRows(rng, 4, 5)
		for i := range rows {
			rows[i].Reward += float64(i % 3) // keep every prompt's σ_u > 0
		}
		d := mustCompute(t, nameDrMAS, DefaultOptions(), rows).Diagnostics
		var sum, sumByPrompt float64
		for _, a := range d.Agents {
			sum += float64(a.Rows) * a.Amplification
			sumByPrompt += float64(a.Rows) * a.PromptAmplification
		}
		if math.Abs(sum-float64(d.Rows)) > 1e-9*float64(d.Rows) || math.Abs(sumByPrompt-float64(d.Rows)) > 1e-9*float64(d.Rows) {
			t.Fatalf("Σ n_k·amp_k = %g, by prompt %g; want %d", sum, sumByPrompt, d.Rows)
		}
	}
}

func TestAmplificationGrowsWhenAgentsSpecialise(t *testing.T) {
	// One prompt; per trajectory a solver acts four times (rewards 0/1) and a
	// verifier once, with rewards 3 and 3.1. μ = (32·0.5 + 8·3.05)/40 = 1.01;
	// σ² = within (32·0.25 + 8·0.0025)/40 = 0.2005 plus between
	// (32·0.51² + 8·2.04²)/40 = 1.0404, so 1.2409; the verifier's factor is
	// (0.0025 + 2.04²)/1.2409 = 3.35571: its gradient second moment is more
	// than tripled by the global baseline. Dr. MAS's per-agent
	// advantages have mean 0 and unit std for both agents.
	var rows []Row
	for tr := range 8 {
		for turn := range 4 {
			rows = append(rows, Row{Traj: tr, Turn: turn, Agent: "solver", Reward: float64((tr + turn) % 2)})
		}
		rows = append(rows, Row{Traj: tr, Turn: 4, Agent: "verifier", Reward: 3 + 0.1*float64(tr%2)})
	}
	d := mustCompute(t, nameDrMAS, DefaultOptions(), rows).Diagnostics
	v := d.Agents[1]
	if v.Agent != "verifier" || math.Abs(v.Amplification-4.1641/1.2409) > 1e-9 {
		t.Errorf("verifier amplification %g, want %g", v.Amplification, 4.1641/1.2409)
	}
	for _, a := range d.Agents {
		// The population std of n values normalised by their sample std is
		// √((n−1)/n), times σ/(σ+ε).
		want := math.Sqrt(float64(a.Rows-1) / float64(a.Rows))
		if math.Abs(a.AdvantageMean) > 1e-9 || math.Abs(a.AdvantageStd-want) > 1e-4 {
			t.Errorf("%s: advantage mean %g std %g, want 0 and %g", a.Agent, a.AdvantageMean, a.AdvantageStd, want)
		}
	}
}

func TestUndefinedAmplificationIsLeftOutNotNaN(t *testing.T) {
	rows := []Row{{Traj: 0, Agent: "S", Reward: 1}, {Traj: 1, Agent: "S", Reward: 1}}
	res := mustCompute(t, nameDrMAS, DefaultOptions(), rows)
	m := res.Metrics()
	if _, ok := m["adv/agent/S/amplification"]; ok {
		t.Errorf("amplification present with σ = 0: %v", m)
	}
	if _, err := json.Marshal(m); err != nil {
		t.Errorf("metrics do not encode as JSON: %v", err)
	}
	if res.Diagnostics.ZeroVarianceGroups != 1 || m["adv/zero_variance_groups"] != 1 {
		t.Errorf("zero-variance groups: %d", res.Diagnostics.ZeroVarianceGroups)
	}
}
