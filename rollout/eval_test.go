package rollout_test

import (
	"math"
	"math/big"
	"testing"

	"troupe/rollout"
)

// passAtKBinomial is the textbook form 1 − C(n−c,k)/C(n,k) in exact
// rational arithmetic: an independent reference for the product form.
func passAtKBinomial(n, c, k int) float64 {
	num := new(big.Int).Binomial(int64(n-c), int64(k))
	if n-c < k {
		num.SetInt64(0)
	}
	den := new(big.Int).Binomial(int64(n), int64(k))
	r := new(big.Rat).SetFrac(num, den)
	f, _ := new(big.Rat).Sub(big.NewRat(1, 1), r).Float64()
	return f
}

func TestPassAtKMatchesBinomialForm(t *testing.T) {
	for n := 1; n <= 40; n++ {
		for c := 0; c <= n; c++ {
			for k := 1; k <= n; k++ {
				got, want := rollout.PassAtK(n, c, k), passAtKBinomial(n, c, k)
				if math.Abs(got-want) > 1e-12 {
					t.Fatalf("pass@%d with n=%d c=%d: %v, want %v", k, n, c, got, want)
				}
			}
		}
	}
	if got := rollout.PassAtK(16, 1, 1); math.Abs(got-1.0/16) > 1e-15 {
		t.Errorf("pass@1 = c/n: got %v", got)
	}
}

func TestTaskIteratorResumes(t *testing.T) {
	var src rollout.SliceSource
	for i := 0; i < 7; i++ {
		src = append(src, rollout.Task{ID: string(rune('a' + i))})
	}
	ids := func(ts []rollout.Task) (s string) {
		for _, t := range ts {
			s += t.ID
		}
		return s
	}
	it, err := rollout.NewTaskIterator(src, 42, true)
	if err != nil {
		t.Fatal(err)
	}
	epoch0 := ids(it.Next(7))
	epoch1 := ids(it.Next(7))
	for _, e := range []string{epoch0, epoch1} {
		seen := map[rune]bool{}
		for _, r := range e {
			seen[r] = true
		}
		if len(seen) != 7 {
			t.Fatalf("epoch %q is not a permutation of the 7 tasks", e)
		}
	}
	if epoch0 == epoch1 || epoch0 == "abcdefg" {
		t.Errorf("epochs %q and %q: want a fresh shuffle per epoch", epoch0, epoch1)
	}

	// Draw 10 (crossing an epoch), save, draw 9 more; a new iterator
	// restored from the saved state must draw the same 9.
	a, _ := rollout.NewTaskIterator(src, 42, true)
	a.Next(10)
	saved := a.State()
	want := ids(a.Next(9))
	b, _ := rollout.NewTaskIterator(src, 42, true)
	if err := b.Restore(saved); err != nil {
		t.Fatal(err)
	}
	if got := ids(b.Next(9)); got != want {
		t.Errorf("after restore: %q, want %q", got, want)
	}
	if saved.Epoch != 1 || saved.Position != 3 {
		t.Errorf("state after 10 of 7: epoch %d position %d, want 1, 3", saved.Epoch, saved.Position)
	}
	if got := ids(a.Next(0)); got != "" {
		t.Errorf("Next(0) = %q", got)
	}

	plain, _ := rollout.NewTaskIterator(src, 42, false)
	if got := ids(plain.Next(9)); got != "abcdefgab" {
		t.Errorf("unshuffled order %q", got)
	}
	short := src[:5]
	c, _ := rollout.NewTaskIterator(short, 42, true)
	if err := c.Restore(saved); err == nil {
		t.Error("restoring a state saved for 7 tasks onto 5 should fail")
	}
}

// TestPermIsUniform checks the shuffle against the uniform distribution
// over the 6 permutations of 3 items (chi-square, 5 dof; 20.5 is p = 0.001).
func TestPermIsUniform(t *testing.T) {
	counts := map[[3]int]int{}
	const trials = 60000
	r := rollout.NewRand(1)
	for i := 0; i < trials; i++ {
		p := r.Perm(3)
		counts[[3]int{p[0], p[1], p[2]}]++
	}
	if len(counts) != 6 {
		t.Fatalf("saw %d permutations, want 6", len(counts))
	}
	chi := 0.0
	for _, c := range counts {
		d := float64(c) - trials/6.0
		chi += d * d / (trials / 6.0)
	}
	if chi > 20.5 {
		t.Errorf("chi-square %g > 20.5: the shuffle is biased (%v)", chi, counts)
	}
}

// Dr. MAS logs val/<data_source>/test_score as the mean reward over agent
// rows (verl/trainer/ppo/ray_trainer.py, _validate: the mean of every row's
// reward_tensor sum), so a rejected episode's three rows (S, V, S) weigh
// more than an approved one's two: two approved episodes (reward 1, two
// rows each) and one rejected (0, three rows) give 4/7 over rows and 2/3
// over episodes.
func TestRowRewardWeighsEpisodesByTheirRows(t *testing.T) {
	calls := func(n int) []rollout.CallRecord {
		out := make([]rollout.CallRecord, n)
		for i := range out {
			out[i] = rollout.CallRecord{Agent: []string{"solver", "verifier"}[i%2], Valid: true}
		}
		return out
	}
	eps := []rollout.EpisodeRecord{
		{Task: "a", Traj: 0, Done: true, Success: true, Reward: 1, Calls: calls(2)},
		{Task: "b", Traj: 1, Done: true, Reward: 0, Calls: calls(3)},
		{Task: "c", Traj: 2, Done: true, Success: true, Reward: 1, Calls: calls(2)},
	}
	m, err := rollout.EvaluateRecords(eps, 1)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(m.RowReward-4.0/7) > 1e-15 || math.Abs(m.MeanReward-2.0/3) > 1e-15 || math.Abs(m.MeanTurns-7.0/3) > 1e-15 {
		t.Errorf("row reward %v, mean reward %v, turns %v; want 4/7, 2/3 and 7/3", m.RowReward, m.MeanReward, m.MeanTurns)
	}
}
