package sudoku

import (
	"math"
	"testing"

	"troupe/rollout"
)

// The step reward with reward: reference, against PettingLLMs' own
// SudukuEnvState.step at 244467e (pettingllms/multi_agent_env/stateful/
// env_state.py, loaded alone by the Python reference environment with its
// unused room generator stubbed; its fills are 0-based, troupe's 1-based,
// so each [r, c, v] below is the reference's plus one on r and c). Every
// case starts from this puzzle (6 blanks, one solution):
//
//	1 . . 4
//	3 4 . 2
//	. 1 4 .
//	4 . 2 1
//
// and plays its actions in turn; want is the reference's reward after each.
func TestSudokuRewardMatchesReference(t *testing.T) {
	const puzzle = "1..4\n34.2\n.14.\n4.21"
	for _, c := range []struct {
		name    string
		actions []string
		want    []float64
		solved  bool
	}{
		{"fills: unique, then two good and a clue, a repeat, the last three",
			[]string{"[[1,2,2]]", "[[1,3,3],[2,3,1],[1,1,9]]", "[[3,1,3]]", "[[3,1,2],[3,4,3],[4,2,3]]"},
			[]float64{0.4, 0.51875, -0.3, 3.225}, true},
		{"the solution as a grid", []string{"[[1,2,3,4],[3,4,1,2],[2,1,4,3],[4,3,2,1]]"}, []float64{2.49}, true},
		{"a grid with repeats, then the solution",
			[]string{"[[1,3,2,4],[3,4,1,2],[2,1,4,3],[4,3,2,1]]", "[[1,2,3,4],[3,4,1,2],[2,1,4,3],[4,3,2,1]]"},
			[]float64{-0.2025, 2.49}, true},
		{"a grid with a blank, fills out of range and off the grid, then every fill",
			[]string{"[[1,2,3,4],[3,4,0,2],[2,1,4,3],[4,3,2,1]]", "[[1,2,5],[5,1,1]]", "[[1,2,2],[1,3,3],[2,3,1],[3,1,2],[3,4,3],[4,2,3]]"},
			[]float64{-1.0, -0.6, 4.44375}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := &Env{reference: true}
			s, err := e.Reset(rollout.Task{Meta: map[string]string{"puzzle": puzzle}})
			if err != nil {
				t.Fatal(err)
			}
			for i, a := range c.actions {
				r := e.Step(s, "plan", a)
				if math.Abs(r.Reward-c.want[i]) > 1e-9 {
					t.Errorf("action %d %s: reward %.6f, the reference's %.6f (%s)", i+1, a, r.Reward, c.want[i], r.Message)
				}
			}
			if s.Success() != c.solved {
				t.Errorf("solved %v, want %v", s.Success(), c.solved)
			}
		})
	}
}
