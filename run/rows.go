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
	out, _ := trainedRows(samples, res, agents, withLogProbs)
	return out
}

// trainedRows is sequences with the index of each row's sample.
func trainedRows(samples []rollout.Sample, res advantage.Result, agents []string, withLogProbs bool) ([]policy.Sequence, []int) {
	mine := map[string]bool{}
	for _, a := range agents {
		mine[a] = true
	}
	var out []policy.Sequence
	var from []int
	for i, s := range samples {
		if !mine[s.Agent] || (res.Train != nil && !res.Train[i]) || len(s.ResponseTokens) == 0 {
			continue
		}
		seq := policy.Sequence{Agent: s.Agent, Prompt: s.PromptTokens, Response: s.ResponseTokens, Mask: s.LossMask, Advantage: res.Advantages[i]}
		if withLogProbs {
			seq.SampleLogProbs = s.SampleLogProbs
		}
		out = append(out, seq)
		from = append(from, i)
	}
	return out, from
}

// paddedSequences is sequences under optim.loss_padding: the rows one
// agent sampled together at one node of one episode (a joint tree's G
// completions) padded with pad to the longest of them, as CoMLRL's
// generate call returns them (policy/padding.go). The rows carry no
// sampler log-probs: the pad tokens were never sampled.
func paddedSequences(samples []rollout.Sample, res advantage.Result, agents []string, pad int) ([]policy.Sequence, error) {
	seqs, from := trainedRows(samples, res, agents, false)
	type key struct {
		prompt, traj, node, turn int
		agent                    string
	}
	ids := map[key]int{}
	id := func(s rollout.Sample) int {
		k := key{s.Prompt, s.Traj, s.Node, s.Turn, s.Agent}
		if _, ok := ids[k]; !ok {
			ids[k] = len(ids)
		}
		return ids[k]
	}
	longest := map[int]int{}
	for _, s := range samples {
		g := id(s)
		longest[g] = max(longest[g], len(s.ResponseTokens))
	}
	group := make([]int, len(seqs))
	for j, i := range from {
		group[j] = id(samples[i])
	}
	return policy.PadGroups(seqs, group, longest, pad)
}

// rewardMetrics summarises the step's samples: reward per row and per agent,
// format validity, truncation, response lengths, train accuracy, and the
// environment's per-episode metrics (train/<key>: their mean; train/<key>/count:
// the episodes where one is not 0, e.g. answers over the math grader's budget).
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
	envSum, envN, envHits := map[string]float64{}, map[string]float64{}, map[string]float64{}
	for _, ep := range ro.Episodes {
		team += ep.Reward
		if ep.Success {
			solved++
		}
		for k, v := range ep.Metrics { // the environment's own (search: f1; math: grader_over_budget)
			envSum[k] += v
			envN[k]++
			if v != 0 {
				envHits[k]++
			}
		}
	}
	for k, n := range envN {
		out["train/"+k] = envSum[k] / n       // mean over the episodes that report it, as evaluation's
		out["train/"+k+"/count"] = envHits[k] // episodes where it is not 0
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

// padToken is the token trained model name's generate pads with in CoMLRL:
// its tokenizer's pad token, or its end of sequence where it has none (the
// reference sets pad_token = eos_token then); -1 without either.
func (t *team) padToken(name string) int {
	tok := t.tokenizers[name]
	if tok == nil {
		return -1
	}
	if sp := tok.Special(); sp.Pad >= 0 {
		return sp.Pad
	} else {
		return sp.EOS
	}
}
