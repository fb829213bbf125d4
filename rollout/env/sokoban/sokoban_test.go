package sokoban

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"troupe/rollout"
	"troupe/rollout/env/internal/split"
)

func TestRoomsAreDeterministicSolvableAndSplit(t *testing.T) {
	cfg := DefaultConfig()
	cfg.TrainSize, cfg.TestSize = 300, 100
	a, err := New(cfg, split.Train)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := New(cfg, split.Train)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("one seed, two train splits")
	}
	test, _ := New(cfg, split.Test)
	seen := map[string]bool{}
	for i := 0; i < a.Len(); i++ {
		tk := a.Task(i)
		seen[tk.Meta["room"]] = true
		room, err := ParseRoom(tk.Meta["room"])
		if err != nil {
			t.Fatalf("%s: %v\n%s", tk.ID, err, tk.Meta["room"])
		}
		if dist(room.Box, room.Goal) < 2 {
			t.Fatalf("%s: the box starts %d cells from the goal", tk.ID, dist(room.Box, room.Goal))
		}
		s, err := a.Reset(tk)
		if err != nil {
			t.Fatal(err)
		}
		r := a.Step(s, "plan", tk.Answer)
		if !s.(*State).Success() || r.Metrics["invalid_moves"] != 0 || r.Reward < WinReward {
			t.Fatalf("%s: the solver's moves %q: %+v\n%s", tk.ID, tk.Answer, r, tk.Meta["room"])
		}
	}
	same := 0
	for i := 0; i < test.Len(); i++ {
		if seen[test.Task(i).Meta["room"]] {
			same++
		}
	}
	if same > 0 {
		t.Errorf("%d of %d test rooms are also in train", same, test.Len())
	}
}

// Rewards of hand-made moves in
//
//	######
//	#    #
//	#@$ .#
//	#    #
//	#    #
//	######
func TestRewardsOfHandMadeMoves(t *testing.T) {
	room := "######\n#    #\n#@$ .#\n#    #\n#    #\n######"
	env := &Env{cfg: DefaultConfig()}
	task := rollout.Task{Meta: map[string]string{"room": room}}
	play := func(moves string) (*State, rollout.StepResult) {
		s, err := env.Reset(task)
		if err != nil {
			t.Fatal(err)
		}
		return s.(*State), env.Step(s, "plan", moves)
	}
	// R pushes the box from distance 2 to 1: −0.01 + 0.1·(0.99·−1 + 2) = 0.091;
	// R again onto the goal: −0.01 + 0.1·(0 + 1) + 1 + 10 = 11.09
	st, r := play("R R")
	if math.Abs(r.Reward-(0.091+11.09)) > 1e-12 || !st.Success() {
		t.Errorf("solve: %.15g, success %v", r.Reward, st.Success())
	}
	// L into the wall: −0.05 + 0.1·(0.99·−2 + 2) = −0.048
	if _, r = play("L"); math.Abs(r.Reward-(-0.048)) > 1e-12 || r.Metrics["invalid_moves"] != 1 {
		t.Errorf("into a wall: %.15g", r.Reward)
	}
	// U then R: a walk that leaves the box: −0.01 + 0.1·(0.99·−2 + 2) twice = 2·(−0.008)
	if _, r = play("U R"); math.Abs(r.Reward-(-0.016)) > 1e-12 {
		t.Errorf("walk: %.15g", r.Reward)
	}
	// deadlock: from
	//
	//	######
	//	#    #
	//	# $ .#
	//	# @  #
	//	#    #
	//	######
	//
	// U pushes the box to (1,2), R and U walk to (1,3), L pushes it into the
	// corner (1,1): with deadlock_end the episode ends there with the
	// deadlock penalty
	corner := "######\n#    #\n# $ .#\n# @  #\n#    #\n######"
	ends := &Env{cfg: DefaultConfig()}
	ends.cfg.DeadlockEnd = true
	s, err := ends.Reset(rollout.Task{Meta: map[string]string{"room": corner}})
	if err != nil {
		t.Fatal(err)
	}
	r = ends.Step(s, "plan", "U R U L R R")
	st = s.(*State)
	if !st.deadlock || !st.Done() || st.Success() || st.Moves != 4 || r.Metrics["deadlocks"] != 1 || r.Reward > DeadlockReward+0.5 {
		t.Errorf("corner: deadlock %v done %v moves %d, %+v\n%s", st.deadlock, st.Done(), st.Moves, r, st.Text())
	}
	// unparsable
	if _, r = play("jump"); r.Reward != UnparsedReward || r.Metrics["unparsed_actions"] != 1 {
		t.Errorf("unparsable: %+v", r)
	}
}

func TestBadRoomsAreErrors(t *testing.T) {
	env := &Env{cfg: DefaultConfig()}
	for _, room := range []string{
		"#####\n#@$.#\n#####",               // not square
		"####\n#@$#\n#. #\n####",            // box in a corner? no: unsolvable (the box can only go right into the wall)
		"####\n#@ #\n#. #\n####",            // no box
		"#####\n#@$$#\n#.  #\n#   #\n#####", // two boxes
		"####\n#@x#\n#.$#\n####",            // unknown cell
	} {
		if _, err := env.Reset(rollout.Task{Meta: map[string]string{"room": room}}); err == nil {
			t.Errorf("accepted:\n%s", room)
		}
	}
	if got := fallbackRoom(6); !strings.Contains(got, "#@$ .#") {
		t.Errorf("fallback room:\n%s", got)
	}
	if r, err := ParseRoom(fallbackRoom(7)); err != nil {
		t.Error(err)
	} else if _, ok := r.Solve(); !ok {
		t.Error("the fallback room cannot be solved")
	}
}

// Move lists played with the default rewards (deadlock_end off), against
// PettingLLMs' own SokobanGridEnvState.step at 244467e (pettingllms/
// multi_agent_env/stateful/env_state.py, loaded alone by the Python
// reference environment, its room generator replaced by one that returns
// the room below in gym-sokoban's codes): want is the reference's reward
// after each action. The last room pushes the box into a corner, where the
// reference plays on.
func TestSokobanRewardMatchesReference(t *testing.T) {
	env := &Env{cfg: DefaultConfig()}
	for _, c := range []struct {
		room    string
		actions []string
		want    []float64
	}{
		{"######\n#    #\n#@$ .#\n#    #\n#    #\n######", []string{"R R"}, []float64{11.181}},
		{"######\n#    #\n#@$ .#\n#    #\n#    #\n######", []string{"L", "U R"}, []float64{-0.048, -0.016}},
		{"######\n#    #\n# $ .#\n# @  #\n#    #\n######", []string{"U R U L R R", "D D"}, []float64{-0.239, -0.012}},
	} {
		s, err := env.Reset(rollout.Task{Meta: map[string]string{"room": c.room}})
		if err != nil {
			t.Fatal(err)
		}
		for i, a := range c.actions {
			if r := env.Step(s, "plan", a); math.Abs(r.Reward-c.want[i]) > 1e-9 {
				t.Errorf("%q, action %q: reward %.6f, the reference's %.6f (%s)", c.room, a, r.Reward, c.want[i], r.Message)
			}
		}
		if s.Done() {
			st := s.(*State)
			if !st.Success() {
				t.Errorf("%q: the episode ended unsolved after %d moves; the reference plays on", c.room, st.Moves)
			}
		}
	}
}
