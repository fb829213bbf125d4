package policy

import (
	"fmt"
	"testing"

	"troupe/advantage"
	"troupe/model"
	"troupe/optim"
	"troupe/torch"
)

// The learning check: a two-agent bandit closed end to end — sample from
// the model, reward, estimate advantages with the real estimator, update —
// must raise each agent's probability of its rewarded answers, for every
// estimator, every loss aggregation mode, and shared and separate models.
// A flipped advantage sign, or a response mask shifted by one token, leaves
// the rewarded first token untrained or pushed down, and fails it.

// bandit is one agent's arm: its prompt and the first tokens it is paid for.
type bandit struct {
	agent  string
	prompt []int
	paid   func(tok int) bool
}

var bandits = []bandit{
	{"solver", []int{1, 2, 3}, func(tok int) bool { return tok%4 == 0 }},       // a quarter of the vocabulary
	{"verifier", []int{7, 8, 9, 10}, func(tok int) bool { return tok%8 == 1 }}, // an eighth: a different reward mean
}

// banditModel is a tiny model with a 16-token vocabulary, so that a few
// dozen samples cover the arms.
func banditModel(t *testing.T) *model.Model {
	t.Helper()
	cfg := tinyConfig()
	cfg.VocabSize = 16
	cfg.InitializerRange = 0.2 // hidden states that differ by prompt, so a shared model can tell the agents apart
	m, err := model.New(cfg, 5, model.Options{DType: torch.Float32, Device: torch.CPU})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Free)
	return m
}

// paidMass is the model's probability that an agent's first response token
// is paid, at temperature 1.
func paidMass(t *testing.T, m *model.Model, b bandit) float64 {
	t.Helper()
	var p float64
	torch.NoGrad(func() {
		s := torch.NewScope()
		defer s.Close()
		in, err := model.Pack([][]int{b.prompt}, model.PadRight, m.Device())
		if err != nil {
			t.Fatal(err)
		}
		logits, err := m.Logits(in)
		if err != nil {
			t.Fatal(err)
		}
		V := int64(m.Config.VocabSize)
		probs := logits.Narrow(1, int64(len(b.prompt)-1), 1).Reshape(V).ToDType(torch.Float64).Softmax(-1).Float64s()
		for tok, q := range probs {
			if b.paid(tok) {
				p += q
			}
		}
	})
	return p
}

// playBandit runs steps of sample → reward → advantage → update and returns
// each agent's paid mass before and after.
func playBandit(t *testing.T, estimator, agg, assignment string, steps int) (before, after map[string]float64) {
	t.Helper()
	s := trainSettings()
	s.LR = 1e-2
	s.LossAgg = agg
	s.DrGRPOLength = 2
	s.MicroBatchSize = 8
	if estimator == "magrpo" {
		s.Loss = optim.LossMAGRPO
	}
	opts := advantage.DefaultOptions()
	est, err := advantage.New(estimator, opts)
	if err != nil {
		t.Fatal(err)
	}
	models := map[string]*model.Model{}
	var trainers []*Trainer
	if assignment == "shared" {
		m := banditModel(t)
		models["solver"], models["verifier"] = m, m
		trainers = append(trainers, newTrainer(t, TrainerConfig{Group: group("m", s, "solver", "verifier"), Policy: m, Temperature: 1}))
	} else {
		for _, b := range bandits {
			m := banditModel(t)
			models[b.agent] = m
			trainers = append(trainers, newTrainer(t, TrainerConfig{Group: group(b.agent, s, b.agent), Policy: m, Temperature: 1}))
		}
	}
	before, after = map[string]float64{}, map[string]float64{}
	for _, b := range bandits {
		before[b.agent] = paidMass(t, models[b.agent], b)
	}
	const prompts, n = 2, 8
	for step := range steps {
		// trajectory i pairs solver sample i with verifier sample i; the team
		// is paid for each agent that hits its arm, and every row of the
		// trajectory carries the team reward (for MAGRPO: the joint reward of
		// joint action i, taken at the root)
		var rows []advantage.Row
		var seqs []Sequence
		team := make([]float64, prompts*n)
		outs := make([][]model.GenResult, len(bandits))
		for bi, b := range bandits {
			m := models[b.agent]
			reqs := make([]model.GenRequest, prompts*n)
			for i := range reqs {
				reqs[i] = model.GenRequest{Prompt: b.prompt, MaxNewTokens: 2, Sampling: model.Sampling{Temperature: 1}}
			}
			g := torch.NewGenerator(torch.CPU, uint64(1000*step+bi))
			out, err := m.Generate(reqs, nil, g)
			g.Free()
			if err != nil {
				t.Fatal(err)
			}
			outs[bi] = out
			for i, o := range out {
				if b.paid(o.Tokens[0]) {
					team[i]++
				}
			}
		}
		for bi, b := range bandits {
			for i, o := range outs[bi] {
				r := advantage.Row{Prompt: i / n, Traj: i % n, Agent: b.agent, Turn: bi, Node: bi, Candidate: i % n,
					Reward: team[i], TeamReward: team[i]}
				if estimator == "magrpo" {
					r.Turn, r.Node, r.Joint, r.Candidate = 0, 0, i%n+1, i%n
				}
				rows = append(rows, r)
				seqs = append(seqs, Sequence{Agent: b.agent, Prompt: b.prompt, Response: o.Tokens})
			}
		}
		res, err := est.Compute(rows)
		if err != nil {
			t.Fatalf("%s: %v", estimator, err)
		}
		for i := range seqs {
			seqs[i].Advantage = res.Advantages[i]
		}
		for _, tr := range trainers {
			var mine []Sequence
			for i, sq := range seqs {
				if (res.Train == nil || res.Train[i]) && contains(tr.Agents(), sq.Agent) {
					mine = append(mine, sq)
				}
			}
			if _, err := tr.Update(mine, step); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, b := range bandits {
		after[b.agent] = paidMass(t, models[b.agent], b)
	}
	return before, after
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func TestBanditLearnsUnderEveryEstimatorAggregationAndAssignment(t *testing.T) {
	if testing.Short() {
		t.Skip("48 small training runs; skipped with -short")
	}
	aggs := []string{optim.TokenMean, optim.SeqMeanTokenSum, optim.SeqMeanTokenMean, optim.SeqMeanTokenSumNorm}
	for _, est := range advantage.Names() {
		for _, agg := range aggs {
			for _, assign := range []string{"separate", "shared"} {
				t.Run(fmt.Sprintf("%s/%s/%s", est, agg, assign), func(t *testing.T) {
					before, after := playBandit(t, est, agg, assign, 8)
					for _, b := range bandits {
						// the paid mass must rise clearly: by a fifth of what is left to gain
						t.Logf("%s: paid probability %.3f → %.3f", b.agent, before[b.agent], after[b.agent])
						if gain := after[b.agent] - before[b.agent]; gain < 0.2*(1-before[b.agent]) {
							t.Errorf("%s: paid probability %.3f → %.3f after 8 updates", b.agent, before[b.agent], after[b.agent])
						}
					}
				})
			}
		}
	}
}
