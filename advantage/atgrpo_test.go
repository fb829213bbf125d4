package advantage

import (
	"strings"
	"testing"
)

func TestATGRPONeverMergesEnvironments(t *testing.T) {
	// Two environments of one prompt, and the same Env index under two
	// prompts: the same turn and agent, but four separate groups of K = 2.
	rows := []Row{
		{Prompt: 0, Env: 0, Agent: "tool", Candidate: 0, Reward: 1},
		{Prompt: 0, Env: 0, Agent: "tool", Candidate: 1, Reward: 0},
		{Prompt: 0, Env: 1, Agent: "tool", Candidate: 0, Reward: 5},
		{Prompt: 0, Env: 1, Agent: "tool", Candidate: 1, Reward: 5},
		{Prompt: 1, Env: 0, Agent: "tool", Candidate: 0, Reward: -3},
		{Prompt: 1, Env: 0, Agent: "tool", Candidate: 1, Reward: 3},
		{Prompt: 1, Env: 1, Agent: "tool", Candidate: 0, Reward: 9},
		{Prompt: 1, Env: 1, Agent: "tool", Candidate: 1, Reward: 9},
	}
	res := mustCompute(t, nameATGRPO, DefaultOptions(), rows)
	if len(res.Groups) != 4 {
		t.Fatalf("got %d groups, want 4: %+v", len(res.Groups), res.Groups)
	}
	for _, g := range res.Groups {
		if len(g.Rows) != 2 || rows[g.Rows[0]].Env != rows[g.Rows[1]].Env || rows[g.Rows[0]].Prompt != rows[g.Rows[1]].Prompt {
			t.Errorf("group %s mixes environments: rows %v", g.Label, g.Rows)
		}
	}
	// Each pair [a, b] with a ≠ b normalises to ±1/√2; the constant pairs to 0.
	assertClose(t, "separate environments", res.Advantages,
		[]float64{0.707106, -0.707106, 0, 0, -0.707106, 0.707106, 0, 0})
}

func TestATGRPODuplicateCandidateIsAnError(t *testing.T) {
	// A sampler that forgot Row.Env would hand in two environments' K
	// candidates under one key: the repeated candidate index gives it away.
	rows := []Row{
		{Agent: "tool", Candidate: 0, Reward: 1},
		{Agent: "tool", Candidate: 1, Reward: 0},
		{Agent: "tool", Candidate: 0, Reward: 2},
	}
	est, _ := New(nameATGRPO, DefaultOptions())
	_, err := est.Compute(rows)
	want := "rows 0 and 2 are both candidate 0 of group prompt=0 env=0 turn=0 agent=tool"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want an error containing %q", err, want)
	}
}

func TestATGRPOSecondAgentSeesDistinctRewards(t *testing.T) {
	// The intended tree sampling: the second agent acts from the best first
	// candidate's state and its K candidates are scored on their own copies,
	// so its K rewards differ and its advantages are not all zero.
	rows := []Row{
		{Agent: "reasoner", Candidate: 0, Reward: 0.1},
		{Agent: "reasoner", Candidate: 1, Reward: 0.9},
		{Agent: "reasoner", Candidate: 2, Reward: 0.4},
		{Agent: "tool", Candidate: 0, Reward: 1},
		{Agent: "tool", Candidate: 1, Reward: 0},
		{Agent: "tool", Candidate: 2, Reward: 0.5},
	}
	res := mustCompute(t, nameATGRPO, DefaultOptions(), rows)
	// tool group [1, 0, 0.5]: mean 0.5, sample std 0.5 → [1, −1, 0] (up to ε).
	assertClose(t, "tool", res.Advantages[3:], []float64{0.999998, -0.999998, 0})
	if rows[res.Groups[0].Best].Candidate != 1 {
		t.Errorf("reasoner best: candidate %d, want 1", rows[res.Groups[0].Best].Candidate)
	}
}

func TestATGRPORewardMixing(t *testing.T) {
	// r = α·team + local with α = 2: [2·1 + 0, 2·0 + 0.5, 2·1 + 1] = [2, 0.5, 3].
	rows := []Row{
		{Agent: "tool", Candidate: 0, TeamReward: 1, LocalReward: 0, Reward: 99},
		{Agent: "tool", Candidate: 1, TeamReward: 0, LocalReward: 0.5, Reward: 99},
		{Agent: "tool", Candidate: 2, TeamReward: 1, LocalReward: 1, Reward: 99},
	}
	opt := noStd()
	opt.MixRewards = true
	opt.TeamWeight = 2
	res := mustCompute(t, nameATGRPO, opt, rows)
	// mean 5.5/3 = 1.833333
	assertClose(t, "mixed", res.Advantages, []float64{0.166667, -1.333333, 1.166667})
	if got := res.Diagnostics.GlobalMean; got < 1.8333 || got > 1.8334 {
		t.Errorf("diagnostics read the mixed score: global mean %g, want 1.833333", got)
	}
}

func TestATGRPOFilters(t *testing.T) {
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
	opt.ATGRPO.DropZeroVariance = true
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
	opt.ATGRPO.DropLowestMeanFraction = 0.5
	res = mustCompute(t, nameATGRPO, opt, rows)
	for _, g := range res.Groups {
		want := map[int]bool{1: true, 2: true, 4: true, 5: true}[rows[g.Rows[0]].Turn]
		if g.Dropped != want {
			t.Errorf("fraction 0.5: group %s dropped %v, want %v", g.Label, g.Dropped, want)
		}
	}
	// 0.4 of 4 groups is 1.6: one group goes, turn 2 (key order breaks the tie).
	opt.ATGRPO.DropLowestMeanFraction = 0.4
	res = mustCompute(t, nameATGRPO, opt, rows)
	for _, g := range res.Groups {
		want := map[int]bool{1: true, 2: true, 5: true}[rows[g.Rows[0]].Turn]
		if g.Dropped != want {
			t.Errorf("fraction 0.4: group %s dropped %v, want %v", g.Label, g.Dropped, want)
		}
	}
}

func TestATGRPOLowestMeanFilterIsPerModel(t *testing.T) {
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
	opt.ATGRPO.DropLowestMeanFraction = 0.5
	res := mustCompute(t, nameATGRPO, opt, rows)
	for _, g := range res.Groups {
		turn := rows[g.Rows[0]].Turn
		if want := turn == 0 || turn == 2; g.Dropped != want {
			t.Errorf("group %s: dropped %v, want %v", g.Label, g.Dropped, want)
		}
	}
}

func TestATGRPOGroupModelsMustAgree(t *testing.T) {
	rows := []Row{
		{Agent: "tool", Model: "a", Candidate: 0, Reward: 1},
		{Agent: "tool", Model: "b", Candidate: 1, Reward: 0},
	}
	est, _ := New(nameATGRPO, DefaultOptions())
	if _, err := est.Compute(rows); err == nil || !strings.Contains(err.Error(), `name models "a" and "b"`) {
		t.Fatalf("got %v, want a model mismatch error", err)
	}
}
