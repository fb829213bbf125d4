// Package mathrefine is Dr. MAS's math orchestra: a Solver answers, a
// Verifier approves or rejects, and a rejected answer is refined, up to
// max_loops. It is registered as the workflow "math-refine" with its
// options under workflow.math_refine.
//
// Files: mathrefine.go (the workflow and its options), register.go (the
// registration: default team, estimators, roles).
//
// Per episode, for loop i = 0 … max_loops−1:
//
//	Solver answers (step by step, final answer in \boxed{});
//	on the last loop stop here (unless verify_final);
//	Verifier reviews the latest answer: <verify>approve</verify> → stop,
//	<verify>reject</verify> → next loop.
//
// The reward is the environment's score of the last Solver output, shared by
// every row. With max_loops = 2: S,V when approved, S,V,S when rejected.
//
// Departures and options (the reference's quirks are options, defaults
// reproduce the reference):
//  1. missing_verdict: what a Verifier output with no approve/reject tag
//     means. "approve" (reference) ends the episode; "reject" refines.
//  2. verify_final: the reference never verifies the final Solver answer
//     (false). true adds a last Verifier row, trained on the same team
//     reward; its verdict changes nothing.
//  3. The reference loops over a batch until every item is approved; here
//     each episode stops on its own approval, which is the same per item.
//  4. Team context holds each output's text after </think> (thinking is
//     private to the agent that did it); the reference ran with thinking off,
//     where the two agree.
package mathrefine

import (
	"fmt"

	"troupe/rollout"
)

// Options configures math-refine.
type Options struct {
	Solver         string `yaml:"solver"`          // name of the solving agent
	Verifier       string `yaml:"verifier"`        // name of the verifying agent
	MaxLoops       int    `yaml:"max_loops"`       // Solver turns at most
	MissingVerdict string `yaml:"missing_verdict"` // "approve" (reference) or "reject"
	VerifyFinal    bool   `yaml:"verify_final"`    // also verify the last Solver answer (reference: false)
}

// DefaultOptions returns the reference settings.
func DefaultOptions() Options {
	return Options{Solver: "solver", Verifier: "verifier", MaxLoops: 2, MissingVerdict: rollout.VerdictApprove}
}

// Validate checks ranges; errors name the key and the fix.
func (o Options) Validate() error {
	switch {
	case o.Solver == "":
		return fmt.Errorf("workflow.math_refine.solver: must name the solving agent")
	case o.Verifier == "":
		return fmt.Errorf("workflow.math_refine.verifier: must name the verifying agent")
	case o.Solver == o.Verifier:
		return fmt.Errorf("workflow.math_refine.verifier: must differ from the solver, both are %q", o.Solver)
	case o.MaxLoops < 1:
		return fmt.Errorf("workflow.math_refine.max_loops: must be >= 1, got %d", o.MaxLoops)
	case o.MissingVerdict != rollout.VerdictApprove && o.MissingVerdict != rollout.VerdictReject:
		return fmt.Errorf("workflow.math_refine.missing_verdict: must be %q or %q, got %q", rollout.VerdictApprove, rollout.VerdictReject, o.MissingVerdict)
	}
	return nil
}

// Workflow is the Solver/Verifier iterative refinement workflow.
type Workflow struct {
	opts     Options
	solver   *rollout.Agent
	verifier *rollout.Agent
	scorer   rollout.Scorer
}

// mathRefineState is an episode's position in the loop.
type mathRefineState struct {
	loop       int           // current loop (0-based)
	lastSolver *rollout.Call // the answer that will be scored
}

// New builds the workflow; agents must include the two named roles.
func New(opts Options, agents []*rollout.Agent, scorer rollout.Scorer) (*Workflow, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	s, err := rollout.AgentByName(agents, opts.Solver, "workflow.math_refine.solver")
	if err != nil {
		return nil, err
	}
	v, err := rollout.AgentByName(agents, opts.Verifier, "workflow.math_refine.verifier")
	if err != nil {
		return nil, err
	}
	return &Workflow{opts: opts, solver: s, verifier: v, scorer: scorer}, nil
}

func (w *Workflow) Name() string             { return "math-refine" }
func (w *Workflow) Agents() []*rollout.Agent { return []*rollout.Agent{w.solver, w.verifier} }

func (w *Workflow) call(ep *rollout.Episode, a *rollout.Agent, loop int) *rollout.Call {
	d := rollout.NewPromptData(ep.Task.Question, ep.Context, 0)
	c := ep.Linear(a, d)
	c.Data.Loop, c.Data.MaxLoops = loop, w.opts.MaxLoops
	return c
}

func (w *Workflow) Begin(ep *rollout.Episode) ([]*rollout.Call, error) {
	ep.State = &mathRefineState{}
	return []*rollout.Call{w.call(ep, w.solver, 0)}, nil
}

func (w *Workflow) Advance(ep *rollout.Episode, done []*rollout.Call) ([]*rollout.Call, error) {
	st, ok := ep.State.(*mathRefineState)
	if !ok || len(done) != 1 {
		return nil, fmt.Errorf("math-refine: episode %d: expected one completed call and the workflow's state, got %d calls", ep.Traj, len(done))
	}
	c := done[0]
	ep.Remember(c)
	last := st.loop == w.opts.MaxLoops-1
	switch c.Agent {
	case w.solver:
		st.lastSolver = c
		if last && !w.opts.VerifyFinal {
			return w.finish(ep, st)
		}
		return []*rollout.Call{w.call(ep, w.verifier, st.loop)}, nil
	case w.verifier:
		if w.verdict(c) == rollout.VerdictApprove || last {
			return w.finish(ep, st)
		}
		st.loop++
		return []*rollout.Call{w.call(ep, w.solver, st.loop)}, nil
	}
	return nil, fmt.Errorf("math-refine: episode %d: call from unexpected agent %q", ep.Traj, c.Agent.Name)
}

// verdict applies the missing_verdict option to a parsed Verifier output.
func (w *Workflow) verdict(c *rollout.Call) string {
	if c.Parsed.Value == rollout.VerdictApprove || c.Parsed.Value == rollout.VerdictReject {
		return c.Parsed.Value
	}
	return w.opts.MissingVerdict
}

func (w *Workflow) finish(ep *rollout.Episode, st *mathRefineState) ([]*rollout.Call, error) {
	ep.Finish(w.scorer.Score(ep.Task, st.lastSolver.Response))
	return nil, nil
}
