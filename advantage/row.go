package advantage

// row.go — the estimators' input: one Row per agent invocation, and the score
// each estimator reads from it.
//
// What this file is not: the rollout's Sample (tokens, log-probs, masks live
// there). package run copies the keys and rewards of each Sample into a Row.

import (
	"fmt"
	"math"
)

// Row is one agent invocation as the estimators see it: the keys that decide
// which rows are compared with which, and the row's rewards. Fields an
// estimator does not read may be left zero.
//
// Which estimator reads which keys:
//
//	grpo, rloo   Prompt, Traj            (Agent for diagnostics)
//	grpo-step    Prompt                  (Agent for diagnostics)
//	drmas        Prompt, Agent
//	atgrpo       Prompt, Env, Turn, Agent, Candidate, Model
//	magrpo       Prompt, Node, Joint, Agent, Candidate
//
// Every estimator reads the row's score: Reward, or
// TeamWeight·TeamReward + LocalReward when Options.MixRewards is set.
type Row struct {
	// Prompt is the prompt group: the n trajectories (or the K-candidate trees)
	// of one task share it. Nothing is ever compared across prompts.
	Prompt int
	// Traj is the trajectory within the prompt group; a trajectory is
	// identified by (Prompt, Traj), so per-prompt or global numbering both work.
	Traj int
	// Agent is the agent's name.
	Agent string
	// Turn is the 0-based step of the episode at which the agent acted.
	Turn int
	// Env is the AT-GRPO environment within the prompt group; an environment
	// is identified by (Prompt, Env). Leave it 0 when each prompt has one
	// environment.
	Env int
	// Node is the tree node (the state) at which this completion was sampled:
	// for MAGRPO, the node at which the joint action Joint was taken.
	Node int
	// Joint is the MAGRPO joint action this row's completion takes part in. A
	// joint action leads to a child node with the same id: the joint actions
	// taken there have Node == Joint. Ids are per prompt and shared by nodes
	// and joint actions.
	Joint int
	// Candidate is the completion's index among the K (AT-GRPO) or G (MAGRPO)
	// completions the agent sampled from one state.
	Candidate int
	// Model names the trained model that produced the row; AT-GRPO's
	// lowest-mean filter ranks groups per model. Empty means one model.
	Model string
	// Reward is the row's score: for Dr. MAS the team return minus the agent's
	// own penalty; for MAGRPO the joint reward of the joint action.
	Reward float64
	// TeamReward and LocalReward are AT-GRPO's two reward terms, read instead
	// of Reward when Options.MixRewards is set.
	TeamReward  float64
	LocalReward float64
}

// MaxAbsReward bounds the magnitude of every score. Rewards are expected to be
// O(1); the bound keeps every sum, square and quotient the estimators form
// finite, so a finite input can never produce an infinite or NaN advantage.
const MaxAbsReward = 1e100

// rowScores returns the score of every row, or an error that names the first
// row whose reward is not a finite number within ±MaxAbsReward.
func rowScores(rows []Row, opt Options) ([]float64, error) {
	scores := make([]float64, len(rows))
	for i, r := range rows {
		var s float64
		if opt.MixRewards {
			if err := checkReward(i, "team_reward", r.TeamReward, r.Agent); err != nil {
				return nil, err
			}
			if err := checkReward(i, "local_reward", r.LocalReward, r.Agent); err != nil {
				return nil, err
			}
			s = opt.TeamWeight*r.TeamReward + r.LocalReward
			if err := checkReward(i, "team_weight·team_reward + local_reward", s, r.Agent); err != nil {
				return nil, err
			}
		} else {
			s = r.Reward
			if err := checkReward(i, "reward", s, r.Agent); err != nil {
				return nil, err
			}
		}
		scores[i] = s
	}
	return scores, nil
}

func checkReward(i int, field string, v float64, agent string) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("advantage: rows[%d].%s: must be finite, got %v; check the reward of agent %q", i, field, v, agent)
	}
	if math.Abs(v) > MaxAbsReward {
		return fmt.Errorf("advantage: rows[%d].%s: magnitude must be at most %g, got %g; rescale the reward of agent %q", i, field, MaxAbsReward, v, agent)
	}
	return nil
}
