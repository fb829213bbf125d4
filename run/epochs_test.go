package run

import (
	"path/filepath"
	"strings"
	"testing"
)

// run.epochs is counted once the training split is read: train check of
// Dr. MAS's math config (the recipe's 2 epochs, run_math.sh:98) over a
// 6-task file at 2 tasks a step shows 2 × ⌊6 / 2⌋ = 6 steps and how they
// were counted; at the config's 32 a step the file holds no whole batch,
// and the check says so by key.
func TestCheckCountsStepsFromEpochs(t *testing.T) {
	dir := t.TempDir()
	initTiny(t, dir, 1)
	data := filepath.Join("..", "testdata", "math", "tiny_verl.parquet")
	sets := []string{"models.qwen3_4b.path=" + dir, "models.qwen3_4b.shard=0", "run.device=cpu", "run.dtype=float32", "max_new_tokens=64",
		"env.math.train=" + data, "env.math.test=" + data, "run.output_dir=" + filepath.Join(t.TempDir(), "run")}
	file := filepath.Join("..", "configs", "drmas-math-qwen3-4b.yaml")
	var out strings.Builder
	if err := (&Check{Config: file, Sets: append(sets, "batch.prompts_per_step=2")}).Run(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"steps: 6, each 2 tasks", "counted from run.epochs: run.steps 6 = run.epochs 2 × ⌊6 tasks / 2 per step⌋", "\n  steps: 6\n", "\n  epochs: 0\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("train check's output lacks %q:\n%s", want, out.String())
		}
	}
	err := (&Check{Config: file, Sets: sets}).Run(&out)
	if err == nil || !strings.Contains(err.Error(), "run.epochs: the training split has 6 tasks, fewer than one batch of batch.prompts_per_step = 32") {
		t.Errorf("6 tasks at 32 a step: %v, want run.epochs refused", err)
	}
}
