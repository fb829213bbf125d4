package advantage

// atgrpo_ref_test.go — AT-GRPO's merged groups against verl's own GRPO
// (scripts/pyref/rl_reference.py; skipped without the Python reference
// environment), grouped by PettingLLMs' key as its trainer computes it at
// 244467e (multi_agents_ppo_trainer.py, _assign_consistent_uids, with the
// no_tree rollout's env_idx = rollout_idx // sample_num of
// multi_agents_execution_engine.py): uid = (env_idx // sample_num, turn,
// agent). The Go side groups the same rows with atgrpo.key: merged.

import (
	"math"
	"testing"

	"troupe/internal/pyref"
)

func TestATGRPOMergedMatchesReferenceKey(t *testing.T) {
	const K, tasks = 4, 8 // sample_num, tasks in the batch
	rewards := make([]float64, K*tasks)
	groups := make([]int, len(rewards))
	rows := make([]Row, len(rewards))
	for rollout := range rewards {
		rewards[rollout] = math.Mod(float64(rollout*rollout)*0.37+float64(rollout%3), 2.5) - 1
		envIdx := rollout / K        // the task, as the no_tree rollout passes it
		groups[rollout] = envIdx / K // the reference's uid key (one turn, one agent)
		rows[rollout] = Row{Prompt: envIdx, Env: rollout, Agent: "plan", Reward: rewards[rollout]}
	}
	in := map[string]any{"advantages": map[string]any{
		"rewards": rewards, "groups": groups, "epsilon": 1e-6, "trl_rewards": rewards, "num_generations": K,
	}}
	var out struct {
		Versions   map[string]string
		Advantages map[string][]float64
	}
	pyref.RunJSON(t, "scripts/pyref/rl_reference.py", in, &out)
	t.Logf("references: %v", out.Versions)
	opt := DefaultOptions()
	opt.ATGRPO.Key, opt.ATGRPO.TasksPerGroup = KeyMerged, K
	res := mustCompute(t, nameATGRPO, opt, rows)
	want := out.Advantages["verl_grpo"]
	if len(want) != len(rows) {
		t.Fatalf("%d reference advantages for %d rows", len(want), len(rows))
	}
	for i := range want {
		if math.Abs(res.Advantages[i]-want[i]) > refAdvTol {
			t.Errorf("row %d (task %d): %.7f, verl over the reference's groups %.7f", i, rows[i].Prompt, res.Advantages[i], want[i])
		}
	}
}
