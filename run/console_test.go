package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"troupe/ckpt"
	"troupe/internal/cmdline"
	"troupe/internal/metrics"
)

// The end of a run: first and last evaluation; the best one with the
// command that exports its checkpoint when an earlier evaluation beat the
// last and the first; and which step export/ holds.
func TestEvalSummary(t *testing.T) {
	old := cmdline.Program
	defer func() { cmdline.Program = old }()
	cmdline.Program = "bin/train"
	dir := t.TempDir()
	jsonl := filepath.Join(dir, "metrics.jsonl")
	write := func(evals [][3]float64) { // step, accuracy, reward
		t.Helper()
		if err := os.WriteFile(jsonl, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		w, _, err := metrics.OpenJSONL(jsonl, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evals {
			if err := w.Write(metrics.Record{Step: int(e[0]), Time: time.Unix(0, 0), Values: map[string]float64{"eval/accuracy": e[1], "eval/mean_reward": e[2]}}); err != nil {
				t.Fatal(err)
			}
			if err := w.Write(metrics.Record{Step: int(e[0]) + 1, Time: time.Unix(0, 0), Values: map[string]float64{"reward/mean": 9}}); err != nil {
				t.Fatal(err)
			}
		}
		w.Close()
	}
	write([][3]float64{{0, 0.25, 1.0}, {10, 0.5, 1.5}, {20, 0.625, 1.75}, {30, 0.125, 1.25}})
	first := "held-out accuracy: 0.250 after step 0 → 0.125 after step 30 (-12.5 points); mean reward 1.000 → 1.250"
	best := "\nbest held-out accuracy: 0.625 after step 20 (+37.5 points over step 0)"
	got := evalSummary(dir, 0)
	if want := first + best + " (its checkpoint was not kept"; !strings.HasPrefix(got, want) {
		t.Errorf("without checkpoints:\n%s\nwant it to start\n%s", got, want)
	}
	step20 := filepath.Join(dir, "checkpoints", ckpt.DirName(20))
	if err := os.MkdirAll(step20, 0o755); err != nil {
		t.Fatal(err)
	}
	want := first + best + "; export it: bin/train export --checkpoint " + step20 + " --out " + filepath.Join(dir, "export-step20") +
		"\n" + filepath.Join(dir, "export") + " holds the models after step 30, the last"
	if got := evalSummary(dir, 30); got != want {
		t.Errorf("with step 20's checkpoint and the export:\n%s\nwant\n%s", got, want)
	}
	// an earlier evaluation beat the last but not step 0: not named
	write([][3]float64{{0, 0.5, 1}, {10, 0.375, 2}, {20, 0.25, 2.5}})
	if got, want := evalSummary(dir, 0), "held-out accuracy: 0.500 after step 0 → 0.250 after step 20 (-25.0 points); mean reward 1.000 → 2.500"; got != want {
		t.Errorf("no evaluation beat step 0:\n%s\nwant\n%s", got, want)
	}
	// the last evaluation is the best (a tie keeps the last): one line
	write([][3]float64{{0, 0.25, 1}, {10, 0.5, 2}, {20, 0.5, 2.5}})
	if got, want := evalSummary(dir, 0), "held-out accuracy: 0.250 after step 0 → 0.500 after step 20 (+25.0 points); mean reward 1.000 → 2.500"; got != want {
		t.Errorf("improving run: %q, want %q", got, want)
	}
	// one evaluation: nothing to compare
	write([][3]float64{{0, 0.25, 1}})
	if got := evalSummary(dir, 30); got != "" {
		t.Errorf("one evaluation: %q, want nothing", got)
	}
}
