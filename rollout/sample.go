// sample.go — the Sample row: one agent invocation, as advantage estimators
// and the policy update consume it (ARCHITECTURE.md, "The Sample row").
//
// What it is: the row type and its construction from finished episodes,
// including the reward rule, computed here and nowhere else:
//
//	Reward      = TeamReward + LocalReward
//	LocalReward = the call's own terms − Penalty,  Penalty = agent.FormatPenalty if !Valid else 0
//
// where TeamReward is the workflow's team reward times the agent's
// reward_scale, plus its reward_offset (1 and 0 unless configured: agents
// whose rewards differ in scale or mean, as in the Dr. MAS stability
// experiment). Downstream code reads these fields as they are; it never
// recombines them.
//
// Identity: every row carries its episode (Traj, and Env: the environment
// instance it ran in, one per episode), its place in the episode (Turn,
// Node), its candidate and joint action, and its agent and model, all set
// here from the episode and the call.
//
// (Dr. MAS: r_i = R_τ − coef·[invalid]; AT-GRPO workflows put α·r_team in
// TeamReward and r_local in LocalReward).
//
// What it deliberately is not: an advantage. Grouping and normalisation
// live in advantage/, which reads only the keys and Reward.
package rollout

// Sample is one row: one agent invocation.
type Sample struct {
	Prompt    int    // prompt group id: the task's index in the rollout batch; the n trajectories of a task share it
	TaskID    string // the task's stable id (dataset row or generator seed)
	Traj      int    // trajectory (episode) id, unique in the rollout batch
	Env       int    // the environment instance the episode ran in: one per episode, so = Traj (AT-GRPO's groups never mix environments)
	Agent     string // the acting agent's name
	Turn      int    // 0-based step of the episode at which the agent acted
	Node      int    // tree sampling: the state the candidates branched from; linear workflows: = Turn
	Candidate int    // tree sampling: the candidate's index at Node; linear workflows: 0
	Joint     int    // MAGRPO: the joint action this row belongs to (its child node's id); other workflows: 0
	Model     string // the trained model that produced the response

	PromptTokens   []int     // the rendered chat, encoded; masked out of the loss
	ResponseTokens []int     // the generated ids, stop token included; the loss covers these
	SampleLogProbs []float32 // the sampler's log-probs of ResponseTokens (diagnostics; the update recomputes them)
	LossMask       []bool    // nil, or one entry per ResponseTokens token: false = left out of the loss (Call.LossMask)

	Reward      float64 // TeamReward + LocalReward
	TeamReward  float64 // the team's reward credited to this row, times the agent's reward_scale, plus its reward_offset
	LocalReward float64 // the row's own terms (AT-GRPO's r_local; 0 in math) minus Penalty
	Penalty     float64 // the agent's format penalty if the output is invalid, else 0 (already in LocalReward)

	Valid     bool // the agent's parser accepted the output's format
	Truncated bool // generation hit the agent's max_new_tokens

	PromptText   string // the rendered chat (for logs)
	ResponseText string // the decoded response, stop token left out (for logs)
	Problem      string // why the output is invalid ("" when valid)
}

// SampleOf builds the row for one completed call of a finished episode.
func SampleOf(ep *Episode, c *Call) Sample {
	pen := 0.0
	if !c.Parsed.Valid {
		pen = c.Agent.FormatPenalty
	}
	team := c.TeamReward
	if s := c.Agent.RewardScale; s != 0 {
		team *= s
	}
	team += c.Agent.RewardOffset
	return Sample{
		Prompt:         ep.Prompt,
		TaskID:         ep.Task.ID,
		Traj:           ep.Traj,
		Env:            ep.Traj,
		Agent:          c.Agent.Name,
		Turn:           c.Turn,
		Node:           c.Node,
		Candidate:      c.Candidate,
		Model:          c.Agent.Model,
		PromptTokens:   c.PromptTokens,
		ResponseTokens: c.ResponseTokens,
		SampleLogProbs: c.LogProbs,
		LossMask:       c.LossMask,
		Reward:         team + c.LocalReward - pen, // = TeamReward + LocalReward, summed in this order
		TeamReward:     team,
		LocalReward:    c.LocalReward - pen,
		Penalty:        pen,
		Valid:          c.Parsed.Valid,
		Truncated:      c.Truncated,
		PromptText:     c.PromptText,
		ResponseText:   c.Response,
		Problem:        c.Parsed.Problem,
	}
}

// Samples returns the rows of finished episodes, episode by episode, each in
// call order.
func Samples(episodes []*Episode) []Sample {
	var out []Sample
	for _, ep := range episodes {
		for _, c := range ep.Calls {
			if len(c.Credits) == 0 {
				out = append(out, SampleOf(ep, c))
				continue
			}
			// one row per joint action the completion takes part in
			for _, cr := range c.Credits {
				cc := *c
				cc.TeamReward = cr.Reward
				s := SampleOf(ep, &cc)
				s.Joint = cr.Joint
				out = append(out, s)
			}
		}
	}
	return out
}
