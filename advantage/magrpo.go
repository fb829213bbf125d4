package advantage

// magrpo.go — MAGRPO's joint-reward advantages over a tree of joint actions
// (algorithms.md §5; CoMLRL).
//
// The tree, as rows. At a node (a state, Row.Node) every agent samples G
// completions (Row.Candidate = 0..G−1). A joint action combines one
// completion per agent, gets one joint reward (Row.Reward) and leads to a
// child node whose id is the joint action's id (Row.Joint): the joint actions
// taken there have Node equal to that id. One row per (joint action, agent):
//
//	aligned: joint action g = the g-th completion of every agent (G joint
//	         actions); each completion is in exactly one joint action, so
//	         there is one row per completion.
//	cross:   every combination (G^N joint actions); a completion is in
//	         G^(N−1) joint actions and so appears in that many rows, which all
//	         get its advantage; Result.Train keeps one of them.
//
// Returns, leaves first:  R_j = r_j + γ·mean_{j' at node j} R_j'  (a joint
// action whose node has no joint actions is a leaf: R_j = r_j). A
// completion's return is the sum of the returns of the joint actions it takes
// part in (in aligned mode, just its one joint action's return). Advantage of
// each completion against the agent's other completions at the same node:
//
//	mean: R − mean(R)   rloo: (R·G − ΣR)/(G−1)   max: R − max(R)   raw: R
//
// then, with normalize, (A − mean A)/max(popstd(A), 1e-6).
//
// Departures from CoMLRL: none in the arithmetic. An all-equal group gets
// exactly 0 (mean, rloo, max) instead of a rounding residue, and sums run in
// sorted order so row order cannot change a bit of the result.

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// MAGRPO computes advantages from the returns of a joint-action tree.
type MAGRPO struct{ Options Options }

// Name returns "magrpo".
func (MAGRPO) Name() string { return nameMAGRPO }

// magrpoStdFloor is MAGRPO's clamp on the population std.
const magrpoStdFloor = 1e-6

var magrpoFields = keyFields{node: true, agent: true}

// treeID names a node or joint action: ids are per prompt.
type treeID struct{ prompt, id int }

// jointAction is one joint action with its rows and return.
type jointAction struct {
	node   int
	reward float64
	rows   []int // one per agent, in agent-name order after build
	ret    float64
	state  int // 0 not computed, 1 computing, 2 done
}

// completionKey names one agent's completion at a node.
type completionKey struct {
	prompt, node int
	agent        string
	candidate    int
}

// Compute builds the tree from the rows, computes returns and the advantage
// of every completion.
func (e MAGRPO) Compute(rows []Row) (Result, error) {
	scores, err := prepare(nameMAGRPO, rows, e.Options)
	if err != nil {
		return Result{}, err
	}
	opt := e.Options.MAGRPO
	joints, atNode, err := buildJointActions(rows, scores)
	if err != nil {
		return Result{}, err
	}
	for id := range joints {
		if _, err := jointReturn(id, joints, atNode, opt.Gamma); err != nil {
			return Result{}, err
		}
	}
	groups, repeats, err := completionGroups(rows, joints, atNode, opt.Joint)
	if err != nil {
		return Result{}, err
	}
	res := normaliseGroups(len(rows), groups, magrpoFields, func(s []float64) ([]float64, groupStats) {
		return magrpoBaseline(s, opt)
	})
	for _, i := range repeats {
		res.Train[i] = false
	}
	res.Diagnostics = diagnose(nameMAGRPO, rows, scores, res)
	return res, nil
}

// buildJointActions collects the rows of each joint action and checks that
// they agree on node and reward and name each agent once. atNode lists the
// joint actions taken at each node, sorted by id.
func buildJointActions(rows []Row, scores []float64) (map[treeID]*jointAction, map[treeID][]treeID, error) {
	joints := map[treeID]*jointAction{}
	for i, r := range rows {
		id := treeID{r.Prompt, r.Joint}
		j := joints[id]
		if j == nil {
			joints[id] = &jointAction{node: r.Node, reward: scores[i], rows: []int{i}}
			continue
		}
		first := j.rows[0]
		switch {
		case r.Node != j.node:
			return nil, nil, fmt.Errorf("advantage: magrpo: rows %d and %d of joint action %d (prompt %d) name nodes %d and %d; a joint action is taken at one node",
				first, i, r.Joint, r.Prompt, j.node, r.Node)
		case scores[i] != j.reward:
			return nil, nil, fmt.Errorf("advantage: magrpo: rows %d and %d of joint action %d (prompt %d) carry rewards %g and %g; give every agent's row of a joint action the joint reward",
				first, i, r.Joint, r.Prompt, j.reward, scores[i])
		}
		for _, k := range j.rows {
			if rows[k].Agent == r.Agent {
				return nil, nil, fmt.Errorf("advantage: magrpo: rows %d and %d both give agent %q's part of joint action %d (prompt %d); a joint action has one completion per agent",
					k, i, r.Agent, r.Joint, r.Prompt)
			}
		}
		j.rows = append(j.rows, i)
	}
	atNode := map[treeID][]treeID{}
	for id, j := range joints {
		slices.SortFunc(j.rows, func(a, b int) int { return strings.Compare(rows[a].Agent, rows[b].Agent) })
		node := treeID{id.prompt, j.node}
		atNode[node] = append(atNode[node], id)
	}
	for _, ids := range atNode {
		slices.SortFunc(ids, func(a, b treeID) int { return cmp.Compare(a.id, b.id) })
	}
	return joints, atNode, nil
}

// jointReturn computes R_j = r_j + γ·mean(returns of the joint actions taken
// at node j), memoised in joints; a cycle of ids is an error.
func jointReturn(id treeID, joints map[treeID]*jointAction, atNode map[treeID][]treeID, gamma float64) (float64, error) {
	j := joints[id]
	switch j.state {
	case 2:
		return j.ret, nil
	case 1:
		return 0, fmt.Errorf("advantage: magrpo: joint action %d (prompt %d) leads back to itself through Row.Node/Row.Joint; a joint action's id must be a new node that none of its ancestors is",
			id.id, id.prompt)
	}
	j.state = 1
	children := atNode[id]
	j.ret = j.reward
	if len(children) > 0 {
		rets := make([]float64, len(children))
		for c, child := range children {
			r, err := jointReturn(child, joints, atNode, gamma)
			if err != nil {
				return 0, err
			}
			rets[c] = r
		}
		j.ret += gamma * orderFreeMean(rets)
	}
	j.state = 2
	return j.ret, nil
}

// completionGroups makes one sample per completion (its summed return, all
// its rows) and one group per (prompt, node, agent), checking the joint mode.
// repeats are the rows of a completion other than its lowest-Joint row.
func completionGroups(rows []Row, joints map[treeID]*jointAction, atNode map[treeID][]treeID, mode string) ([]sampleGroup, []int, error) {
	nodes := make([]treeID, 0, len(atNode))
	for n := range atNode {
		nodes = append(nodes, n)
	}
	slices.SortFunc(nodes, func(a, b treeID) int { return cmp.Or(cmp.Compare(a.prompt, b.prompt), cmp.Compare(a.id, b.id)) })

	var groups []sampleGroup
	var repeats []int
	for _, node := range nodes {
		ids := atNode[node]
		if err := checkJointMode(rows, joints, node, ids, mode); err != nil {
			return nil, nil, err
		}
		// Completions of this node: their rows (lowest Joint first) and returns.
		compRows := map[completionKey][]int{}
		compRets := map[completionKey][]float64{}
		for _, id := range ids {
			j := joints[id]
			for _, i := range j.rows {
				k := completionKey{node.prompt, node.id, rows[i].Agent, rows[i].Candidate}
				compRows[k] = append(compRows[k], i)
				compRets[k] = append(compRets[k], j.ret)
			}
		}
		keys := make([]completionKey, 0, len(compRows))
		for k := range compRows {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b completionKey) int {
			return cmp.Or(strings.Compare(a.agent, b.agent), cmp.Compare(a.candidate, b.candidate))
		})
		for _, k := range keys {
			gk := groupKey{prompt: k.prompt, node: k.node, agent: k.agent}
			if len(groups) == 0 || groups[len(groups)-1].key != gk {
				groups = append(groups, sampleGroup{key: gk})
			}
			g := &groups[len(groups)-1]
			g.samples = append(g.samples, sample{score: orderFreeSum(compRets[k]), rows: compRows[k]})
			repeats = append(repeats, compRows[k][1:]...)
		}
	}
	for _, g := range groups {
		if len(g.samples) < 2 {
			return nil, nil, fmt.Errorf("advantage: magrpo: node %d of prompt %d has %d completion of agent %q; MAGRPO compares each completion with its siblings and needs G >= 2 per agent per node",
				g.key.node, g.key.prompt, len(g.samples), g.key.agent)
		}
	}
	return groups, repeats, nil
}

// checkJointMode checks that the joint actions at one node all involve the
// same agents and form the configured kind of joint action.
func checkJointMode(rows []Row, joints map[treeID]*jointAction, node treeID, ids []treeID, mode string) error {
	agentsOf := func(j *jointAction) string {
		names := make([]string, len(j.rows))
		for a, i := range j.rows {
			names[a] = rows[i].Agent
		}
		return strings.Join(names, ", ")
	}
	first := joints[ids[0]]
	want := agentsOf(first)
	candidates := make([]map[int]bool, len(first.rows)) // per agent: its candidate indices
	for a := range candidates {
		candidates[a] = map[int]bool{}
	}
	combos := map[string]treeID{}
	for _, id := range ids {
		j := joints[id]
		if got := agentsOf(j); got != want {
			return fmt.Errorf("advantage: magrpo: joint action %d at node %d (prompt %d) involves agents [%s], joint action %d involves [%s]; every joint action at a node needs a row for each agent",
				id.id, node.id, node.prompt, got, ids[0].id, want)
		}
		combo := make([]string, len(j.rows))
		for a, i := range j.rows {
			candidates[a][rows[i].Candidate] = true
			combo[a] = fmt.Sprint(rows[i].Candidate)
		}
		c := strings.Join(combo, ",")
		if other, dup := combos[c]; dup {
			return fmt.Errorf("advantage: magrpo: joint actions %d and %d at node %d (prompt %d) combine the same completions (%s) of agents [%s]; each combination is one joint action",
				other.id, id.id, node.id, node.prompt, c, want)
		}
		combos[c] = id
	}
	switch mode {
	case JointAligned:
		for a, set := range candidates {
			if len(set) != len(ids) {
				return fmt.Errorf("advantage: magrpo: node %d (prompt %d) has %d joint actions but agent %q has %d distinct completions in them; aligned mode pairs the g-th completions of all agents into one joint action each (set magrpo.joint: cross for every combination)",
					node.id, node.prompt, len(ids), rows[first.rows[a]].Agent, len(set))
			}
		}
	case JointCross:
		product := 1.0
		for _, set := range candidates {
			product *= float64(len(set))
		}
		if product != float64(len(ids)) {
			sizes := make([]string, len(candidates))
			for a, set := range candidates {
				sizes[a] = fmt.Sprint(len(set))
			}
			return fmt.Errorf("advantage: magrpo: node %d (prompt %d) has %d joint actions, want %s = %g (every combination of the agents' completions) in cross mode; add the missing combinations or set magrpo.joint: aligned",
				node.id, node.prompt, len(ids), strings.Join(sizes, "×"), product)
		}
	}
	return nil
}

// magrpoBaseline computes one group's advantages from its completions'
// returns under the configured baseline and optional normalisation.
func magrpoBaseline(returns []float64, opt MAGRPOOptions) ([]float64, groupStats) {
	m := orderFreeMean(returns)
	st := groupStats{mean: m, std: orderFreeStd(returns, m, StdPopulation), zeroVariance: allEqual(returns)}
	adv := make([]float64, len(returns))
	switch opt.Baseline {
	case BaselineRaw:
		copy(adv, returns)
	case BaselineMax:
		top := slices.Max(returns)
		for i, r := range returns {
			adv[i] = r - top
		}
	case BaselineMean, BaselineRLOO:
		if st.zeroVariance {
			break
		}
		g := float64(len(returns))
		for i, r := range returns {
			adv[i] = r - m
			if opt.Baseline == BaselineRLOO {
				adv[i] = g * (r - m) / (g - 1) // = (R·G − ΣR)/(G−1)
			}
		}
	}
	if opt.Normalize {
		if allEqual(adv) {
			clear(adv)
		} else {
			am := orderFreeMean(adv)
			scale := math.Max(orderFreeStd(adv, am, StdPopulation), magrpoStdFloor)
			for i := range adv {
				adv[i] = (adv[i] - am) / scale
			}
		}
	}
	return adv, st
}
