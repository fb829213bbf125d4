package joint_test

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
	"troupe/rollout/workflow/joint"
)

// jointToy rewards a joint action with the number the first agent wrote
// ("r=<x>") and feeds back which joint action it was.
type jointToy struct{ exactScorer }

func (jointToy) Name() string          { return "joint-toy" }
func (jointToy) Len() int              { return 1 }
func (jointToy) Task(int) rollout.Task { return rollout.Task{ID: "toy", Question: "write"} }
func (jointToy) JointScore(_ rollout.Task, turn int, outputs []string) rollout.JointResult {
	r, _ := strconv.ParseFloat(strings.Fields(strings.TrimPrefix(outputs[0], "r="))[0], 64)
	return rollout.JointResult{Reward: r, Success: r >= 2, Feedback: fmt.Sprintf("turn %d: %s + %s", turn, outputs[0], outputs[1]),
		Terms: map[string]float64{"first_len": float64(len(outputs[0]))}}
}

func jointAgents(t *testing.T) []*rollout.Agent {
	t.Helper()
	user := "{{.Task}} [{{index .Extra \"feedback\"}}] {{.Role}}"
	return compileAgents(t, []rollout.AgentConfig{
		{Name: "first", Model: "policy", Role: "You write first.", User: user},
		{Name: "second", Model: "policy", Role: "You write second.", User: user},
	})
}

// counting answers the k-th sighting of a prompt with replies[prompt key][k].
func counting(replies func(prompt string, k int) string) scripted.Responder {
	var mu sync.Mutex
	seen := map[string]int{}
	return func(prompt string, _ uint64) string {
		mu.Lock()
		k := seen[prompt]
		seen[prompt]++
		mu.Unlock()
		return replies(prompt, k)
	}
}

func runJoint(t *testing.T, opts joint.Options, respond scripted.Responder) *rollout.Rollout {
	t.Helper()
	wf, err := rollout.NewWorkflow("joint", opts, jointAgents(t), jointToy{})
	if err != nil {
		t.Fatal(err)
	}
	s := rollout.Sampler{Generators: map[string]rollout.Generator{"policy": scripted.New(respond)}}
	out, err := s.Run(wf, []rollout.Task{jointToy{}.Task(0)}, 1, 7)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func magrpoRows(out *rollout.Rollout) []advantage.Row {
	rows := make([]advantage.Row, len(out.Samples))
	for i, s := range out.Samples {
		rows[i] = advantage.Row{Prompt: s.Prompt, Traj: s.Traj, Agent: s.Agent, Turn: s.Turn, Node: s.Node, Joint: s.Joint, Candidate: s.Candidate, Reward: s.Reward}
	}
	return rows
}

// Vector 4 of algorithms.md: G = 4 aligned, joint rewards [3, 1, 2, 2] →
// mean-baseline advantages [1, −1, 0, 0] for every agent.
func TestJointAlignedSingleTurn(t *testing.T) {
	rewards := []string{"3", "1", "2", "2"}
	out := runJoint(t, joint.Options{Agents: []string{"first", "second"}, Samples: 4, Turns: 1, Mode: joint.Aligned},
		counting(func(p string, k int) string {
			if strings.Contains(p, "You write first.") {
				return "r=" + rewards[k] + " draft"
			}
			return fmt.Sprintf("second %d", k)
		}))
	if len(out.Samples) != 8 {
		t.Fatalf("%d rows, want 4 joint actions × 2 agents", len(out.Samples))
	}
	for _, s := range out.Samples {
		if s.Joint != s.Candidate+1 || s.Node != 0 || s.Turn != 0 {
			t.Errorf("%s candidate %d: joint %d node %d turn %d", s.Agent, s.Candidate, s.Joint, s.Node, s.Turn)
		}
	}
	res, err := advantage.MAGRPO{Options: advantage.DefaultOptions()}.Compute(magrpoRows(out))
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1, -1, 0, 0}
	for i, s := range out.Samples {
		if math.Abs(res.Advantages[i]-want[s.Candidate]) > 1e-12 {
			t.Errorf("%s candidate %d: advantage %g, want %g", s.Agent, s.Candidate, res.Advantages[i], want[s.Candidate])
		}
	}
	ep := out.Episodes[0]
	if !ep.Done || ep.Reward != 2 || ep.Metrics["reward/first_len"] != float64(len("r=3 draft")) {
		t.Errorf("episode: %+v", ep.Metrics)
	}
}

// Two turns, γ = 0.9 (vector 4): root rewards [0.5, 1.0], child returns
// [[1, 0], [2, 2]] → root returns [0.95, 2.8]; the children see their
// parent's feedback.
func TestJointTwoTurnsReturns(t *testing.T) {
	var prompts []string
	var mu sync.Mutex
	out := runJoint(t, joint.Options{Agents: []string{"first", "second"}, Samples: 2, Turns: 2, Mode: joint.Aligned},
		counting(func(p string, k int) string {
			mu.Lock()
			prompts = append(prompts, p)
			mu.Unlock()
			if !strings.Contains(p, "You write first.") {
				return "ok"
			}
			switch {
			case strings.Contains(p, "[]"): // the root
				return []string{"r=0.5 a", "r=1.0 b"}[k]
			case strings.Contains(p, "r=0.5 a"):
				return []string{"r=1 c", "r=0 d"}[k]
			default:
				return []string{"r=2 e", "r=2 f"}[k]
			}
		}))
	// 2 root joint actions + 2 × 2 child joint actions, 2 agents each
	if len(out.Samples) != 12 {
		t.Fatalf("%d rows, want 12", len(out.Samples))
	}
	res, err := advantage.MAGRPO{Options: advantage.DefaultOptions()}.Compute(magrpoRows(out))
	if err != nil {
		t.Fatal(err)
	}
	// root: returns [0.95, 2.8], mean baseline → ∓0.925
	for i, s := range out.Samples {
		if s.Node != 0 {
			continue
		}
		want := []float64{-0.925, 0.925}[s.Candidate]
		if math.Abs(res.Advantages[i]-want) > 1e-9 {
			t.Errorf("root %s candidate %d: advantage %.6f, want %.6f", s.Agent, s.Candidate, res.Advantages[i], want)
		}
	}
	fed := 0
	for _, p := range prompts {
		if strings.Contains(p, "[turn 0: r=") {
			fed++
		}
	}
	if fed != 8 {
		t.Errorf("%d child prompts carried their parent's feedback, want 8", fed)
	}
}

// Cross mode: G^N joint actions; every completion appears in G^(N−1) rows,
// and the estimator trains one of them.
func TestJointCrossCounts(t *testing.T) {
	out := runJoint(t, joint.Options{Agents: []string{"first", "second"}, Samples: 3, Turns: 1, Mode: joint.Cross},
		counting(func(p string, k int) string {
			if strings.Contains(p, "You write first.") {
				return fmt.Sprintf("r=%d x", k)
			}
			return "y"
		}))
	if len(out.Samples) != 18 {
		t.Fatalf("%d rows, want 9 joint actions × 2 agents", len(out.Samples))
	}
	per := map[string]int{}
	for _, s := range out.Samples {
		per[fmt.Sprintf("%s/%d", s.Agent, s.Candidate)]++
	}
	for k, n := range per {
		if n != 3 {
			t.Errorf("%s is in %d joint actions, want 3", k, n)
		}
	}
	opts := advantage.DefaultOptions()
	opts.MAGRPO.Joint = advantage.JointCross
	res, err := advantage.MAGRPO{Options: opts}.Compute(magrpoRows(out))
	if err != nil {
		t.Fatal(err)
	}
	trained := 0
	for _, ok := range res.Train {
		if ok {
			trained++
		}
	}
	if trained != 6 {
		t.Errorf("%d rows trained, want one per completion (6)", trained)
	}
}

func TestJointRefusesWhatCannotWork(t *testing.T) {
	o := joint.Options{Agents: []string{"first", "second"}, Samples: 2, Turns: 1, Mode: joint.Aligned}
	if _, err := rollout.NewWorkflow("joint", o, jointAgents(t), exactScorer{}); err == nil || !strings.Contains(err.Error(), "joint actions") {
		t.Errorf("a scorer-only environment: %v", err)
	}
	penalised := compileAgents(t, []rollout.AgentConfig{
		{Name: "first", Model: "policy", Role: "a", FormatPenalty: 0.1},
		{Name: "second", Model: "policy", Role: "b"},
	})
	if _, err := rollout.NewWorkflow("joint", o, penalised, jointToy{}); err == nil || !strings.Contains(err.Error(), "format_penalty") {
		t.Errorf("a penalised agent: %v", err)
	}
	for _, bad := range []joint.Options{
		{Agents: []string{"a"}, Samples: 0, Turns: 1, Mode: "aligned"},
		{Agents: []string{"a"}, Samples: 2, Turns: 0, Mode: "aligned"},
		{Agents: []string{"a"}, Samples: 2, Turns: 1, Mode: "both"},
		{Agents: []string{"a", "a"}, Samples: 2, Turns: 1, Mode: "aligned"},
	} {
		if bad.Validate() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// From the second turn on, an agent's prompt carries its own earlier
// outputs, its teammate's and the feedback on every earlier joint action
// of its branch, turn by turn.
func TestJointNextTurnPromptCarriesTheBranch(t *testing.T) {
	user := `{{.Task}} |own {{index .Extra "previous"}}|mates {{index .Extra "teammates"}}|fb {{index .Extra "feedback"}}| {{.Role}}`
	agents := compileAgents(t, []rollout.AgentConfig{
		{Name: "first", Model: "policy", Role: "You write first.", User: user},
		{Name: "second", Model: "policy", Role: "You write second.", User: user},
	})
	wf, err := rollout.NewWorkflow("joint", joint.Options{Agents: []string{"first", "second"}, Samples: 1, Turns: 3, Mode: joint.Aligned}, agents, jointToy{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var prompts []string
	respond := func(p string, _ uint64) string {
		mu.Lock()
		defer mu.Unlock()
		prompts = append(prompts, p)
		turn := 1
		if !strings.Contains(p, "|own |") {
			turn = 2
		}
		if strings.Contains(p, "Turn 2:") {
			turn = 3
		}
		if strings.Contains(p, "You write first.") {
			return fmt.Sprintf("r=%d first-t%d", turn, turn)
		}
		return fmt.Sprintf("second-t%d", turn)
	}
	s := rollout.Sampler{Generators: map[string]rollout.Generator{"policy": scripted.New(respond)}}
	if _, err := s.Run(wf, []rollout.Task{jointToy{}.Task(0)}, 1, 7); err != nil {
		t.Fatal(err)
	}
	var last string
	for _, p := range prompts {
		if strings.Contains(p, "You write first.") && strings.Contains(p, "Turn 2:") {
			last = p
		}
	}
	want := "|own Turn 1:\nr=1 first-t1\n\nTurn 2:\nr=2 first-t2|mates second, turn 1:\nsecond-t1\n\nsecond, turn 2:\nsecond-t2|fb Turn 1:\nturn 0: r=1 first-t1 + second-t1\n\nTurn 2:\nturn 1: r=2 first-t2 + second-t2|"
	if !strings.Contains(last, want) {
		t.Errorf("the third turn's prompt of first:\n%s\nwant it to hold\n%s", last, want)
	}
	for _, p := range prompts {
		if strings.Contains(p, "You write second.") && strings.Contains(p, "|own second-t1|") && !strings.Contains(p, "|mates first:\nr=1 first-t1|") {
			t.Errorf("the second turn's prompt of second: %s", p)
		}
	}
}

// Early termination (CoMLRL's termination_threshold): a node whose joint
// rewards average above the threshold opens no children; its joint actions
// are leaves, their returns their rewards. Evaluation runs every turn.
func TestJointEarlyTermination(t *testing.T) {
	rootRewards := func(rs ...string) scripted.Responder {
		return counting(func(p string, k int) string {
			switch {
			case !strings.Contains(p, "You write first."):
				return "ok"
			case strings.Contains(p, "[]"):
				return "r=" + rs[k] + " root"
			}
			return "r=0 child"
		})
	}
	th := 1.5
	opts := joint.Options{Agents: []string{"first", "second"}, Samples: 2, Turns: 2, Mode: joint.Aligned, TerminationThreshold: &th}
	// mean 2 > 1.5: solved, the branch ends at the root
	out := runJoint(t, opts, rootRewards("2", "2"))
	if len(out.Samples) != 4 || !out.Episodes[0].Success || out.Episodes[0].Metrics["terminated_nodes"] != 1 {
		t.Fatalf("solved root: %d rows (want 4), success %v, metrics %v", len(out.Samples), out.Episodes[0].Success, out.Episodes[0].Metrics)
	}
	if _, err := (advantage.MAGRPO{Options: advantage.DefaultOptions()}).Compute(magrpoRows(out)); err != nil {
		t.Fatalf("the estimator refuses a terminated tree: %v", err)
	}
	// mean 1.5 is not above 1.5: the children are played
	if out = runJoint(t, opts, rootRewards("1", "2")); len(out.Samples) != 12 || out.Episodes[0].Success {
		t.Fatalf("unsolved root: %d rows (want 12), success %v", len(out.Samples), out.Episodes[0].Success)
	}
	// unset: every turn
	opts.TerminationThreshold = nil
	if out = runJoint(t, opts, rootRewards("2", "2")); len(out.Samples) != 12 {
		t.Fatalf("no threshold: %d rows, want 12", len(out.Samples))
	}
	opts.TerminationThreshold = &th
	wf, err := rollout.NewWorkflow("joint", opts, jointAgents(t), jointToy{})
	if err != nil {
		t.Fatal(err)
	}
	s := rollout.Sampler{Generators: map[string]rollout.Generator{"policy": scripted.New(rootRewards("2"))}}
	ev, err := s.Run(wf.(interface{ ForEval() rollout.Workflow }).ForEval(), []rollout.Task{jointToy{}.Task(0)}, 1, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(ev.Samples) != 4 {
		t.Errorf("evaluation: %d rows, want 2 turns × 2 agents", len(ev.Samples))
	}
	nan := math.NaN()
	opts.TerminationThreshold = &nan
	if _, err := rollout.NewWorkflow("joint", opts, jointAgents(t), jointToy{}); err == nil || !strings.Contains(err.Error(), "termination_threshold") {
		t.Errorf("NaN threshold: %v", err)
	}
}
