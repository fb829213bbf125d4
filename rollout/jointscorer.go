// jointscorer.go — the contract of a cooperative environment: it scores a
// joint action, the outputs of every agent at one turn together (writing
// and coding implement it; the joint workflow, rollout/workflow/joint,
// drives it), and the credit a completion gets for each joint action it
// takes part in (Call.Credits, one row each).
package rollout

// JointResult is an environment's judgement of one joint action.
type JointResult struct {
	Reward   float64            // the joint reward
	Success  bool               // the joint action solves the task
	Feedback string             // shown to the agents at the next turn ("" = none)
	Terms    map[string]float64 // the reward's terms, reported as reward/<term>
	Stats    map[string]float64 // other per-joint-action measures (e.g. run/timed_out), reported as is
}

// JointScorer is an environment that scores joint actions.
type JointScorer interface {
	Environment
	// JointScore scores the agents' outputs (in the workflow's agent order)
	// at a turn. It must be safe for concurrent use.
	JointScore(task Task, turn int, outputs []string) JointResult
}

// JointCredit is one joint action a completion takes part in.
type JointCredit struct {
	Joint  int
	Reward float64
}

// TermPrefix names a reward term as a metric: reward/<term>.
const TermPrefix = "reward/"

// TermMetrics returns a reward's terms named as metrics (reward/<term>), so
// that an environment's terms read the same under the joint workflow and as
// a single agent's Score.
func TermMetrics(terms map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(terms))
	for k, v := range terms {
		out[TermPrefix+k] = v
	}
	return out
}
