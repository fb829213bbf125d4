package planpath

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"troupe/rollout"
	"troupe/rollout/env/internal/split"
	"troupe/rollout/scripted"
	"troupe/rollout/workflow/tree"
)

func TestGeneratorDeterministicSolvableAndSplit(t *testing.T) {
	cfg := DefaultConfig()
	cfg.TrainSize, cfg.TestSize = 300, 100
	a, err := New(cfg, split.Train)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := New(cfg, split.Train)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("one seed gave two different train splits")
	}
	test, _ := New(cfg, split.Test)
	trainGrids := map[string]bool{}
	for i := 0; i < a.Len(); i++ {
		tk := a.Task(i)
		trainGrids[tk.Question] = true
		s, err := a.Reset(tk)
		if err != nil {
			t.Fatalf("%s: %v", tk.ID, err)
		}
		// the built-in solver's route reaches the goal in the optimal number
		// of moves and earns the optimality bonus
		st := s.(*State)
		r, invalid := st.Apply(tk.Answer)
		if !st.Success() || invalid != 0 || st.Moves != len(tk.Answer) || r < GoalReward+OptimalBonus {
			t.Fatalf("%s: solver route %q: success %v invalid %d reward %g", tk.ID, tk.Answer, st.Success(), invalid, r)
		}
	}
	same := 0
	for i := 0; i < test.Len(); i++ {
		if trainGrids[test.Task(i).Question] {
			same++
		}
	}
	if same > 0 {
		t.Errorf("%d of %d test instances also appear in train", same, test.Len())
	}
	cfg.Seed++
	c, _ := New(cfg, split.Train)
	if reflect.DeepEqual(a.Task(0), c.Task(0)) && reflect.DeepEqual(a.Task(1), c.Task(1)) {
		t.Error("another seed gave the same instances")
	}
}

// Rewards of hand-made trajectories on
//
//	...
//	.#.
//	...
//
// from (0,0) to (2,2) (shortest route 4 moves), computed by hand from the
// rules in planpath.go.
func TestRewardsOfHandMadeTrajectories(t *testing.T) {
	g, err := ParseGrid("...\n.#.\n...", Cell{0, 0}, Cell{2, 2})
	if err != nil {
		t.Fatal(err)
	}
	env := &Env{cfg: DefaultConfig()}
	task := rollout.Task{Meta: map[string]string{"grid": g.Text(), "start": "0,0", "goal": "2,2"}}
	play := func(action string) (*State, rollout.StepResult) {
		s, err := env.Reset(task)
		if err != nil {
			t.Fatal(err)
		}
		return s.(*State), env.Step(s, "plan", action)
	}
	// R: φ −4 → −3: −0.01 + (0.99·−3 + 4) = 1.02; R: −3 → −2: −0.01 + 1.02 = 1.01;
	// D: −2 → −1: −0.01 + 1.01 = 1.00; D: −1 → 0: −0.01 + 1 + 1.0 goal + 0.5 optimal = 2.49
	st, r := play(`["R", "R", "D", "D"]`)
	if math.Abs(r.Reward-5.52) > 1e-12 || !st.Success() || r.Metrics["moves"] != 4 {
		t.Errorf("optimal route: reward %.15g success %v", r.Reward, st.Success())
	}
	// D to (1,0): φ −4 → −3: −0.01 + 1.03 = 1.02; R into the wall, φ stays −3: −0.10 + (0.99·−3 + 3) = −0.07
	st, r = play("D R")
	if math.Abs(r.Reward-(1.02-0.07)) > 1e-12 || st.Pos != (Cell{1, 0}) || r.Metrics["invalid_moves"] != 1 || !strings.Contains(r.Message, "1 moves hit a wall") {
		t.Errorf("into a wall: reward %.15g at %v, %q", r.Reward, st.Pos, r.Message)
	}
	// U off the grid at the start: −0.10 + (0.99·−4 + 4) = −0.06
	if _, r = play("up"); math.Abs(r.Reward-(-0.06)) > 1e-12 {
		t.Errorf("off the grid: %.15g", r.Reward)
	}
	// a longer route to the goal: no optimality bonus; moves after the goal are ignored
	st, r = play("D D R R U")
	want := (-0.01 + (0.99*-3 + 4)) + (-0.01 + (0.99*-2 + 3)) + (-0.01 + (0.99*-1 + 2)) + (-0.01 + 1 + 1.0 + 0.5)
	if math.Abs(r.Reward-want) > 1e-12 || st.Moves != 4 {
		t.Errorf("route then extra move: %.15g want %.15g, moves %d", r.Reward, want, st.Moves)
	}
	st, r = play("R D D R") // 4 moves but through… (0,1) → (1,1) is a wall
	if st.Success() {
		t.Errorf("R D D R should not reach the goal, at %v", st.Pos)
	}
	// an unparsable action: −2, no move, the environment's message
	st, r = play("go north-east")
	if r.Reward != UnparsedReward || st.Moves != 0 || !strings.Contains(r.Message, "not understood") {
		t.Errorf("unparsable: %+v", r)
	}
}

func TestParsersAndMoves(t *testing.T) {
	for in, want := range map[string]string{`["U","d", "Left", "RIGHT"]`: "UDLR", "R, R D": "RRD"} {
		if got, err := ParseMoves(in); got != want || err != nil {
			t.Errorf("ParseMoves(%q) = %q, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "[]", `["X"]`, "[1, 2]"} {
		if _, err := ParseMoves(bad); err == nil {
			t.Errorf("ParseMoves(%q) accepted", bad)
		}
	}
	if p := toolParser.Parse("BFS says...\n**Actions List**: [\"R\", \"D\"]"); !p.Valid || p.Value != `["R", "D"]` {
		t.Errorf("tool: %+v", p)
	}
	if p := planParser.Parse("looks fine\n#### [\"R\"]\nthanks"); !p.Valid || p.Value != `["R"]` {
		t.Errorf("plan: %+v", p)
	}
	if p := planParser.Parse("Actions List: [\"R\"]"); p.Valid {
		t.Errorf("plan without ####: %+v", p)
	}
	if p := toolParser.Parse("Actions List: [\"north\"]"); p.Valid || p.Value == "" {
		t.Errorf("tool with a bad move: %+v (the value is kept so it can still be stepped)", p)
	}
}

func TestBadGridsAreErrors(t *testing.T) {
	for _, c := range []struct {
		grid        string
		start, goal Cell
	}{
		{"..\n.", Cell{0, 0}, Cell{0, 1}},
		{"..\n.x", Cell{0, 0}, Cell{0, 1}},
		{"..\n..", Cell{0, 0}, Cell{0, 0}},
		{"#.\n..", Cell{0, 0}, Cell{1, 1}},
		{"..\n..", Cell{0, 0}, Cell{5, 5}},
	} {
		if _, err := ParseGrid(c.grid, c.start, c.goal); err == nil {
			t.Errorf("%q %v→%v accepted", c.grid, c.start, c.goal)
		}
	}
	env := &Env{cfg: DefaultConfig()}
	if _, err := env.Reset(rollout.Task{Meta: map[string]string{"grid": ".#.\n###\n...", "start": "0,0", "goal": "2,2"}}); err == nil {
		t.Error("an unsolvable grid was reset")
	}
}

// The tree-sampling workflow on real instances with scripted agents: a tool
// agent whose candidates are right, wrong or unparsable by seed (scored on
// a copy, never executed) and a planner that follows the demonstrations.
func TestTreeSamplingOnPlanPath(t *testing.T) {
	env, err := New(DefaultConfig(), split.Train)
	if err != nil {
		t.Fatal(err)
	}
	var agents []*rollout.Agent
	for _, c := range []rollout.AgentConfig{
		{Name: "tool", Model: "policy", Preset: "plan-path-tool", FormatPenalty: 0.1},
		{Name: "plan", Model: "policy", Preset: "plan-path-plan", FormatPenalty: 0.1, RewardScale: 2},
	} {
		a, err := rollout.NewAgent("agents", c, rollout.AgentDefaults{Sampling: rollout.DefaultSampling, MaxNewTokens: 400}, scripted.Binding())
		if err != nil {
			t.Fatal(err)
		}
		agents = append(agents, a)
	}
	wf, err := rollout.NewWorkflow("tree", tree.DefaultOptions(), agents, env)
	if err != nil {
		t.Fatal(err)
	}
	tasks := []rollout.Task{env.Task(0), env.Task(1), env.Task(2)}
	taskOf := func(prompt string) rollout.Task {
		for _, tk := range tasks {
			if strings.Contains(prompt, tk.Question) {
				return tk
			}
		}
		t.Fatalf("no task in %q", prompt)
		return rollout.Task{}
	}
	respond := scripted.Match(
		scripted.Rule{Contains: "You are the Tool agent", Reply: func(p string, seed uint64) string {
			switch seed % 3 {
			case 0:
				return env.Demonstrate("tool", taskOf(p), p, true)
			case 1:
				return env.Demonstrate("tool", taskOf(p), p, false)
			}
			return "I could not find a route."
		}},
		scripted.Rule{Contains: "You are the Plan agent", Reply: func(p string, _ uint64) string {
			return env.Demonstrate("plan", taskOf(p), p, true)
		}},
	)
	s := rollout.Sampler{Generators: map[string]rollout.Generator{"policy": scripted.New(respond)}}
	out, err := s.Run(wf, tasks, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range out.Episodes {
		if !ep.Success || ep.Metrics["game_turns"] != 1 {
			t.Errorf("%s: success %v turns %g", ep.Task.ID, ep.Success, ep.Metrics["game_turns"])
		}
		// only the plan's step counts toward the episode: the optimal route
		st, _ := env.Reset(ep.Task)
		r, _ := st.(*State).Apply(ep.Task.Answer)
		if math.Abs(ep.Reward-r) > 1e-9 {
			t.Errorf("%s: episode reward %g, the optimal route's %g", ep.Task.ID, ep.Reward, r)
		}
		tools, plans := 0, 0
		for _, c := range ep.Calls {
			switch c.Agent.Name {
			case "tool":
				tools++
			case "plan":
				plans++
			}
		}
		if tools != 4 || plans != 4 {
			t.Errorf("%s: %d tool and %d plan candidates, want 4 and 4", ep.Task.ID, tools, plans)
		}
		// the planner saw the best tool proposal (an optimal route when one of
		// the 4 candidates had it)
		planPrompt := ep.Calls[4].PromptText
		if !strings.Contains(planPrompt, "if executed: tool moved") {
			t.Errorf("%s: the planner did not see the simulated tool step:\n%s", ep.Task.ID, planPrompt)
		}
	}
	// every candidate's team reward is its own step's reward: the unparsable
	// tool candidates earn −2 as their own term, the planner's scale
	// doubles its reward
	for _, r := range out.Samples {
		if r.Agent == "tool" && strings.Contains(r.ResponseText, "could not") && (r.TeamReward != 0 || r.LocalReward != UnparsedReward-0.1 || r.Reward != UnparsedReward-0.1) {
			t.Errorf("unparsable tool row: team %g local %g reward %g", r.TeamReward, r.LocalReward, r.Reward)
		}
		if ep := out.Episodes[r.Traj]; r.Agent == "plan" && math.Abs(r.TeamReward-2*ep.Reward) > 1e-9 {
			t.Errorf("plan row: team reward %g, want 2 × the executed step's %g", r.TeamReward, ep.Reward)
		}
	}
}

// A plan agent whose action cannot be read earns −2, whatever its
// reward_scale, as PettingLLMs' plan agent sets it (plan_agent.py at
// 244467e: agent_reward = −2, plus the empty action's step reward 0); the
// tool agent before it (no tree) keeps its own step and is credited the
// plan's step, 0.
func TestUnreadablePlanEarnsMinusTwo(t *testing.T) {
	env, err := New(Config{Seed: 1, Rows: 5, Cols: 5, WallProb: 0.2, TrainSize: 5, TestSize: 5}, "train")
	if err != nil {
		t.Fatal(err)
	}
	var agents []*rollout.Agent
	for _, c := range []rollout.AgentConfig{
		{Name: "tool", Model: "policy", Preset: "plan-path-tool"},
		{Name: "plan", Model: "policy", Preset: "plan-path-plan", RewardScale: 2},
	} {
		a, err := rollout.NewAgent("agents", c, rollout.AgentDefaults{Sampling: rollout.DefaultSampling, MaxNewTokens: 400}, scripted.Binding())
		if err != nil {
			t.Fatal(err)
		}
		agents = append(agents, a)
	}
	o := tree.DefaultOptions()
	o.Candidates, o.Mode, o.MaxTurns = 1, tree.ModeNoTree, 1
	wf, err := rollout.NewWorkflow("tree", o, agents, env)
	if err != nil {
		t.Fatal(err)
	}
	task := env.Task(0)
	respond := scripted.Match(
		scripted.Rule{Contains: "You are the Tool agent", Reply: func(p string, _ uint64) string { return env.Demonstrate("tool", task, p, true) }},
		scripted.Rule{Contains: "You are the Plan agent", Reply: func(string, uint64) string { return "I am not sure." }},
	)
	s := rollout.Sampler{Generators: map[string]rollout.Generator{"policy": scripted.New(respond)}}
	out, err := s.Run(wf, []rollout.Task{task}, 1, 4)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := env.Reset(task)
	toolStep, _ := st.(*State).Apply(task.Answer) // the tool's route, simulated
	for _, r := range out.Samples {
		switch r.Agent {
		case "plan":
			if r.Reward != -2 {
				t.Errorf("unreadable plan: reward %g (team %g, own %g), want the reference's −2", r.Reward, r.TeamReward, r.LocalReward)
			}
		case "tool":
			if math.Abs(r.Reward-toolStep) > 1e-9 {
				t.Errorf("tool: reward %g, want its simulated step %g plus the plan's 0", r.Reward, toolStep)
			}
		}
	}
}
