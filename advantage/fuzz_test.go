package advantage

// Fuzz tests: run with
//
//	go test -run '^$' -fuzz FuzzEstimators -fuzztime 30s ./advantage/
//	go test -run '^$' -fuzz FuzzMAGRPOTree -fuzztime 30s ./advantage/
//
// Without -fuzz, `go test` runs the seed corpus as ordinary tests.

import (
	"math"
	"math/rand/v2"
	"testing"
)

// specialRewards are the values a reward byte ≥ 200 selects.
var specialRewards = []float64{
	0, math.NaN(), math.Inf(1), math.Inf(-1), MaxAbsReward, -MaxAbsReward, 1e-300, 5e-324,
	1e101, math.MaxFloat64, -0.0, 1e-7, 0.1, 1 + 1e-15, 1,
}

// decodeRows turns fuzz bytes into options and rows: the first two bytes pick
// options, then 7 bytes per row.
func decodeRows(data []byte) (Options, []Row) {
	opt := DefaultOptions()
	if len(data) < 2 {
		return opt, nil
	}
	a, b := data[0], data[1]
	opt.DivideByStd = a&1 == 0
	if a&2 != 0 {
		opt.Std = StdPopulation
	}
	if a&4 != 0 {
		opt.Singleton = SingletonZero
	}
	if a&8 != 0 {
		opt.MixRewards = true
		opt.TeamWeight = float64(a>>4) / 4
	}
	opt.MAGRPO.Baseline = []string{BaselineMean, BaselineRLOO, BaselineMax, BaselineRaw}[b&3]
	opt.MAGRPO.Normalize = b&4 != 0
	if b&8 != 0 {
		opt.MAGRPO.Joint = JointCross
	}
	opt.MAGRPO.Gamma = float64(b>>4) / 15
	reward := func(x byte) float64 {
		if x < 200 {
			return (float64(x) - 100) / 10
		}
		return specialRewards[int(x-200)%len(specialRewards)]
	}
	var rows []Row
	for p := data[2:]; len(p) >= 7; p = p[7:] {
		rows = append(rows, Row{
			Prompt:      int(p[0] % 3),
			Traj:        int(p[0] / 3 % 4),
			Agent:       testAgents[p[1]%3],
			Turn:        int(p[1] / 3 % 3),
			Env:         int(p[1] / 9 % 2),
			Candidate:   int(p[2] % 4),
			Node:        int(p[3] % 4),
			Joint:       int(p[3] / 4 % 8),
			Model:       []string{"", "m"}[p[2]/4%2],
			Reward:      reward(p[4]),
			TeamReward:  reward(p[5]),
			LocalReward: reward(p[6]),
		})
	}
	return opt, rows
}

func inBounds(rows []Row, opt Options) bool {
	_, err := rowScores(rows, opt)
	return err == nil
}

func checkResult(t *testing.T, name string, rows []Row, res Result) {
	t.Helper()
	if len(res.Advantages) != len(rows) || len(res.Train) != len(rows) {
		t.Fatalf("%s: %d advantages, %d train flags for %d rows", name, len(res.Advantages), len(res.Train), len(rows))
	}
	for i, a := range res.Advantages {
		if math.IsNaN(a) || math.IsInf(a, 0) {
			t.Fatalf("%s: row %d %+v: advantage %v", name, i, rows[i], a)
		}
	}
	for k, v := range res.Metrics() {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("%s: metric %s = %v", name, k, v)
		}
	}
}

func FuzzEstimators(f *testing.F) {
	f.Add([]byte{0, 0, 1, 2, 3, 4, 110, 100, 100, 4, 5, 6, 7, 90, 100, 100})
	f.Add([]byte{6, 9, 0, 0, 0, 0, 201, 0, 0, 1, 1, 1, 1, 110, 0, 0, 2, 2, 2, 2, 204, 0, 0})
	f.Add([]byte{8 | 16, 0, 0, 1, 0, 4, 100, 110, 120, 3, 1, 1, 8, 100, 130, 90})
	f.Add([]byte{1, 12, 0, 0, 0, 4, 100, 0, 0, 0, 0, 1, 8, 120, 0, 0, 0, 0, 0, 5, 100, 0, 0, 0, 0, 1, 9, 120, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		opt, rows := decodeRows(data)
		if err := opt.Validate(); err != nil {
			t.Fatalf("decoded invalid options: %v", err)
		}
		finite := inBounds(rows, opt)
		for _, name := range Names() {
			o := opt
			if len(data) > 0 && data[0]&64 != 0 {
				o.Filter = FilterOptions{ZeroVariance: true, LowestMeanFraction: 0.5}
			}
			est, err := New(name, o)
			if err != nil {
				t.Fatal(err)
			}
			res, err := est.Compute(rows)
			if err != nil {
				structural := name == nameATGRPO || name == nameMAGRPO
				if finite && len(rows) > 0 && !structural {
					t.Fatalf("%s: finite rows rejected: %v", name, err)
				}
				continue
			}
			if !finite {
				t.Fatalf("%s: accepted a non-finite or out-of-range reward", name)
			}
			checkResult(t, name, rows, res)
		}
	})
}

// FuzzMAGRPOTree builds valid trees of every shape from the fuzz input and
// requires a finite result for each.
func FuzzMAGRPOTree(f *testing.F) {
	f.Add(uint64(1), uint8(2), uint8(2), uint8(2), false, uint8(0), false, 1.0)
	f.Add(uint64(2), uint8(3), uint8(3), uint8(2), true, uint8(1), true, 1e-9)
	f.Add(uint64(3), uint8(1), uint8(4), uint8(3), false, uint8(2), true, 1e99)
	f.Fuzz(func(t *testing.T, seed uint64, nAgents, g, depth uint8, cross bool, baseline uint8, normalize bool, scale float64) {
		if math.IsNaN(scale) || math.IsInf(scale, 0) || math.Abs(scale) > MaxAbsReward/2 {
			return
		}
		agents := []string{"a", "b", "c"}[:1+nAgents%3]
		mode := JointAligned
		if cross {
			mode = JointCross
		}
		G, levels := 2+int(g%3), 1+int(depth%3)
		perNode := G
		if cross {
			perNode = int(math.Pow(float64(G), float64(len(agents))))
		}
		if math.Pow(float64(perNode), float64(levels)) > 4096 {
			levels = 1 // keep a tree to a few thousand joint actions
		}
		rng := rand.New(rand.NewPCG(seed, 0))
		rows := randomTree(rng, 2, agents, G, levels, mode)
		for i := range rows {
			rows[i].Reward *= scale
		}
		opt := DefaultOptions()
		opt.MAGRPO.Joint = mode
		opt.MAGRPO.Baseline = []string{BaselineMean, BaselineRLOO, BaselineMax, BaselineRaw}[baseline%4]
		opt.MAGRPO.Normalize = normalize
		res, err := MAGRPO{opt}.Compute(rows)
		if err != nil {
			t.Fatalf("valid tree rejected: %v", err)
		}
		checkResult(t, nameMAGRPO, rows, res)
	})
}
