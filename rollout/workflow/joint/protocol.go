package joint

// protocol.go — the prompt-only baselines of the MAGRPO paper: the same
// agents and joint reward, no training, three ways of letting the agents
// see each other (workflow.joint.protocol). They are the "parallel",
// "sequential" ("pipeline") and "one-round discussion" baselines of CoMLRL's
// task repositories (LLM_Collab_Writing evals/eval_tldr_{parallel,pipeline,
// discussion}.py; LLM_Collab_Code_Generation baselines/multi_agent_tti.py,
// modes naive_concat, sequential_pipeline, one_round_discussion):
//
//	parallel    every agent answers the task alone; the joint reward scores
//	            the answers (one turn)
//	sequential  the agents answer in order, each seeing the answers of the
//	            agents before it (one turn)
//	discussion  a parallel round, then a second in which each agent sees
//	            its own first answer and its teammates' and answers again;
//	            only the second round is scored (two turns)
//
// team (the default) is MAGRPO's joint actions (joint.go). The baselines
// run one completion per agent and round, which is how evaluation runs
// (ForEval); a training rollout with G > 1 is refused, as the baselines
// are prompt-only. No round shows the agents the reward's feedback.
//
// What it is not: the reference's prompts. The agents keep their presets;
// a teammate's answer reaches an agent through .Extra "teammates" (and its
// own first answer through "previous"), as in the joint workflow's later
// turns.

import (
	"fmt"

	"troupe/rollout"
)

// Protocols (Options.Protocol).
const (
	Team       = "team"       // MAGRPO's joint actions (joint.go)
	Parallel   = "parallel"   // every agent alone
	Sequential = "sequential" // each agent sees the answers before its own
	Discussion = "discussion" // a parallel round, then one that sees the first
)

// protocolTurns is the number of turns each baseline protocol runs.
var protocolTurns = map[string]int{Parallel: 1, Sequential: 1, Discussion: 2}

// validateProtocol checks the protocol and the turns it needs.
func (o Options) validateProtocol() error {
	if o.Protocol == Team || o.Protocol == "" { // "": team, for options built in code
		return nil
	}
	turns, ok := protocolTurns[o.Protocol]
	if !ok {
		return fmt.Errorf("workflow.joint.protocol: must be %q, %q, %q or %q, got %q", Team, Parallel, Sequential, Discussion, o.Protocol)
	}
	if o.Turns != turns {
		return fmt.Errorf("workflow.joint.protocol: %s runs %d turn(s), got workflow.joint.turns %d; set workflow.joint.turns=%d", o.Protocol, turns, o.Turns, turns)
	}
	return nil
}

// baselineState is a prompt-only episode in progress.
type baselineState struct {
	round   int        // the turn being answered
	next    int        // sequential: the agent answering now
	outputs [][]string // outputs[round][agent]
}

func (w *Workflow) beginBaseline(ep *rollout.Episode) ([]*rollout.Call, error) {
	if w.opts.Samples != 1 {
		return nil, fmt.Errorf("workflow.joint.protocol: %s is a prompt-only baseline, run with one sample per agent (train eval); train with protocol: %s", w.opts.Protocol, Team)
	}
	st := &baselineState{outputs: [][]string{make([]string, len(w.agents))}}
	ep.State = st
	return w.baselineCalls(ep, st), nil
}

// baselineCalls are the calls of the current round: every agent's, or the
// next agent's under sequential.
func (w *Workflow) baselineCalls(ep *rollout.Episode, st *baselineState) []*rollout.Call {
	who := make([]int, 0, len(w.agents))
	if w.opts.Protocol == Sequential {
		who = append(who, st.next)
	} else {
		for i := range w.agents {
			who = append(who, i)
		}
	}
	var out []*rollout.Call
	for _, i := range who {
		d := rollout.NewPromptData(ep.Task.Question, nil, st.round)
		d.Loop, d.MaxLoops = st.round, w.opts.Turns
		var mates []rollout.TeamEntry
		var own []string
		switch {
		case w.opts.Protocol == Sequential:
			for k := 0; k < i; k++ {
				mates = append(mates, rollout.TeamEntry{Agent: w.agents[k].Name, Text: st.outputs[0][k]})
			}
		case st.round > 0: // discussion's second round
			own = []string{st.outputs[0][i]}
			for k := range w.agents {
				if k != i {
					mates = append(mates, rollout.TeamEntry{Agent: w.agents[k].Name, Text: st.outputs[0][k]})
				}
			}
		}
		d.Extra = map[string]string{"previous": history(own, nil), "teammates": history(nil, mates), "feedback": ""}
		d.Teammates = mates
		out = append(out, &rollout.Call{Agent: w.agents[i], Turn: st.round, Node: st.round, Data: d})
	}
	return out
}

func (w *Workflow) advanceBaseline(ep *rollout.Episode, done []*rollout.Call) ([]*rollout.Call, error) {
	st, ok := ep.State.(*baselineState)
	if !ok || len(done) == 0 {
		return nil, fmt.Errorf("joint: episode %d: %s round without its state or calls", ep.Traj, w.opts.Protocol)
	}
	for _, c := range done {
		i := w.agentIndex(c.Agent)
		if i < 0 || c.Turn != st.round {
			return nil, fmt.Errorf("joint: episode %d: a completion of %s at turn %d does not belong to round %d", ep.Traj, c.Agent.Name, c.Turn, st.round)
		}
		st.outputs[st.round][i] = c.Response
	}
	if w.opts.Protocol == Sequential && st.next+1 < len(w.agents) {
		st.next++
		return w.baselineCalls(ep, st), nil
	}
	if st.round+1 < w.opts.Turns {
		st.round++
		st.outputs = append(st.outputs, make([]string, len(w.agents)))
		return w.baselineCalls(ep, st), nil
	}
	res := w.env.JointScore(ep.Task, st.round, st.outputs[st.round])
	for _, c := range ep.Calls {
		if c.Turn == st.round {
			c.Credits = append(c.Credits, rollout.JointCredit{Joint: 1, Reward: res.Reward})
		}
	}
	ep.Done, ep.Success, ep.Reward = true, res.Success, res.Reward
	ep.Metrics = map[string]float64{"joint_reward": res.Reward, "terminated_nodes": 0}
	for k, v := range res.Terms {
		ep.Metrics[rollout.TermPrefix+k] = v
	}
	for k, v := range res.Stats {
		ep.Metrics[k] = v
	}
	return nil, nil
}

func (w *Workflow) agentIndex(a *rollout.Agent) int {
	for i, b := range w.agents {
		if a == b {
			return i
		}
	}
	return -1
}
