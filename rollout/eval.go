// eval.go — evaluation metrics over finished episodes: accuracy, avg@k,
// pass@k, format validity per agent, turns and tokens per episode.
//
// pass@k uses the unbiased estimator of Chen et al. (2021) over the n
// samples of a task of which c succeeded,
//
//	pass@k = 1 − C(n−c, k) / C(n, k) = 1 − Π_{i=n−c+1}^{n} (1 − k/i),
//
// computed as the product (no large binomials), averaged over tasks.
// avg@k is the mean over tasks of c/n with k = n samples per task (the
// Dr. MAS eval metric, avg@16); Accuracy is the mean over episodes, which
// equals avg@k when every task has the same n.
package rollout

import (
	"fmt"
	"sort"
)

// EvalMetrics summarises a set of finished episodes.
type EvalMetrics struct {
	Tasks          int             `json:"tasks"`            // distinct tasks (by Task.ID)
	Episodes       int             `json:"episodes"`         // trajectories
	SamplesPerTask int             `json:"samples_per_task"` // the smallest n over tasks (the k of avg@k)
	Accuracy       float64         `json:"accuracy"`         // mean success over episodes
	AvgAtK         float64         `json:"avg_at_k"`         // mean over tasks of c/n
	PassAtK        map[int]float64 `json:"pass_at_k"`        // unbiased pass@k for each requested k
	MeanReward     float64         `json:"mean_reward"`      // mean team reward over episodes
	// RowReward is the mean team reward over agent rows (every call of an
	// episode counts the episode's reward once): Dr. MAS's logged
	// validation score, val/<data_source>/test_score, which weighs an
	// episode by its number of agent calls.
	RowReward          float64            `json:"row_reward"`
	ValidRatio         map[string]float64 `json:"valid_ratio"`          // per agent: valid rows / rows
	TruncatedRatio     map[string]float64 `json:"truncated_ratio"`      // per agent: truncated rows / rows
	CallsPerAgent      map[string]float64 `json:"calls_per_agent"`      // per agent: rows per episode
	MeanTurns          float64            `json:"mean_turns"`           // agent calls per episode
	MeanResponseTokens float64            `json:"mean_response_tokens"` // generated tokens per episode
	MeanPromptTokens   float64            `json:"mean_prompt_tokens"`   // prompt tokens per episode
	// Env holds the means of the environment's own metrics (Score.Metrics),
	// each over the episodes that report it.
	Env map[string]float64 `json:"env,omitempty"`
}

// PassAtK is the unbiased estimate for one task with n samples, c correct.
func PassAtK(n, c, k int) float64 {
	if n-c < k {
		return 1
	}
	p := 1.0
	for i := n - c + 1; i <= n; i++ {
		p *= 1 - float64(k)/float64(i)
	}
	return 1 - p
}

// EpisodeRecord is what evaluation reads of an episode: plain data, so
// that the ranks of a data-parallel run can exchange it (as JSON).
type EpisodeRecord struct {
	Task    string             `json:"task"` // Task.ID, or "prompt #<prompt group>" when empty
	Traj    int                `json:"traj"`
	Done    bool               `json:"done"`
	Success bool               `json:"success"`
	Reward  float64            `json:"reward"`
	Metrics map[string]float64 `json:"metrics,omitempty"`
	Calls   []CallRecord       `json:"calls"`
}

// CallRecord is what evaluation reads of one agent call.
type CallRecord struct {
	Agent          string `json:"agent"`
	PromptTokens   int    `json:"prompt_tokens"`
	ResponseTokens int    `json:"response_tokens"`
	Valid          bool   `json:"valid"`
	Truncated      bool   `json:"truncated"`
}

// Records extracts the evaluation records of episodes.
func Records(episodes []*Episode) []EpisodeRecord {
	out := make([]EpisodeRecord, len(episodes))
	for i, ep := range episodes {
		key := ep.Task.ID
		if key == "" {
			key = fmt.Sprintf("prompt #%d", ep.Prompt)
		}
		r := EpisodeRecord{Task: key, Traj: ep.Traj, Done: ep.Done, Success: ep.Success, Reward: ep.Reward, Metrics: ep.Metrics,
			Calls: make([]CallRecord, len(ep.Calls))}
		for j, c := range ep.Calls {
			r.Calls[j] = CallRecord{Agent: c.Agent.Name, PromptTokens: len(c.PromptTokens), ResponseTokens: len(c.ResponseTokens),
				Valid: c.Parsed.Valid, Truncated: c.Truncated}
		}
		out[i] = r
	}
	return out
}

// Evaluate computes the metrics of finished episodes; ks are the k values
// of pass@k, each at most the number of samples of every task. Episodes are
// grouped into tasks by Task.ID (by prompt group when the ID is empty), so
// the episodes of several Runs over a test set can be evaluated together.
func Evaluate(episodes []*Episode, ks ...int) (EvalMetrics, error) {
	return EvaluateRecords(Records(episodes), ks...)
}

// EvaluateRecords is Evaluate over episode records (from Records, possibly
// gathered from several processes).
func EvaluateRecords(episodes []EpisodeRecord, ks ...int) (EvalMetrics, error) {
	m := EvalMetrics{PassAtK: map[int]float64{}, ValidRatio: map[string]float64{}, TruncatedRatio: map[string]float64{}, CallsPerAgent: map[string]float64{}}
	if len(episodes) == 0 {
		return m, fmt.Errorf("eval: no episodes to evaluate")
	}
	type group struct{ n, c int }
	groups := map[string]*group{}
	var order []string
	rows := map[string]int{}
	valid := map[string]int{}
	trunc := map[string]int{}
	envN := map[string]int{}
	for _, ep := range episodes {
		if !ep.Done {
			return m, fmt.Errorf("eval: episode %d (task %q) is not finished", ep.Traj, ep.Task)
		}
		key := ep.Task
		g := groups[key]
		if g == nil {
			g = &group{}
			groups[key] = g
			order = append(order, key)
		}
		g.n++
		if ep.Success {
			g.c++
			m.Accuracy++
		}
		m.MeanReward += ep.Reward
		m.RowReward += ep.Reward * float64(len(ep.Calls))
		for k, v := range ep.Metrics {
			if m.Env == nil {
				m.Env = map[string]float64{}
			}
			m.Env[k] += v
			envN[k]++
		}
		m.MeanTurns += float64(len(ep.Calls))
		for _, c := range ep.Calls {
			m.MeanResponseTokens += float64(c.ResponseTokens)
			m.MeanPromptTokens += float64(c.PromptTokens)
			rows[c.Agent]++
			if c.Valid {
				valid[c.Agent]++
			}
			if c.Truncated {
				trunc[c.Agent]++
			}
		}
	}
	e := float64(len(episodes))
	m.Episodes, m.Tasks = len(episodes), len(groups)
	m.Accuracy /= e
	m.MeanReward /= e
	if m.MeanTurns > 0 {
		m.RowReward /= m.MeanTurns // the sum of calls, before it becomes a mean
	}
	m.MeanTurns /= e
	m.MeanResponseTokens /= e
	m.MeanPromptTokens /= e
	for k, n := range envN {
		m.Env[k] /= float64(n)
	}
	sort.Strings(order)
	m.SamplesPerTask = groups[order[0]].n
	for _, p := range order {
		g := groups[p]
		m.SamplesPerTask = min(m.SamplesPerTask, g.n)
		m.AvgAtK += float64(g.c) / float64(g.n)
	}
	m.AvgAtK /= float64(len(groups))
	for _, k := range ks {
		if k < 1 || k > m.SamplesPerTask {
			return m, fmt.Errorf("eval: pass@%d needs 1 <= k <= samples per task (%d); lower k or sample more", k, m.SamplesPerTask)
		}
		sum := 0.0
		for _, p := range order {
			sum += PassAtK(groups[p].n, groups[p].c, k)
		}
		m.PassAtK[k] = sum / float64(len(groups))
	}
	for a, n := range rows {
		m.ValidRatio[a] = float64(valid[a]) / float64(n)
		m.TruncatedRatio[a] = float64(trunc[a]) / float64(n)
		m.CallsPerAgent[a] = float64(n) / e
	}
	return m, nil
}
