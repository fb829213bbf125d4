package run

// rows.go — the two small conversions between packages (rollout samples →
// advantage rows; samples + advantages → policy sequences) and the step's
// reward metrics.

import (
	"math"
	"sort"

	"troupe/advantage"
	"troupe/policy"
	"troupe/rollout"
)

// advantageRows keys every sample for the estimator.
func advantageRows(samples []rollout.Sample) []advantage.Row {
	rows := make([]advantage.Row, len(samples))
	for i, s := range samples {
		rows[i] = advantage.Row{
			Prompt: s.Prompt, Traj: s.Traj, Env: s.Env, Agent: s.Agent, Turn: s.Turn, Node: s.Node, Joint: s.Joint,
			Candidate: s.Candidate, Model: s.Model, Reward: s.Reward,
			TeamReward: s.TeamReward, LocalReward: s.LocalReward,
		}
	}
	return rows
}

// sequences returns the training rows of one trainer: its agents' samples
// that the estimator kept, with their advantages, and with the sampler's
// log-probs when withLogProbs (the update then compares its own with them).
func sequences(samples []rollout.Sample, res advantage.Result, agents []string, withLogProbs bool) []policy.Sequence {
	mine := map[string]bool{}
	for _, a := range agents {
		mine[a] = true
	}
	var out []policy.Sequence
	for i, s := range samples {
		if !mine[s.Agent] || (res.Train != nil && !res.Train[i]) || len(s.ResponseTokens) == 0 {
			continue
		}
		seq := policy.Sequence{Agent: s.Agent, Prompt: s.PromptTokens, Response: s.ResponseTokens, Mask: s.LossMask, Advantage: res.Advantages[i]}
		if withLogProbs {
			seq.SampleLogProbs = s.SampleLogProbs
		}
		out = append(out, seq)
	}
	return out
}

// rewardMetrics summarises the step's samples: reward per row and per agent,
// format validity, truncation, response lengths, and train accuracy.
func rewardMetrics(ro *rollout.Rollout) map[string]float64 {
	out := map[string]float64{}
	type acc struct{ n, reward, valid, trunc, tokens float64 }
	per := map[string]*acc{}
	var all acc
	var rewards []float64
	for _, s := range ro.Samples {
		a := per[s.Agent]
		if a == nil {
			a = &acc{}
			per[s.Agent] = a
		}
		for _, x := range []*acc{a, &all} {
			x.n++
			x.reward += s.Reward
			x.tokens += float64(len(s.ResponseTokens))
			if s.Valid {
				x.valid++
			}
			if s.Truncated {
				x.trunc++
			}
		}
		rewards = append(rewards, s.Reward)
	}
	if all.n == 0 {
		return out
	}
	mean := all.reward / all.n
	v := 0.0
	for _, r := range rewards {
		v += (r - mean) * (r - mean)
	}
	out["reward/mean"] = mean
	out["reward/std"] = math.Sqrt(v / all.n)
	out["rollout/valid_frac"] = all.valid / all.n
	out["rollout/response_tokens_mean"] = all.tokens / all.n
	names := make([]string, 0, len(per))
	for n := range per {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		a := per[n]
		out["reward/agent/"+n] = a.reward / a.n
		out["valid/agent/"+n] = a.valid / a.n
		out["truncated/agent/"+n] = a.trunc / a.n
		out["rows/agent/"+n] = a.n
	}
	solved, team := 0.0, 0.0
	for _, ep := range ro.Episodes {
		team += ep.Reward
		if ep.Success {
			solved++
		}
	}
	out["train/accuracy"] = solved / float64(len(ro.Episodes))
	out["train/team_reward"] = team / float64(len(ro.Episodes))
	out["rollout/rows"] = float64(ro.Stats.Rows)
	out["rollout/prompt_tokens"] = float64(ro.Stats.PromptTokens)
	out["rollout/response_tokens"] = float64(ro.Stats.ResponseTokens)
	out["rollout/generate_calls"] = float64(ro.Stats.GenerateCalls)
	out["time/generate_s"] = ro.Stats.GenerateTime.Seconds()
	return out
}
