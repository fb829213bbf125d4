package tree_test

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"

	"troupe/advantage"
	"troupe/rollout"
	"troupe/rollout/scripted"
	"troupe/rollout/workflow/tree"
)

// toyState remembers the kept actions.
type toyState struct{ kept []string }

func (s *toyState) Clone() rollout.State {
	return &toyState{kept: append([]string(nil), s.kept...)}
}
func (s *toyState) Observation() string { return "kept: " + strings.Join(s.kept, " | ") }
func (s *toyState) Done() bool          { return false }
func (s *toyState) Success() bool       { return len(s.kept) == 4 }

// toyEnv steps an action "r=<reward> <tag>": the reward is the number.
type toyEnv struct{ exactScorer }

func (toyEnv) Name() string          { return "toy" }
func (toyEnv) Len() int              { return 1 }
func (toyEnv) Task(int) rollout.Task { return rollout.Task{ID: "toy-0", Question: "play"} }
func (toyEnv) Reset(rollout.Task) (rollout.State, error) {
	return &toyState{}, nil
}
func (toyEnv) Step(s rollout.State, agent, action string) rollout.StepResult {
	f := strings.Fields(action)
	r, _ := strconv.ParseFloat(strings.TrimPrefix(f[0], "r="), 64)
	st := s.(*toyState)
	st.kept = append(st.kept, agent+":"+action)
	return rollout.StepResult{Reward: r, Message: agent + " did " + action, Metrics: map[string]float64{"steps": 1}}
}

func treeAgents(t *testing.T) []*rollout.Agent {
	t.Helper()
	user := "{{.Task}}\n{{index .Extra \"observation\"}}\n{{.Role}}"
	return compileAgents(t, []rollout.AgentConfig{
		{Name: "tool", Model: "policy", Role: "You are the tool.", User: user},
		{Name: "plan", Model: "policy", Role: "You are the planner.", User: user},
	})
}

// In hand-built episode, the candidate rewards of each (turn, agent) are
// the AT-GRPO reference vector's; the workflow must sample K from one state,
// continue from the best (lowest index on ties), credit each candidate its
// own reward, and the estimator must give the reference advantages.
func TestTreeSamplingHandBuiltEpisode(t *testing.T) {
	rewards := map[string][]string{ // the k-th sighting of a (turn, agent) prompt gets the k-th reward
		"tool/0": {"0.2", "1.0", "-2.0"},
		"plan/0": {"0.5", "0.5", "0.5"},
		"tool/1": {"2.0", "0.0", "2.0"},
		"plan/1": {"3.0", "1.0", "1.0"},
	}
	var mu sync.Mutex
	seen := map[string]int{}
	prompts := map[string][]string{}
	respond := func(prompt string, _ uint64) string {
		role := "tool"
		if strings.Contains(prompt, "You are the planner.") {
			role = "plan"
		}
		_, line, _ := strings.Cut(prompt, "kept: ")
		line, _, _ = strings.Cut(line, "\n")
		kept := 0
		if line != "" {
			kept = strings.Count(line, "|") + 1
		}
		turn := kept / 2 // the tool acts after 2t kept actions, the planner after 2t+1
		if role == "plan" {
			turn = (kept - 1) / 2
		}
		key := fmt.Sprintf("%s/%d", role, turn)
		mu.Lock()
		defer mu.Unlock()
		k := seen[key]
		seen[key]++
		prompts[key] = append(prompts[key], prompt)
		return fmt.Sprintf("r=%s c%d", rewards[key][k], k)
	}
	o := tree.Options{Agents: []string{"tool", "plan"}, Candidates: 3, MaxTurns: 2}
	wf, err := rollout.NewWorkflow("tree", o, treeAgents(t), toyEnv{})
	if err != nil {
		t.Fatal(err)
	}
	s := rollout.Sampler{Generators: map[string]rollout.Generator{"policy": scripted.New(respond)}}
	out, err := s.Run(wf, []rollout.Task{toyEnv{}.Task(0)}, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	for key, ps := range prompts {
		if len(ps) != 3 || ps[0] != ps[1] || ps[1] != ps[2] {
			t.Errorf("%s: the %d candidates did not share one prompt (one state)", key, len(ps))
		}
	}
	// the kept branch: tool/0 candidate 1, plan/0 candidate 0 (tie), tool/1 candidate 0 (tie)
	if want := "kept: tool:r=1.0 c1 | plan:r=0.5 c0 | tool:r=2.0 c0"; !strings.Contains(prompts["plan/1"][0], want) {
		t.Errorf("the last state is not the best branch:\n%s\nwant %q", prompts["plan/1"][0], want)
	}
	ep := out.Episodes[0]
	if !ep.Done || !ep.Success || math.Abs(ep.Reward-(1.0+0.5+2.0+3.0)) > 1e-12 || ep.Metrics["steps"] != 4 || ep.Metrics["game_turns"] != 2 {
		t.Errorf("episode: done %v success %v reward %g metrics %v", ep.Done, ep.Success, ep.Reward, ep.Metrics)
	}
	if len(out.Samples) != 12 {
		t.Fatalf("%d rows, want 2 turns × 2 agents × 3 candidates", len(out.Samples))
	}
	rows := make([]advantage.Row, len(out.Samples))
	for i, r := range out.Samples {
		want, _ := strconv.ParseFloat(rewards[fmt.Sprintf("%s/%d", r.Agent, r.Turn)][r.Candidate], 64)
		if r.TeamReward != want || r.Reward != want {
			t.Errorf("row %d (%s turn %d cand %d): team %g reward %g, want %g", i, r.Agent, r.Turn, r.Candidate, r.TeamReward, r.Reward, want)
		}
		rows[i] = advantage.Row{Prompt: r.Prompt, Traj: r.Traj, Env: r.Traj, Agent: r.Agent, Turn: r.Turn, Node: r.Node, Candidate: r.Candidate, Model: r.Model, Reward: r.Reward}
	}
	res, err := advantage.ATGRPO{Options: advantage.DefaultOptions()}.Compute(rows)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]float64{ // algorithms.md vector 3; plan/1 by hand: mean 5/3, sample std √(4/3)
		"tool/0": {0.300399, 0.815368, -1.115766},
		"plan/0": {0, 0, 0},
		"tool/1": {0.57735, -1.1547, 0.57735},
		"plan/1": {1.154700, -0.577350, -0.577350},
	}
	for i, r := range out.Samples {
		w := want[fmt.Sprintf("%s/%d", r.Agent, r.Turn)][r.Candidate]
		if math.Abs(res.Advantages[i]-w) > 1e-5 {
			t.Errorf("row %d (%s turn %d cand %d): advantage %.6f, want %.6f", i, r.Agent, r.Turn, r.Candidate, res.Advantages[i], w)
		}
	}
	if len(res.Groups) != 4 {
		t.Errorf("%d groups, want 4", len(res.Groups))
	}

	// evaluation samples one candidate per (turn, agent)
	ev := wf.(rollout.EvalWorkflow).ForEval()
	seen = map[string]int{}
	out, err = s.Run(ev, []rollout.Task{toyEnv{}.Task(0)}, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Samples) != 4 {
		t.Errorf("evaluation: %d rows, want 4", len(out.Samples))
	}
}

func TestTreeRefusesWhatCannotWork(t *testing.T) {
	o := tree.DefaultOptions()
	o.Agents = []string{"tool", "plan"}
	if _, err := rollout.NewWorkflow("tree", o, treeAgents(t), exactScorer{}); err == nil || !strings.Contains(err.Error(), "cannot be stepped") {
		t.Errorf("a scorer-only environment: %v", err)
	}
	o.Agents = []string{"tool", "critic"}
	if _, err := rollout.NewWorkflow("tree", o, treeAgents(t), toyEnv{}); err == nil || !strings.Contains(err.Error(), "critic") {
		t.Errorf("an unknown agent: %v", err)
	}
	for _, bad := range []tree.Options{
		{Agents: []string{"a"}, Candidates: 0, MaxTurns: 1},
		{Agents: []string{"a", "a"}, Candidates: 2, MaxTurns: 1},
		{Agents: []string{"a"}, Candidates: 2, MaxTurns: 0},
	} {
		if bad.Validate() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// Without a tree each environment runs one candidate per (turn, agent); the
// simulated tool call is credited its own simulated reward plus the plan's
// executed reward of the same turn (the reference's calculate_reward), the
// plan its own; atgrpo keyed by prompt then groups the n environments of the
// task turn by turn.
func TestNoTreeCreditsThePlanToTheTool(t *testing.T) {
	var mu sync.Mutex
	count := 0
	respond := func(prompt string, _ uint64) string {
		mu.Lock()
		defer mu.Unlock()
		count++
		return fmt.Sprintf("r=%d c", count%5) // rewards 0..4, varied across environments and turns
	}
	o := tree.Options{Agents: []string{"tool", "plan"}, Candidates: 1, MaxTurns: 2, Simulate: []string{"tool"}, Mode: tree.ModeNoTree}
	wf, err := rollout.NewWorkflow("tree", o, treeAgents(t), toyEnv{})
	if err != nil {
		t.Fatal(err)
	}
	s := rollout.Sampler{Generators: map[string]rollout.Generator{"policy": scripted.New(respond)}}
	const n = 4
	out, err := s.Run(wf, []rollout.Task{toyEnv{}.Task(0)}, n, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Samples) != n*2*2 {
		t.Fatalf("%d rows, want %d environments × 2 turns × 2 agents", len(out.Samples), n)
	}
	own := func(s rollout.Sample) float64 {
		r, _ := strconv.ParseFloat(strings.TrimPrefix(strings.Fields(s.ResponseText)[0], "r="), 64)
		return r
	}
	plan := map[[2]int]float64{}
	for _, s := range out.Samples {
		if s.Agent == "plan" {
			plan[[2]int{s.Traj, s.Turn}] = own(s)
		}
	}
	rows := make([]advantage.Row, len(out.Samples))
	for i, s := range out.Samples {
		want := own(s)
		if s.Agent == "tool" {
			want += plan[[2]int{s.Traj, s.Turn}]
		}
		if s.Candidate != 0 || s.TeamReward != want {
			t.Errorf("row %d (%s, env %d, turn %d): candidate %d, team reward %g, want %g", i, s.Agent, s.Traj, s.Turn, s.Candidate, s.TeamReward, want)
		}
		rows[i] = advantage.Row{Prompt: s.Prompt, Traj: s.Traj, Env: s.Traj, Agent: s.Agent, Turn: s.Turn, Candidate: s.Candidate, Model: s.Model, Reward: s.Reward}
	}
	opt := advantage.DefaultOptions()
	opt.ATGRPO.Key = advantage.KeyPrompt
	res, err := advantage.ATGRPO{Options: opt}.Compute(rows)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Groups) != 4 {
		t.Errorf("%d groups, want (turn, agent) × 2 × 2", len(res.Groups))
	}
	for _, g := range res.Groups {
		if g.Samples != n {
			t.Errorf("group %s: %d samples, want the %d environments", g.Label, g.Samples, n)
		}
	}
	bad := o
	bad.Candidates = 3
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "set candidates: 1") {
		t.Errorf("no-tree with 3 candidates: %v", err)
	}
}
