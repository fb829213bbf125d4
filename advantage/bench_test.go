package advantage

// Benchmarks at the reference batch sizes (algorithms.md §6):
//
//	go test -run '^$' -bench . -benchmem ./advantage/

import (
	"math/rand/v2"
	"testing"
)

// searchBatch is Dr. MAS search's step: 128 prompts × 5 trajectories, each
// Verifier/Search/Verifier/… up to 4 environment steps.
func searchBatch() []Row {
	rng := rand.New(rand.NewPCG(11, 12))
	agents := []string{"Verifier", "Search", "Verifier", "Search", "Verifier", "Search", "Verifier", "Answer"}
	var rows []Row
	for p := range 128 {
		for tr := range 5 {
			team := float64(rng.IntN(2))
			for turn, agent := range agents[:2+rng.IntN(len(agents)-1)] {
				pen := 0.0
				if rng.IntN(10) == 0 {
					pen = 0.01
				}
				rows = append(rows, Row{Prompt: p, Traj: tr, Agent: agent, Turn: turn, Reward: team - pen})
			}
		}
	}
	return rows
}

// atgrpoBatch is AT-GRPO's step: 32 environments × 4 turns × 2 agents × K = 8.
func atgrpoBatch() []Row {
	rng := rand.New(rand.NewPCG(13, 14))
	var rows []Row
	for p := range 32 {
		for turn := range 4 {
			for _, agent := range []string{"tool", "plan"} {
				for k := range 8 {
					rows = append(rows, Row{Prompt: p, Turn: turn, Agent: agent, Candidate: k, Reward: rng.Float64()})
				}
			}
		}
	}
	return rows
}

func benchmarkEstimator(b *testing.B, name string, opt Options, rows []Row) {
	est, err := New(name, opt)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := est.Compute(rows); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(rows))*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkGRPO(b *testing.B) { benchmarkEstimator(b, nameGRPO, DefaultOptions(), searchBatch()) }
func BenchmarkGRPOStep(b *testing.B) {
	benchmarkEstimator(b, nameGRPOStep, DefaultOptions(), searchBatch())
}
func BenchmarkDrMAS(b *testing.B) { benchmarkEstimator(b, nameDrMAS, DefaultOptions(), searchBatch()) }
func BenchmarkRLOO(b *testing.B)  { benchmarkEstimator(b, nameRLOO, DefaultOptions(), searchBatch()) }

func BenchmarkATGRPO(b *testing.B) {
	opt := DefaultOptions()
	opt.Filter = FilterOptions{ZeroVariance: true, LowestMeanFraction: 0.1}
	benchmarkEstimator(b, nameATGRPO, opt, atgrpoBatch())
}

// BenchmarkMAGRPO: 32 prompts, two agents, G = 4, two turns, aligned (20
// joint actions per prompt) and cross (16 + 256 joint actions per prompt).
func BenchmarkMAGRPO(b *testing.B) {
	for _, mode := range []string{JointAligned, JointCross} {
		b.Run(mode, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(15, 16))
			var rows []Row
			for p := range 32 {
				next := 1
				root := buildRefTree(rng, 0, &next, 2, 4, 2, mode)
				rows = append(rows, root.rows(p, []string{"writer", "critic"})...)
			}
			opt := DefaultOptions()
			opt.MAGRPO.Joint = mode
			benchmarkEstimator(b, nameMAGRPO, opt, rows)
		})
	}
}
