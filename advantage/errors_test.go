package advantage

import (
	"math"
	"strings"
	"testing"
)

func TestMalformedRewardsNameTheRow(t *testing.T) {
	cases := []struct {
		reward float64
		want   string
	}{
		{math.NaN(), `advantage: rows[2].reward: must be finite, got NaN; check the reward of agent "V"`},
		{math.Inf(1), `rows[2].reward: must be finite, got +Inf`},
		{math.Inf(-1), `rows[2].reward: must be finite, got -Inf`},
		{1e101, `rows[2].reward: magnitude must be at most 1e+100, got 1e+101`},
	}
	for _, c := range cases {
		rows := []Row{{Agent: "S", Reward: 1}, {Agent: "S", Traj: 1}, {Agent: "V", Traj: 2, Reward: c.reward}}
		for i := range rows {
			rows[i].Candidate = i
			rows[i].Joint = i + 1
		}
		for _, name := range Names() {
			est, err := New(name, DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			_, err = est.Compute(rows)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s, reward %v: got %v, want an error containing %q", name, c.reward, err, c.want)
			}
		}
	}
}

func TestMixedRewardsAreCheckedField(t *testing.T) {
	opt := DefaultOptions()
	opt.MixRewards = true
	rows := []Row{{Candidate: 0, TeamReward: 1}, {Candidate: 1, LocalReward: math.NaN(), Agent: "tool"}}
	est, _ := New(nameATGRPO, opt)
	_, err := est.Compute(rows)
	if want := `rows[1].local_reward: must be finite, got NaN`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}
	// A finite team reward times a huge α overflows: the mix is checked too.
	opt.TeamWeight = 1e300
	rows = []Row{{Candidate: 0, TeamReward: 1e100}, {Candidate: 1}}
	est, _ = New(nameATGRPO, opt)
	_, err = est.Compute(rows)
	if want := `rows[0].team_weight·team_reward + local_reward: must be finite, got +Inf`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}
}

func TestEmptyInputIsAnError(t *testing.T) {
	for _, name := range Names() {
		est, _ := New(name, DefaultOptions())
		for _, rows := range [][]Row{nil, {}} {
			_, err := est.Compute(rows)
			if want := "advantage: " + name + ": no rows to score"; err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: got %v, want %q", name, err, want)
			}
		}
	}
}

func TestComputeValidatesOptionsOfAHandBuiltEstimator(t *testing.T) {
	opt := DefaultOptions()
	opt.Epsilon = 0
	_, err := DrMAS{opt}.Compute(vector1Rows())
	if err == nil || !strings.Contains(err.Error(), "advantage.epsilon") {
		t.Errorf("got %v, want an epsilon error", err)
	}
}

func TestExtremeButFiniteRewardsGiveFiniteAdvantages(t *testing.T) {
	// Largest allowed magnitudes and tiny differences: nothing overflows.
	rewards := []float64{MaxAbsReward, -MaxAbsReward, 1e-300, 0, 5e-324, MaxAbsReward}
	for _, name := range Names() {
		var rows []Row
		for i, r := range rewards {
			agent := testAgents[i%2]
			if name == nameMAGRPO {
				agent = "S" // one agent: each joint action is one completion
			}
			rows = append(rows, Row{Traj: i, Candidate: i, Joint: i + 1, Agent: agent, Reward: r})
		}
		for _, normalize := range []bool{false, true} {
			opt := DefaultOptions()
			opt.MAGRPO.Normalize = normalize
			res := mustCompute(t, name, opt, rows)
			for i, a := range res.Advantages {
				if math.IsNaN(a) || math.IsInf(a, 0) {
					t.Errorf("%s: row %d: advantage %v", name, i, a)
				}
			}
			for k, v := range res.Metrics() {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Errorf("%s: metric %s = %v", name, k, v)
				}
			}
		}
	}
}
