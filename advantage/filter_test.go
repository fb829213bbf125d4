package advantage

import (
	"strings"
	"testing"
)

func TestFilterOnATGRPOGroups(t *testing.T) {
	// Five groups (turns 0–4 of one environment) with means 0.5, 1 (constant),
	// 0.25, 3, 0.25, and one singleton.
	group := func(turn int, model string, rewards ...float64) []Row {
		var rows []Row
		for k, r := range rewards {
			rows = append(rows, Row{Turn: turn, Agent: "tool", Candidate: k, Reward: r, Model: model})
		}
		return rows
	}
	var rows []Row
	rows = append(rows, group(0, "m", 0, 1)...)   // mean 0.5
	rows = append(rows, group(1, "m", 1, 1)...)   // zero variance
	rows = append(rows, group(2, "m", 0, 0.5)...) // mean 0.25
	rows = append(rows, group(3, "m", 2, 4)...)   // mean 3
	rows = append(rows, group(4, "m", 0.5, 0)...) // mean 0.25, ties turn 2
	rows = append(rows, group(5, "m", 7)...)      // singleton
	opt := DefaultOptions()
	opt.Filter.ZeroVariance = true
	res := mustCompute(t, nameATGRPO, opt, rows)
	dropped := map[string]bool{}
	for _, g := range res.Groups {
		dropped[g.Label] = g.Dropped
	}
	if !dropped["prompt=0 env=0 turn=1 agent=tool"] || !dropped["prompt=0 env=0 turn=5 agent=tool"] {
		t.Errorf("zero-variance and singleton groups should be dropped: %v", dropped)
	}
	if res.Diagnostics.DroppedGroups != 2 || res.Diagnostics.TrainRows != len(rows)-3 {
		t.Errorf("dropped groups %d, train rows %d; want 2 and %d", res.Diagnostics.DroppedGroups, res.Diagnostics.TrainRows, len(rows)-3)
	}
	for _, i := range []int{2, 3, 10} {
		if res.Train[i] || res.Advantages[i] != 0 {
			t.Errorf("row %d of a dropped group: train %v advantage %g", i, res.Train[i], res.Advantages[i])
		}
	}

	// Lowest-mean fraction 0.5 of the 4 remaining groups: drop 2, the two
	// with mean 0.25 (turns 2 and 4); the tie is broken by key, not order.
	opt.Filter.LowestMeanFraction = 0.5
	res = mustCompute(t, nameATGRPO, opt, rows)
	for _, g := range res.Groups {
		want := map[int]bool{1: true, 2: true, 4: true, 5: true}[rows[g.Rows[0]].Turn]
		if g.Dropped != want {
			t.Errorf("fraction 0.5: group %s dropped %v, want %v", g.Label, g.Dropped, want)
		}
	}
	// 0.4 of 4 groups is 1.6: one group goes, turn 2 (key order breaks the tie).
	opt.Filter.LowestMeanFraction = 0.4
	res = mustCompute(t, nameATGRPO, opt, rows)
	for _, g := range res.Groups {
		want := map[int]bool{1: true, 2: true, 5: true}[rows[g.Rows[0]].Turn]
		if g.Dropped != want {
			t.Errorf("fraction 0.4: group %s dropped %v, want %v", g.Label, g.Dropped, want)
		}
	}
}

func TestFilterIsPerModel(t *testing.T) {
	// Model "a" has groups with means 0.5 and 2.5, model "b" with means 10.5
	// and 20.5. Dropping half per model removes one group of each, the
	// lowest within that model, even though all of b's beat all of a's.
	var rows []Row
	for turn, base := range []float64{0, 2, 10, 20} {
		model := "a"
		if turn >= 2 {
			model = "b"
		}
		rows = append(rows,
			Row{Turn: turn, Agent: model + "-agent", Model: model, Candidate: 0, Reward: base},
			Row{Turn: turn, Agent: model + "-agent", Model: model, Candidate: 1, Reward: base + 1})
	}
	opt := DefaultOptions()
	opt.Filter.LowestMeanFraction = 0.5
	res := mustCompute(t, nameATGRPO, opt, rows)
	for _, g := range res.Groups {
		turn := rows[g.Rows[0]].Turn
		if want := turn == 0 || turn == 2; g.Dropped != want {
			t.Errorf("group %s: dropped %v, want %v", g.Label, g.Dropped, want)
		}
	}
}

// PettingLLMs' filter (filter_method: mean) ranks a singleton group at mean
// 0, whatever its score, and drops floor(ratio·n) groups. Here: groups with
// means −1, 0.5 and 2 and a singleton scoring 9; half of 4 is 2, so the
// groups at −1 and the singleton (ranked at 0) go.
func TestFilterRanksSingletonsAtZero(t *testing.T) {
	rows := []Row{
		{Turn: 0, Agent: "plan", Candidate: 0, Reward: -2}, {Turn: 0, Agent: "plan", Candidate: 1, Reward: 0},
		{Turn: 1, Agent: "plan", Candidate: 0, Reward: 0}, {Turn: 1, Agent: "plan", Candidate: 1, Reward: 1},
		{Turn: 2, Agent: "plan", Candidate: 0, Reward: 1}, {Turn: 2, Agent: "plan", Candidate: 1, Reward: 3},
		{Turn: 3, Agent: "plan", Candidate: 0, Reward: 9},
	}
	opt := DefaultOptions()
	opt.Filter.LowestMeanFraction = 0.5
	res := mustCompute(t, nameATGRPO, opt, rows)
	for _, g := range res.Groups {
		turn := rows[g.Rows[0]].Turn
		if want := turn == 0 || turn == 3; g.Dropped != want {
			t.Errorf("group %s (mean %g): dropped %v, want %v", g.Label, g.Mean, g.Dropped, want)
		}
	}
	if res.Diagnostics.DroppedGroups != 2 || res.Diagnostics.TrainRows != 4 {
		t.Errorf("diagnostics: %d dropped groups, %d train rows; want 2 and 4", res.Diagnostics.DroppedGroups, res.Diagnostics.TrainRows)
	}
	kept := mustCompute(t, nameATGRPO, DefaultOptions(), rows)
	for i := range rows {
		want := kept.Advantages[i]
		if !res.Train[i] {
			want = 0
		}
		if res.Advantages[i] != want {
			t.Errorf("row %d: advantage %g, want %g (a kept group's advantages do not change)", i, res.Advantages[i], want)
		}
	}
}

// The filter follows every estimator, as PettingLLMs filters each model's
// batch whatever the advantage: grpo's prompt groups, grpo-step's, drmas's
// (prompt, agent) groups.
func TestFilterAppliesToEveryEstimator(t *testing.T) {
	var rows []Row
	for p, base := range []float64{0, 5, 1, 3} { // prompt means 0.5, 5.5, 1.5, 3.5
		for traj := range 2 {
			rows = append(rows, Row{Prompt: p, Traj: traj, Agent: "plan", Candidate: traj, Reward: base + float64(traj)})
		}
	}
	opt := DefaultOptions()
	opt.Filter.LowestMeanFraction = 0.5
	for _, name := range []string{nameGRPO, nameGRPOStep, nameDrMAS, nameRLOO, nameATGRPO} {
		o := opt
		if name == nameATGRPO {
			o.ATGRPO.Key = KeyPrompt // (prompt, turn, agent): one group per prompt here
		}
		res := mustCompute(t, name, o, rows)
		for i, r := range rows {
			if want := r.Prompt == 1 || r.Prompt == 3; res.Train[i] != want {
				t.Errorf("%s: row %d (prompt %d): train %v, want %v", name, i, r.Prompt, res.Train[i], want)
			}
		}
	}
}

// Without filter options nothing is dropped: the filter is off unless a
// config asks for it.
func TestFilterIsOffByDefault(t *testing.T) {
	rows := []Row{{Candidate: 0, Reward: 0}, {Candidate: 1, Reward: 1}, {Turn: 1, Candidate: 0, Reward: 5}, {Turn: 1, Candidate: 1, Reward: 5}}
	if f := DefaultOptions().Filter; f.On() {
		t.Fatalf("default filter %+v is on", f)
	}
	res := mustCompute(t, nameATGRPO, DefaultOptions(), rows)
	for i, tr := range res.Train {
		if !tr {
			t.Errorf("row %d left out with the default options", i)
		}
	}
}

// A grpo prompt group holding two models' rows leaves training only for the
// model whose ranking dropped it.
func TestFilterSplitsGroupsThatSpanModels(t *testing.T) {
	var rows []Row
	for p, base := range []float64{0, 1} {
		for traj := range 2 {
			r := base + float64(traj)
			rows = append(rows,
				Row{Prompt: p, Traj: traj, Agent: "tool", Model: "a", Reward: r},
				Row{Prompt: p, Traj: traj, Agent: "plan", Model: "b", Reward: r})
		}
	}
	opt := DefaultOptions()
	opt.Filter.LowestMeanFraction = 0.5
	res := mustCompute(t, nameGRPO, opt, rows)
	for i, r := range rows {
		if want := r.Prompt == 1; res.Train[i] != want {
			t.Errorf("row %d (prompt %d, model %s): train %v, want %v", i, r.Prompt, r.Model, res.Train[i], want)
		}
	}
	if _, err := Filter(rows[:3], res, opt); err == nil || !strings.Contains(err.Error(), "pass the rows the result was computed from") {
		t.Errorf("mismatched rows: %v", err)
	}
}
