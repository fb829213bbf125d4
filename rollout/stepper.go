// stepper.go — the contract of a turn-based environment: a state that can
// be cloned and stepped by the agents' actions (AT-GRPO's games implement
// it; the tree workflow, rollout/workflow/tree, drives it).
//
// What it is not: a workflow. Who acts when, and how many candidates are
// tried from one state, is the workflow's; the environment only says what
// an action does.
package rollout

// State is one environment instance's mutable state.
type State interface {
	Clone() State        // a deep copy: stepping it never changes the original
	Observation() string // the text shown to the agents (.Extra.observation)
	Done() bool          // the episode is over (solved, or no moves remain)
	Success() bool       // counts as solved
}

// StepResult is the outcome of one action.
type StepResult struct {
	Reward float64 // the action's reward
	// Fixed is the part of Reward that belongs to the acting agent alone:
	// no reward_scale multiplies it and no teammate is credited it (the
	// games' −2 for an action that cannot be read, which PettingLLMs sets
	// as the agent's reward whatever its role's scale).
	Fixed   float64
	Message string             // feedback shown to the team (e.g. "hit a wall at (2,3)")
	Metrics map[string]float64 // per-step measures, summed over the episode's kept steps
}

// Stepper is an environment that can be played turn by turn.
type Stepper interface {
	Environment
	// Reset returns the initial state of a task.
	Reset(task Task) (State, error)
	// Step applies an agent's parsed action (its parser's Value; "" when the
	// output held none) to s, mutating it.
	Step(s State, agent string, action string) StepResult
}
