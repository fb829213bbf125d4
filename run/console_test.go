package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"troupe/ckpt"
	"troupe/internal/metrics"
)

// The end-of-run line: first and last evaluation, and the best one with its
// checkpoint when an earlier evaluation beat the last.
func TestEvalSummary(t *testing.T) {
	dir := t.TempDir()
	jsonl := filepath.Join(dir, "metrics.jsonl")
	w, _, err := metrics.OpenJSONL(jsonl, 0)
	if err != nil {
		t.Fatal(err)
	}
	evals := [][3]float64{{0, 0.25, 1.0}, {10, 0.5, 1.5}, {20, 0.625, 1.75}, {30, 0.125, 1.25}} // step, accuracy, reward
	for _, e := range evals {
		if err := w.Write(metrics.Record{Step: int(e[0]), Time: time.Unix(0, 0), Values: map[string]float64{"eval/accuracy": e[1], "eval/mean_reward": e[2]}}); err != nil {
			t.Fatal(err)
		}
		if err := w.Write(metrics.Record{Step: int(e[0]) + 1, Time: time.Unix(0, 0), Values: map[string]float64{"reward/mean": 9}}); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	root := filepath.Join(dir, "checkpoints")
	first := "held-out accuracy: 0.250 after step 0 → 0.125 after step 30 (-12.5 points); mean reward 1.000 → 1.250"
	got := evalSummary(jsonl, root)
	if want := first + "\nbest held-out accuracy: 0.625 after step 20 (its checkpoint was not kept"; !strings.HasPrefix(got, want) {
		t.Errorf("without checkpoints:\n%s\nwant it to start\n%s", got, want)
	}
	if err := os.MkdirAll(filepath.Join(root, ckpt.DirName(20)), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, want := evalSummary(jsonl, root), first+"\nbest held-out accuracy: 0.625 after step 20; its checkpoint: "+filepath.Join(root, ckpt.DirName(20)); got != want {
		t.Errorf("with step 20's checkpoint:\n%s\nwant\n%s", got, want)
	}
	// the last evaluation is the best (a tie keeps the last): one line
	if err := os.WriteFile(jsonl, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	w, _, _ = metrics.OpenJSONL(jsonl, 0)
	for _, e := range [][3]float64{{0, 0.25, 1}, {10, 0.5, 2}, {20, 0.5, 2.5}} {
		w.Write(metrics.Record{Step: int(e[0]), Time: time.Unix(0, 0), Values: map[string]float64{"eval/accuracy": e[1], "eval/mean_reward": e[2]}})
	}
	w.Close()
	if got, want := evalSummary(jsonl, root), "held-out accuracy: 0.250 after step 0 → 0.500 after step 20 (+25.0 points); mean reward 1.000 → 2.500"; got != want {
		t.Errorf("improving run: %q, want %q", got, want)
	}
}
