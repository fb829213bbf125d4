package config

// epochs.go — run.epochs: a run's length in passes over its training split,
// as verl's trainer counts it (langfengQ/DrMAS 19c632b,
// verl/trainer/ppo/ray_trainer.py:648,671: a loader that drops the last
// partial batch, so total_training_steps = len(loader) × total_epochs =
// ⌊tasks / train_batch_size⌋ × epochs).
//
// The split's size is known only once it is read, so the run counts the
// steps then (StepsFromEpochs, called by run/ right after the environment
// is built, before the optimizers, whose cosine schedule spans run.steps)
// and from there on the config says run.steps: N, run.epochs: 0. That is
// what the run prints, `train check` shows (with the count) and every
// checkpoint saves: a run resumed from its checkpoint trains the steps it
// started with, whatever the data file holds by then; resumed with the
// config file, it counts them again from the file. run.epochs and
// run.steps are refused together (checkRunLength), and a recipe's run
// length (Dr. MAS's epochs, the others' steps) gives way to either one
// that the config sets.
//
// What it is not: an epoch boundary. troupe's batches run on across an
// epoch's end (rollout.TaskIterator) where verl drops the last partial
// batch, so the steps take as many tasks as verl's, not the same ones.

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// checkRunLength refuses run.epochs (non-zero) and run.steps set together
// in the file or by --set.
func checkRunLength(root *yaml.Node) error {
	e := nodeAt(root, "run", "epochs")
	if e == nil || e.Value == "0" || e.Value == "" || nodeAt(root, "run", "steps") == nil {
		return nil
	}
	return fmt.Errorf("run.epochs: %s set together with run.steps: %s; keep one: run.epochs counts the steps from the training split (epochs × ⌊tasks / batch.prompts_per_step⌋), run.steps gives them", e.Value, nodeAt(root, "run", "steps").Value)
}

// runLengthKeys are the two keys of a run's length: a recipe's value for
// one is not applied when the config sets the other.
var runLengthKeys = map[string]string{"run.steps": "run.epochs", "run.epochs": "run.steps"}

// StepsFromEpochs counts run.steps from run.epochs and the training split's
// task count (the first batch.epoch_tasks when an epoch replays them), and
// sets run.epochs to 0. It does nothing when run.epochs is 0.
func (c *Config) StepsFromEpochs(tasks int) error {
	if c.Run.Epochs == 0 {
		return nil
	}
	if n := c.Batch.EpochTasks; n > 0 && n < tasks {
		tasks = n
	}
	per := c.Batch.PromptsPerStep
	batches := tasks / per
	if batches == 0 {
		return fmt.Errorf("run.epochs: the training split has %d tasks, fewer than one batch of batch.prompts_per_step = %d; lower batch.prompts_per_step or set run.steps", tasks, per)
	}
	c.length = fmt.Sprintf("run.steps %d = run.epochs %d × ⌊%d tasks / %d per step⌋", c.Run.Epochs*batches, c.Run.Epochs, tasks, per)
	c.Run.Steps, c.Run.Epochs = c.Run.Epochs*batches, 0
	return nil
}

// RunLength says how run.steps was counted from run.epochs; "" when the
// config gave run.steps.
func (c *Config) RunLength() string { return c.length }
