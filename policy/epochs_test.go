package policy

import (
	"math"
	"testing"

	"troupe/torch"
)

// verl's ppo_epochs and ppo_mini_batch_size: with one mini-batch and two
// epochs the model takes two optimizer steps on the same rows, and the
// second sees ratios away from 1 (its log-probs differ from the old ones
// computed before the first); mini_batch_rows sets the number of
// mini-batches from the rows (5 rows of 2 → 3 optimizer steps per epoch).
func TestEpochsAndMiniBatchRowsTakeSeveralSteps(t *testing.T) {
	checkLeaks(t)
	seqs := append(contrast("a"), []Sequence{
		{Agent: "a", Prompt: []int{7, 8}, Response: []int{30, 31, 32}, Advantage: 0.5},
		{Agent: "a", Prompt: []int{9}, Response: []int{40, 41}, Advantage: -0.25},
		{Agent: "a", Prompt: []int{4}, Response: []int{50, 51}, Advantage: 2},
	}...)
	for _, c := range []struct {
		epochs, miniRows, wantSteps int
	}{{2, 0, 2}, {1, 2, 3}, {2, 2, 6}} {
		m := tinyModel(t, 4, torch.Float32)
		s := trainSettings()
		s.MicroBatchSize, s.Epochs, s.MiniBatchRows = 8, c.epochs, c.miniRows
		tr := newTrainer(t, TrainerConfig{Group: group("m", s, "a"), Policy: m, Temperature: 1})
		var offOne []bool // per micro-batch call: some ratio differs from 1
		tr.onMicroBatch = func(mini, micro int, logp, old, mask *torch.Tensor) {
			a, b := logp.Float32s(), old.Float32s()
			differs := false
			for i := range a {
				differs = differs || math.Float32bits(a[i]) != math.Float32bits(b[i])
			}
			offOne = append(offOne, differs)
		}
		met := update(t, tr, seqs, 0)
		if got := met[MetricKey("a", "updates")]; int(got) != c.wantSteps || len(offOne) != c.wantSteps {
			t.Fatalf("epochs %d, mini_batch_rows %d: %g optimizer steps, %d mini-batches run; want %d", c.epochs, c.miniRows, got, len(offOne), c.wantSteps)
		}
		if offOne[0] || !offOne[len(offOne)-1] {
			t.Errorf("epochs %d, mini_batch_rows %d: ratio off 1 per mini-batch %v; want exactly 1 first and off 1 last", c.epochs, c.miniRows, offOne)
		}
	}
}
