package advantage

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// refNode and refJoint are a nested MAGRPO tree, the shape CoMLRL builds; the
// test computes returns and advantages on it directly and compares them with
// the estimator's, which sees only the flattened rows.
type refNode struct {
	id     int
	joints []*refJoint
}

type refJoint struct {
	id     int
	choice []int // candidate per agent
	reward float64
	child  *refNode // nil: leaf
}

func (j *refJoint) ret(gamma float64) float64 {
	if j.child == nil || len(j.child.joints) == 0 {
		return j.reward
	}
	var sum float64
	for _, c := range j.child.joints {
		sum += c.ret(gamma)
	}
	return j.reward + gamma*sum/float64(len(j.child.joints))
}

// buildRefTree grows a tree: at each node G completions per agent, aligned or
// cross joint actions, random rewards, children down to depth (some branches
// stop early, like CoMLRL's termination threshold).
// A child node takes its joint action's id, as the rows require.
func buildRefTree(rng *rand.Rand, id int, nextID *int, nAgents, g, depth int, mode string) *refNode {
	n := &refNode{id: id}
	var choices [][]int
	if mode == JointAligned {
		for c := range g {
			ch := make([]int, nAgents)
			for a := range ch {
				ch[a] = c
			}
			choices = append(choices, ch)
		}
	} else {
		choices = [][]int{{}}
		for range nAgents {
			var next [][]int
			for _, prefix := range choices {
				for c := range g {
					next = append(next, append(append([]int{}, prefix...), c))
				}
			}
			choices = next
		}
	}
	for _, ch := range choices {
		j := &refJoint{id: *nextID, choice: ch, reward: math.Round(4*rng.Float64()) / 2}
		*nextID++
		n.joints = append(n.joints, j)
	}
	if depth > 1 {
		for _, j := range n.joints {
			if rng.IntN(5) > 0 {
				j.child = buildRefTree(rng, j.id, nextID, nAgents, g, depth-1, mode)
			}
		}
	}
	return n
}

func (n *refNode) rows(prompt int, agents []string) []Row {
	var rows []Row
	for _, j := range n.joints {
		for a, agent := range agents {
			rows = append(rows, Row{Prompt: prompt, Node: n.id, Joint: j.id, Agent: agent, Candidate: j.choice[a], Reward: j.reward})
		}
		if j.child != nil {
			rows = append(rows, j.child.rows(prompt, agents)...)
		}
	}
	return rows
}

// meanAdvantages maps (node, agent index, candidate) to R − mean R, with R the
// sum of the returns of the completion's joint actions.
func (n *refNode) meanAdvantages(nAgents int, gamma float64, out map[[3]int]float64) {
	for a := range nAgents {
		sums := map[int]float64{}
		for _, j := range n.joints {
			sums[j.choice[a]] += j.ret(gamma)
		}
		var mean float64
		for _, s := range sums {
			mean += s
		}
		mean /= float64(len(sums))
		for c, s := range sums {
			out[[3]int{n.id, a, c}] = s - mean
		}
	}
	for _, j := range n.joints {
		if j.child != nil {
			j.child.meanAdvantages(nAgents, gamma, out)
		}
	}
}

func randomTree(rng *rand.Rand, prompts int, agents []string, g, depth int, mode string) []Row {
	var rows []Row
	for p := range prompts {
		next := 1
		rows = append(rows, buildRefTree(rng, 0, &next, len(agents), g, depth, mode).rows(p, agents)...)
	}
	return rows
}

func TestMAGRPOAgainstNestedTree(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	agents := []string{"coder", "tester", "reviewer"}
	for _, mode := range []string{JointAligned, JointCross} {
		for trial := range 20 {
			next := 1
			nAgents := 2 + trial%2
			g, depth := 2+trial%3, 3
			if mode == JointCross {
				g, depth = 2+trial%2, 2 // up to (3³)² joint actions
			}
			root := buildRefTree(rng, 0, &next, nAgents, g, depth, mode)
			rows := root.rows(0, agents[:nAgents])
			want := map[[3]int]float64{}
			root.meanAdvantages(nAgents, 0.9, want)

			opt := DefaultOptions()
			opt.MAGRPO.Joint = mode
			res := mustCompute(t, nameMAGRPO, opt, rows)
			agentIndex := map[string]int{"coder": 0, "tester": 1, "reviewer": 2}
			trained := map[[3]int]int{}
			for i, r := range rows {
				k := [3]int{r.Node, agentIndex[r.Agent], r.Candidate}
				if math.Abs(res.Advantages[i]-want[k]) > 1e-9 {
					t.Fatalf("%s trial %d: row %d (node %d %s cand %d): advantage %g, reference %g",
						mode, trial, i, r.Node, r.Agent, r.Candidate, res.Advantages[i], want[k])
				}
				if res.Train[i] {
					trained[k]++
				}
			}
			// Exactly one trained row per completion.
			for k := range want {
				if trained[k] != 1 {
					t.Fatalf("%s trial %d: completion %v has %d trained rows, want 1", mode, trial, k, trained[k])
				}
			}
		}
	}
}

func TestMAGRPOCrossByHand(t *testing.T) {
	// Two agents, G = 2, single turn, every combination: rewards
	// r(a0,b0)=1, r(a0,b1)=0, r(a1,b0)=3, r(a1,b1)=2.
	// Completion returns (sums): a0 = 1, a1 = 5; b0 = 4, b1 = 2.
	// mean: a ±2, b ±1. rloo (G=2): 2·(R − m) → a ±4, b ±2.
	r := map[[2]int]float64{{0, 0}: 1, {0, 1}: 0, {1, 0}: 3, {1, 1}: 2}
	var rows []Row
	joint := 1
	for a := range 2 {
		for b := range 2 {
			rows = append(rows,
				Row{Joint: joint, Agent: "a", Candidate: a, Reward: r[[2]int{a, b}]},
				Row{Joint: joint, Agent: "b", Candidate: b, Reward: r[[2]int{a, b}]})
			joint++
		}
	}
	opt := DefaultOptions()
	opt.MAGRPO.Joint = JointCross
	res := mustCompute(t, nameMAGRPO, opt, rows)
	// Rows: (a0,b0) (a0,b1) (a1,b0) (a1,b1), each as a-row then b-row.
	assertClose(t, "cross mean", res.Advantages, []float64{-2, 1, -2, -1, 2, 1, 2, -1})
	opt.MAGRPO.Baseline = BaselineRLOO
	res = mustCompute(t, nameMAGRPO, opt, rows)
	assertClose(t, "cross rloo", res.Advantages, []float64{-4, 2, -4, -2, 4, 2, 4, -2})
	// The lowest-Joint row of each completion trains: a0 in joint 1, b0 in
	// joint 1, b1 in joint 2, a1 in joint 3.
	wantTrain := []bool{true, true, false, true, true, false, false, false}
	for i := range rows {
		if res.Train[i] != wantTrain[i] {
			t.Errorf("row %d: train %v, want %v", i, res.Train[i], wantTrain[i])
		}
	}
	if got := res.Diagnostics.TrainRows; got != 4 {
		t.Errorf("train rows: got %d, want 4 (2 agents × 2 completions)", got)
	}
}

func TestMAGRPONormalizeUsesClampedPopulationStd(t *testing.T) {
	// Returns [0, 1e-9]: A = R − mean = ∓5e-10, popstd 5e-10 < 1e-6, so the
	// clamp gives ∓5e-4 rather than ∓1.
	rows := []Row{
		{Joint: 1, Agent: "a", Candidate: 0, Reward: 0},
		{Joint: 2, Agent: "a", Candidate: 1, Reward: 1e-9},
	}
	opt := DefaultOptions()
	opt.MAGRPO.Normalize = true
	res := mustCompute(t, nameMAGRPO, opt, rows)
	if math.Abs(res.Advantages[0]+5e-4) > 1e-12 || math.Abs(res.Advantages[1]-5e-4) > 1e-12 {
		t.Errorf("got %v, want [-5e-4 5e-4]", res.Advantages)
	}
}

func TestMAGRPOMalformedTrees(t *testing.T) {
	aligned := func(rows ...Row) []Row { return rows }
	cases := []struct {
		name string
		mode string
		rows []Row
		want string
	}{
		{"one child", JointAligned, aligned(
			Row{Joint: 1, Agent: "a", Candidate: 0, Reward: 1},
		), `node 0 of prompt 0 has 1 completion of agent "a"`},
		{"one child below the root", JointAligned, aligned(
			Row{Joint: 1, Agent: "a", Candidate: 0, Reward: 1},
			Row{Joint: 2, Agent: "a", Candidate: 1, Reward: 0},
			Row{Node: 1, Joint: 3, Agent: "a", Candidate: 0, Reward: 1},
		), `node 1 of prompt 0 has 1 completion`},
		{"rewards disagree", JointAligned, aligned(
			Row{Joint: 1, Agent: "a", Candidate: 0, Reward: 1},
			Row{Joint: 1, Agent: "b", Candidate: 0, Reward: 0.5},
		), "carry rewards 1 and 0.5"},
		{"nodes disagree", JointAligned, aligned(
			Row{Joint: 1, Agent: "a", Node: 0},
			Row{Joint: 1, Agent: "b", Node: 2},
		), "name nodes 0 and 2"},
		{"agent twice", JointAligned, aligned(
			Row{Joint: 1, Agent: "a", Candidate: 0},
			Row{Joint: 1, Agent: "a", Candidate: 1},
		), `both give agent "a"'s part`},
		{"cycle", JointAligned, aligned(
			Row{Node: 2, Joint: 1, Agent: "a", Candidate: 0},
			Row{Node: 2, Joint: 3, Agent: "a", Candidate: 1},
			Row{Node: 1, Joint: 2, Agent: "a", Candidate: 0},
			Row{Node: 1, Joint: 4, Agent: "a", Candidate: 1},
		), "leads back to itself"},
		{"self loop", JointAligned, aligned(
			Row{Node: 1, Joint: 1, Agent: "a", Candidate: 0},
			Row{Node: 1, Joint: 2, Agent: "a", Candidate: 1},
		), "leads back to itself"},
		{"missing agent", JointAligned, aligned(
			Row{Joint: 1, Agent: "a", Candidate: 0},
			Row{Joint: 1, Agent: "b", Candidate: 0},
			Row{Joint: 2, Agent: "a", Candidate: 1},
		), "every joint action at a node needs a row for each agent"},
		{"aligned reuses a completion", JointAligned, aligned(
			Row{Joint: 1, Agent: "a", Candidate: 0}, Row{Joint: 1, Agent: "b", Candidate: 0},
			Row{Joint: 2, Agent: "a", Candidate: 0}, Row{Joint: 2, Agent: "b", Candidate: 1},
		), "aligned mode pairs"},
		{"cross incomplete", JointCross, aligned(
			Row{Joint: 1, Agent: "a", Candidate: 0}, Row{Joint: 1, Agent: "b", Candidate: 0},
			Row{Joint: 2, Agent: "a", Candidate: 1}, Row{Joint: 2, Agent: "b", Candidate: 1},
			Row{Joint: 3, Agent: "a", Candidate: 0}, Row{Joint: 3, Agent: "b", Candidate: 1},
		), "has 3 joint actions, want 2×2 = 4"},
		{"same combination twice", JointCross, aligned(
			Row{Joint: 1, Agent: "a", Candidate: 0},
			Row{Joint: 2, Agent: "a", Candidate: 0},
		), "combine the same completions"},
	}
	for _, c := range cases {
		opt := DefaultOptions()
		opt.MAGRPO.Joint = c.mode
		est, _ := New(nameMAGRPO, opt)
		_, err := est.Compute(c.rows)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got error %v, want one containing %q", c.name, err, c.want)
		}
	}
}
