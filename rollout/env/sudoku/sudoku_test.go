package sudoku

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"troupe/rollout"
	"troupe/rollout/env/internal/split"
)

func TestPuzzlesAreDeterministicUniqueAndSplit(t *testing.T) {
	for _, size := range []int{4, 9} {
		cfg := DefaultConfig()
		cfg.Size, cfg.TrainSize, cfg.TestSize = size, 40, 20
		if size == 9 {
			cfg.TrainSize, cfg.TestSize = 6, 3
		}
		a, err := New(cfg, split.Train)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := New(cfg, split.Train)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%d×%d: one seed, two train splits", size, size)
		}
		test, _ := New(cfg, split.Test)
		seen := map[string]bool{}
		for i := 0; i < a.Len(); i++ {
			tk := a.Task(i)
			seen[tk.Meta["puzzle"]] = true
			p, _ := ParseGrid(tk.Meta["puzzle"])
			sol, _ := ParseGrid(tk.Answer)
			if n := p.CountSolutions(3); n != 1 {
				t.Fatalf("%s: %d solutions", tk.ID, n)
			}
			// the solution keeps the clues and is valid
			for j, v := range p.Cells {
				if v != 0 && sol.Cells[j] != v {
					t.Fatalf("%s: the solution changes clue %d", tk.ID, j)
				}
			}
			s, err := a.Reset(tk)
			if err != nil {
				t.Fatal(err)
			}
			st := s.(*State)
			if st.blanks != cfg.blanks() && size == 4 && st.blanks > cfg.blanks() {
				t.Fatalf("%s: %d blanks", tk.ID, st.blanks)
			}
			r := a.Step(s, "plan", a.Demonstrate("plan", tk, "", true)[strings.Index(a.Demonstrate("plan", tk, "", true), "####")+5:])
			if !s.Success() || r.Reward < SolvedReward+EfficiencyBonus {
				t.Fatalf("%s: the solution's fills did not solve it: %+v", tk.ID, r)
			}
		}
		for i := 0; i < test.Len(); i++ {
			if seen[test.Task(i).Meta["puzzle"]] {
				t.Errorf("%d×%d: test puzzle %d is also in train", size, size, i)
			}
		}
	}
}

// Rewards of hand-made steps on
//
//	12 34      1234
//	3. 12      3412
//	.1 .3  →   2143   (blanks at (2,2), (3,1), (3,3); 3 blanks)
//	4321       4321
func TestRewardsOfHandMadeSteps(t *testing.T) {
	task := rollout.Task{Meta: map[string]string{"puzzle": "1234\n3.12\n.1.3\n4321"}}
	env := &Env{}
	play := func(actions ...string) (*State, []rollout.StepResult) {
		s, err := env.Reset(task)
		if err != nil {
			t.Fatal(err)
		}
		var rs []rollout.StepResult
		for _, a := range actions {
			rs = append(rs, env.Step(s, "plan", a))
		}
		return s.(*State), rs
	}
	// one right fill: −0.01 + 0.5·1/3 + 0.02·Δconstraints. Row 2 (3,4,1,2),
	// column 2 (2,4,1,3) and the top-left box (1,2,3,4) become complete and
	// valid: 3 units.
	_, rs := play("[[2, 2, 4]]")
	if want := -0.01 + 0.5/3 + 0.02*3; math.Abs(rs[0].Reward-want) > 1e-12 {
		t.Errorf("one fill: %.15g, want %.15g", rs[0].Reward, want)
	}
	// all three in one step: solved in the first step
	st, rs := play("[[2, 2, 4], [3, 1, 2], [3, 3, 4]]")
	if !st.Success() {
		t.Fatalf("not solved: %s", st.grid.Text())
	}
	// complete and valid before: rows 1 and 4, column 4, the top-right box (4
	// of 12 units); after: all 12
	if want := -0.01 + 0.5 + 0.02*8 + 2.0 + 0.5; math.Abs(rs[0].Reward-want) > 1e-12 {
		t.Errorf("solving step: %.15g, want %.15g", rs[0].Reward, want)
	}
	// the same in two steps: no efficiency bonus on the second
	_, rs = play("[[2, 2, 4]]", "[[3, 1, 2], [3, 3, 4]]")
	if rs[1].Reward > 2.5 || rs[1].Reward < 2.0 {
		t.Errorf("second, solving step: %.15g (no efficiency bonus)", rs[1].Reward)
	}
	// a duplicate in the row: −0.5, not written
	st, rs = play("[[2, 2, 3]]")
	if math.Abs(rs[0].Reward-(-0.51)) > 1e-12 || st.grid.at(1, 1) != 0 || !strings.Contains(rs[0].Message, "repeats") {
		t.Errorf("duplicate: %+v", rs[0])
	}
	// overwriting a clue: −0.5
	if _, rs = play("[[1, 1, 2]]"); math.Abs(rs[0].Reward-(-0.51)) > 1e-12 || !strings.Contains(rs[0].Message, "clue") {
		t.Errorf("clue: %+v", rs[0])
	}
	// a value outside 1..4: −1.0, nothing written
	if st, rs = play("[[2, 2, 4], [3, 1, 7]]"); math.Abs(rs[0].Reward-(-1.01)) > 1e-12 || st.filled() != 0 {
		t.Errorf("out of range: %+v", rs[0])
	}
	// unparsable
	if _, rs = play("[[2, 2]]"); rs[0].Reward != UnparsedReward || rs[0].Metrics["unparsed_actions"] != 1 {
		t.Errorf("unparsable: %+v", rs[0])
	}
	// a whole grid is an action too
	if st, _ = play("1234\n3412\n2143\n4321"); !st.Success() {
		t.Error("a whole grid did not solve it")
	}
}

func TestBadPuzzlesAndActions(t *testing.T) {
	env := &Env{}
	for _, p := range []string{"1234\n3412\n2143\n4321", "....\n....\n....\n....", "1134\n....\n....\n....", "123\n456"} {
		if _, err := env.Reset(rollout.Task{Meta: map[string]string{"puzzle": p}}); err == nil {
			t.Errorf("%q accepted", p)
		}
	}
	for _, a := range []string{"", "[]", "[[0, 1, 2]]", "[[1, 5, 2]]", "12\n34", "[[1, 1, 1, 1]]"} {
		if _, err := ParseAction(a, 4); err == nil {
			t.Errorf("ParseAction(%q) accepted", a)
		}
	}
}
