package advantage

// reference_test.go — GRPO and Dr. GRPO advantages against verl's and TRL's
// own code (scripts/pyref/rl_reference.py, run by the Python reference
// environment, internal/pyref; skipped without it):
//
//	verl  core_algos.compute_grpo_outcome_advantage, epsilon 1e-6:
//	      norm_adv_by_std_in_grpo true  = grpo, divide_by_std, sample std, singleton raw
//	      norm_adv_by_std_in_grpo false = grpo without divide_by_std (Dr. GRPO)
//	      on groups of 3, 2 (all equal), 1 (a singleton) and 3
//	TRL   GRPOTrainer._generate_and_score_completions, fixed rewards:
//	      scale_rewards "group" = grpo with epsilon 1e-4 (TRL's constant)
//	      scale_rewards "none"  = Dr. GRPO
//	      on three prompts of 4 completions, one group all equal
//
// Each agrees within 1e-6 absolute (TRL computes in float32: its errors are
// ~1e-7 on these advantages of order 1).

import (
	"math"
	"testing"

	"troupe/internal/pyref"
)

const refAdvTol = 1e-6

func TestGRPOMatchesVerlAndTRL(t *testing.T) {
	verlRewards := []float64{1, 0, 0.5, 2, 2, 3, 0.25, 1, 0.7}
	verlGroups := []int{0, 0, 0, 1, 1, 2, 3, 3, 3}
	const G = 4
	trlRewards := []float64{1, 0, 0.5, 0.25, 2, 2, 2, 2, 0.1, 0.9, 0.3, 0.3}
	in := map[string]any{"advantages": map[string]any{
		"rewards": verlRewards, "groups": verlGroups, "epsilon": 1e-6,
		"trl_rewards": trlRewards, "num_generations": G,
	}}
	var out struct {
		Versions   map[string]string
		Advantages map[string][]float64
	}
	pyref.RunJSON(t, "scripts/pyref/rl_reference.py", in, &out)
	t.Logf("references: %v", out.Versions)

	rowsOf := func(rewards []float64, group func(i int) int) []Row {
		rows := make([]Row, len(rewards))
		for i, r := range rewards {
			rows[i] = Row{Prompt: group(i), Traj: i, Agent: "a", Reward: r}
		}
		return rows
	}
	verlRows := rowsOf(verlRewards, func(i int) int { return verlGroups[i] })
	trlRows := rowsOf(trlRewards, func(i int) int { return i / G })
	opts := func(divide bool, eps float64) Options {
		o := DefaultOptions()
		o.DivideByStd, o.Epsilon, o.Std, o.Singleton = divide, eps, StdSample, SingletonRaw
		return o
	}
	for _, c := range []struct {
		ref  string
		rows []Row
		opt  Options
	}{
		{"verl_grpo", verlRows, opts(true, 1e-6)},
		{"verl_drgrpo", verlRows, opts(false, 1e-6)},
		{"trl_group", trlRows, opts(true, 1e-4)},
		{"trl_none", trlRows, opts(false, 1e-4)},
	} {
		want := out.Advantages[c.ref]
		est, err := New(nameGRPO, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		res, err := est.Compute(c.rows)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) != len(res.Advantages) {
			t.Fatalf("%s: %d reference advantages for %d rows", c.ref, len(want), len(res.Advantages))
		}
		worst := 0.0
		for i, w := range want {
			d := math.Abs(res.Advantages[i] - w)
			if !(d <= refAdvTol) {
				t.Errorf("%s: row %d (reward %g): troupe %.9g, reference %.9g", c.ref, i, c.rows[i].Reward, res.Advantages[i], w)
			}
			worst = math.Max(worst, d)
		}
		t.Logf("%s: %d advantages within %.2g", c.ref, len(want), worst)
	}
}
