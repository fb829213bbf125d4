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
	want := "rows 0 and 2 are both candidate 0 of environment 0 in group prompt=0 env=0 turn=0 agent=tool"
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

// Without a tree each environment samples one candidate per turn and agent;
// atgrpo.key: prompt pools the n environments of a task turn by turn, so the
// (prompt, turn, agent) group holds n rows where the environment-keyed
// groups would all be singletons.
func TestATGRPOPromptKeyPoolsEnvironments(t *testing.T) {
	var rows []Row
	for env, r := range []float64{0.2, 1.0, -2.0} {
		rows = append(rows,
			Row{Env: env, Turn: 0, Agent: "tool", Reward: r},
			Row{Env: env, Turn: 1, Agent: "tool", Reward: 1})
	}
	opt := DefaultOptions()
	opt.ATGRPO.Key = KeyPrompt
	res := mustCompute(t, nameATGRPO, opt, rows)
	assertClose(t, "pooled", res.Advantages, []float64{0.300399, 0, 0.815368, 0, -1.115766, 0}) // vector 3, (0,0,0)
	if len(res.Groups) != 2 || res.Groups[0].Label != "prompt=0 turn=0 agent=tool" {
		t.Errorf("groups %+v, want two keyed (prompt, turn, agent)", res.Groups)
	}
	byEnv := mustCompute(t, nameATGRPO, DefaultOptions(), rows)
	if byEnv.Diagnostics.SingletonGroups != 6 {
		t.Errorf("keyed by environment: %d singleton groups, want 6", byEnv.Diagnostics.SingletonGroups)
	}
	rows[2].Env = 0 // two rows of environment 0, candidate 0, one group
	est, _ := New(nameATGRPO, opt)
	if _, err := est.Compute(rows); err == nil || !strings.Contains(err.Error(), "both candidate 0 of environment 0") {
		t.Errorf("a repeated (environment, candidate): %v", err)
	}
}

// PettingLLMs' no_tree runs at 244467e key a row by (env_idx // sample_num,
// turn, agent), where env_idx is already the task's index (rollout_idx //
// sample_num): K consecutive tasks share a group. atgrpo.key: merged with
// tasks_per_group K groups the same rows: algorithms.md's vector 3 merge,
// task 0's [1, 0, 0.5, 0.5] with task 1's constant [2, 2, 2, 2], K = 2.
func TestATGRPOMergedKeyPoolsTasks(t *testing.T) {
	var rows []Row
	for task, rewards := range [][]float64{{1, 0, 0.5, 0.5}, {2, 2, 2, 2}, {0, 1, 0, 1}} {
		for j, r := range rewards {
			rows = append(rows, Row{Prompt: task, Env: task*4 + j, Turn: 0, Agent: "plan", Reward: r})
		}
	}
	opt := DefaultOptions()
	opt.ATGRPO.Key, opt.ATGRPO.TasksPerGroup = KeyMerged, 2
	res := mustCompute(t, nameATGRPO, opt, rows)
	assertClose(t, "merged", res.Advantages[:8], []float64{-0.295804, -1.479018, -0.887411, -0.887411, 0.887411, 0.887411, 0.887411, 0.887411})
	// task 2 is alone in its group (tasks 2 and 3): [0, 1, 0, 1] normalised on its own
	assertClose(t, "task 2", res.Advantages[8:], []float64{-0.866025, 0.866025, -0.866025, 0.866025})
	if len(res.Groups) != 2 {
		t.Errorf("%d groups, want 2 (tasks 0–1 and task 2)", len(res.Groups))
	}
	opt.ATGRPO.TasksPerGroup = 0
	if _, err := New(nameATGRPO, opt); err == nil || !strings.Contains(err.Error(), "tasks_per_group") {
		t.Errorf("merged without tasks_per_group: %v", err)
	}
}
