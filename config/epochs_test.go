package config

import (
	"slices"
	"strings"
	"testing"
)

const drmasMathYAML = `recipe: drmas
models: {m: {path: M}}
agents: [{name: solver, model: m, preset: math-solver}, {name: verifier, model: m, preset: math-verifier}]
workflow: {name: math-refine, math_refine: {solver: solver, verifier: verifier}}
env: {name: math}
`

// run.epochs counts the steps as verl does (ray_trainer.py:648,671:
// len(loader) × total_epochs, the loader dropping the last partial batch):
// 2 × ⌊7000 / 32⌋ = 2 × 218; an epoch of a replayed prefix counts its
// tasks; a split smaller than one batch is refused by name; 0 leaves
// run.steps alone.
func TestStepsFromEpochs(t *testing.T) {
	for _, tc := range []struct {
		epochs, tasks, per, epochTasks int
		steps                          int
	}{
		{2, 7000, 32, 0, 436},
		{1, 7000, 128, 0, 54},
		{3, 6, 2, 0, 9},
		{2, 1000, 32, 640, 40},
		{0, 7000, 32, 0, 10},
	} {
		c := Default()
		c.Run.Epochs, c.Batch.PromptsPerStep, c.Batch.EpochTasks = tc.epochs, tc.per, tc.epochTasks
		if err := c.StepsFromEpochs(tc.tasks); err != nil {
			t.Fatal(err)
		}
		if c.Run.Steps != tc.steps || c.Run.Epochs != 0 && tc.epochs != 0 {
			t.Errorf("%d epochs of %d tasks (epoch_tasks %d) at %d a step: run.steps %d, run.epochs %d; want %d steps, epochs 0",
				tc.epochs, tc.tasks, tc.epochTasks, tc.per, c.Run.Steps, c.Run.Epochs, tc.steps)
		}
		if (c.RunLength() != "") != (tc.epochs > 0) {
			t.Errorf("%d epochs: RunLength %q", tc.epochs, c.RunLength())
		}
	}
	c := Default()
	c.Run.Epochs, c.Batch.PromptsPerStep = 2, 32
	if err := c.StepsFromEpochs(6); err == nil || !strings.Contains(err.Error(), "run.epochs") || !strings.Contains(err.Error(), "6 tasks") {
		t.Errorf("6 tasks at 32 a step: %v, want run.epochs refused naming the 6 tasks", err)
	}
}

// run.epochs and run.steps are one setting: both set in the file or by
// --set is refused; a recipe's run length gives way to the config's.
func TestRunEpochsOrSteps(t *testing.T) {
	for _, tc := range []struct {
		name string
		yaml string
		sets []string
	}{
		{"both in the file", "run: {steps: 5, epochs: 2}\n", nil},
		{"steps in the file, epochs set", "run: {steps: 5}\n", []string{"run.epochs=2"}},
		{"epochs in the file, steps set", "run: {epochs: 2}\n", []string{"run.steps=5"}},
	} {
		_, err := parse([]byte(drmasMathYAML+tc.yaml), tc.sets, noModels)
		if err == nil || !strings.Contains(err.Error(), "run.epochs") || !strings.Contains(err.Error(), "run.steps") {
			t.Errorf("%s: %v, want both refused by name", tc.name, err)
		}
	}
	// the Dr. MAS recipe's epochs give way to the file's steps, and the
	// other way round; AT-GRPO's steps give way to the file's epochs
	c, err := parse([]byte(drmasMathYAML+"run: {steps: 50}\n"), nil, noModels)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, kept := c.RecipeReport(); c.Run.Steps != 50 || c.Run.Epochs != 0 || !slices.Contains(kept, "run.steps") {
		t.Errorf("drmas with run.steps 50: steps %d, epochs %d, kept %v", c.Run.Steps, c.Run.Epochs, kept)
	}
	if c, err = parse([]byte(drmasMathYAML+"run: {epochs: 3}\n"), nil, noModels); err != nil || c.Run.Epochs != 3 {
		t.Errorf("drmas with run.epochs 3: %v, epochs %d", err, c.Run.Epochs)
	}
	atgrpo := `recipe: atgrpo-pettingllms
models: {m: {path: M}}
agents: [{name: tool, model: m, preset: mathtool-program}, {name: reasoner, model: m, preset: mathtool-reasoner}]
workflow: {name: math-tool}
env: {name: math}
run: {epochs: 1}
`
	if c, err = parse([]byte(atgrpo), nil, noModels); err != nil || c.Run.Epochs != 1 || c.Run.Steps == 200 {
		t.Errorf("atgrpo with run.epochs 1: %v, epochs %d, steps %d (the recipe's 200 must give way)", err, c.Run.Epochs, c.Run.Steps)
	}
	d := Default()
	d.Run.Epochs = -1
	if err := d.validateRun(); err == nil || !strings.Contains(err.Error(), "run.epochs") {
		t.Errorf("run.epochs -1: %v", err)
	}
}

// The counted steps are what a checkpoint saves: its config reads back
// with run.steps N and run.epochs 0 (a resume trains those steps), taking
// run.epochs again is refused, and resuming with the file (run.epochs 2)
// changes nothing that trains.
func TestCountedStepsResume(t *testing.T) {
	c, err := parse([]byte(drmasMathYAML), nil, noModels)
	if err != nil {
		t.Fatal(err)
	}
	if c.Run.Epochs != 2 {
		t.Fatalf("drmas math: run.epochs %d, want run_math.sh's 2", c.Run.Epochs)
	}
	if err := c.StepsFromEpochs(100); err != nil {
		t.Fatal(err)
	}
	saved, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := parse(saved, nil, noModels)
	if err != nil {
		t.Fatalf("the checkpoint's config: %v", err)
	}
	if back.Run.Steps != 6 || back.Run.Epochs != 0 {
		t.Errorf("the checkpoint's config: run.steps %d, run.epochs %d; want 2 × ⌊100 / 32⌋ = 6 and 0", back.Run.Steps, back.Run.Epochs)
	}
	if _, err := parse(saved, []string{"run.epochs=3"}, noModels); err == nil {
		t.Error("resume --set run.epochs=3 over the saved run.steps: accepted")
	}
	file, err := parse([]byte(drmasMathYAML), nil, noModels)
	if err != nil {
		t.Fatal(err)
	}
	changes, err := ResumeChanges(back, file)
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range changes {
		if ch.Trains {
			t.Errorf("resuming with the file: %s refused as a change to training", ch)
		}
	}
}
