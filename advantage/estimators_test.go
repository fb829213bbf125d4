package advantage

import (
	"slices"
	"strings"
	"testing"
)

func TestGRPOStepVector1(t *testing.T) {
	// One group of all eight row scores [1,1,0,0,0,0.9,1,1]: mean 0.6125,
	// sample std 0.508324 (Python's statistics.stdev).
	res := mustCompute(t, nameGRPOStep, DefaultOptions(), vector1Rows())
	assertClose(t, "grpo-step", res.Advantages, []float64{
		0.762308, 0.762308, -1.204939, -1.204939, -1.204939, 0.565584, 0.762308, 0.762308})
	if res.Groups[0].Samples != 8 {
		t.Errorf("samples: got %d, want 8 rows", res.Groups[0].Samples)
	}
}

func TestGRPOTrajectoryIsTheSample(t *testing.T) {
	res := mustCompute(t, nameGRPO, DefaultOptions(), vector1Rows())
	if g := res.Groups[0]; g.Samples != 3 || len(g.Rows) != 8 {
		t.Errorf("group: %d samples over %d rows, want 3 trajectories over 8 rows", g.Samples, len(g.Rows))
	}
	// A singleton prompt group (one trajectory) follows the singleton option.
	rows := []Row{{Prompt: 1, Traj: 0, Reward: 0.5}, {Prompt: 1, Traj: 0, Reward: 1.5}}
	res = mustCompute(t, nameGRPO, DefaultOptions(), rows)
	assertClose(t, "singleton raw", res.Advantages, []float64{0.999999, 0.999999})
	res = mustCompute(t, nameGRPO, zeroSingletons(), rows)
	assertClose(t, "singleton zero", res.Advantages, []float64{0, 0})
}

func TestTrajectoriesAreKeyedByPromptAndTraj(t *testing.T) {
	// Traj 0 in prompt 0 and Traj 0 in prompt 1 are different trajectories.
	rows := []Row{
		{Prompt: 0, Traj: 0, Reward: 1}, {Prompt: 0, Traj: 1, Reward: 0},
		{Prompt: 1, Traj: 0, Reward: 5}, {Prompt: 1, Traj: 1, Reward: 3},
	}
	res := mustCompute(t, nameGRPO, noStd(), rows)
	assertClose(t, "grpo", res.Advantages, []float64{0.5, -0.5, 1, -1})
}

func TestRLOO(t *testing.T) {
	// Vector 1's trajectory scores 1, 0, 2.9/3: A = r − mean of the others.
	//   A: 1 − (0 + 0.966667)/2 = 0.516667
	//   B: 0 − (1 + 0.966667)/2 = −0.983333
	//   C: 0.966667 − (1 + 0)/2 = 0.466667
	res := mustCompute(t, nameRLOO, DefaultOptions(), vector1Rows())
	assertClose(t, "rloo", res.Advantages, []float64{
		0.516667, 0.516667, -0.983333, -0.983333, -0.983333, 0.466667, 0.466667, 0.466667})
	// divide_by_std does not apply to RLOO.
	res = mustCompute(t, nameRLOO, noStd(), vector1Rows())
	assertClose(t, "rloo no std", res.Advantages[:3], []float64{0.516667, 0.516667, -0.983333})

	single := []Row{{Traj: 4, Reward: 0.25}}
	res = mustCompute(t, nameRLOO, DefaultOptions(), single)
	assertClose(t, "rloo singleton raw", res.Advantages, []float64{0.25})
	res = mustCompute(t, nameRLOO, zeroSingletons(), single)
	assertClose(t, "rloo singleton zero", res.Advantages, []float64{0})
}

func TestNamesAndNew(t *testing.T) {
	want := []string{"grpo", "grpo-step", "drmas", "atgrpo", "magrpo", "rloo"}
	if !slices.Equal(Names(), want) {
		t.Fatalf("Names: got %v, want %v", Names(), want)
	}
	for _, name := range Names() {
		est, err := New(name, DefaultOptions())
		if err != nil {
			t.Fatalf("New(%q): %v", name, err)
		}
		if est.Name() != name {
			t.Errorf("New(%q).Name() = %q", name, est.Name())
		}
	}
	_, err := New("ppo", DefaultOptions())
	if err == nil || !strings.Contains(err.Error(), `unknown estimator "ppo"; valid: grpo, grpo-step, drmas, atgrpo, magrpo, rloo`) {
		t.Errorf("unknown name: got %v", err)
	}
}

func TestDrMASGroupsByPromptAndAgent(t *testing.T) {
	rows := vector1Rows()
	rows = append(rows, Row{Prompt: 8, Traj: 0, Agent: "S", Reward: 0}, Row{Prompt: 8, Traj: 1, Agent: "S", Reward: 1})
	res := mustCompute(t, nameDrMAS, DefaultOptions(), rows)
	var labels []string
	for _, g := range res.Groups {
		labels = append(labels, g.Label)
	}
	want := []string{"prompt=7 agent=S", "prompt=7 agent=V", "prompt=8 agent=S"}
	if !slices.Equal(labels, want) {
		t.Errorf("groups: got %v, want %v", labels, want)
	}
	// Adding prompt 8 leaves prompt 7's advantages as in vector 1.
	assertClose(t, "prompt 7", res.Advantages[:8], []float64{
		0.790904, 0.577349, -1.092201, -1.154699, -1.092201, 0.602594, 0.577349, 0.790904})
}
