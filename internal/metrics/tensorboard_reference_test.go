package metrics

// tensorboard_reference_test.go — the event file read by TensorBoard itself:
// the tensorboard package's EventAccumulator (through
// scripts/gpu/check_tensorboard.py --dump, run by the Python reference
// environment, internal/pyref) must read back every scalar and text this
// package wrote, with its tag, step and float32 value, after a run that was
// killed mid-record and resumed from an earlier checkpoint: each step once,
// holding the resumed run's values. The Go-side decoder of
// tensorboard_test.go checks the encoding against the schema; this checks
// it against the reader users have.

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"troupe/internal/pyref"
)

// tbScalars are one step's values: odd float32 cases included (NaN, ±Inf,
// −0, a subnormal, the largest finite, a float64 that rounds).
func tbScalars(step int, attempt float64) map[string]float64 {
	return map[string]float64{
		"policy/solver/loss":             0.25*float64(step) - attempt,
		"policy/verifier/loss":           -1.0 / float64(step+1),
		"grad_norm/solver":               math.Pi * float64(step) * (1 + attempt),
		"reward/mean":                    0.1 + attempt,
		"odd/nan":                        math.NaN(),
		"odd/inf":                        math.Inf(1),
		"odd/-inf":                       math.Inf(-1),
		"odd/-0":                         math.Copysign(0, -1),
		"odd/subnormal":                  1e-40,
		"odd/max":                        math.MaxFloat32,
		"odd/rounds":                     1 + 1e-9*float64(step),
		fmt.Sprintf("only/step%d", step): float64(step), // a tag that appears at one step
	}
}

func tbText(step int, attempt float64) string {
	return fmt.Sprintf("## step %d, attempt %g\n\n**solver:** 2+2 = `4` — ✓ ünïcödé 数学\n", step, attempt)
}

func TestEventsReadByTensorBoard(t *testing.T) {
	python := pyref.Python(t)
	dir := t.TempDir()
	now := time.Unix(1_700_000_000, 0)
	write := func(from, to int, attempt float64) {
		ev, _, err := OpenEvents(dir, from)
		if err != nil {
			t.Fatal(err)
		}
		for step := from; step <= to; step++ {
			if err := ev.Scalars(step, now, tbScalars(step, attempt)); err != nil {
				t.Fatal(err)
			}
			if err := ev.Text(step, now, "episodes", tbText(step, attempt)); err != nil {
				t.Fatal(err)
			}
		}
		if err := ev.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// the first run logs steps 1–4 and is killed in the middle of step 5's record
	write(1, 4, 0)
	path := filepath.Join(dir, EventsFile)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	rec := frameRecord(event(now, 5, nil))
	if _, err := f.Write(rec[:len(rec)/2]); err != nil {
		t.Fatal(err)
	}
	f.Close()
	// it resumes from its step-2 checkpoint: steps 3–6 again, other values
	ev, report, err := OpenEvents(dir, 3)
	if err != nil {
		t.Fatal(err)
	}
	ev.Close()
	if !report.TornLine {
		t.Errorf("reopening after the kill did not report the torn record")
	}
	write(3, 6, 1)

	var got struct {
		Scalars map[string][][2]uint64
		Texts   map[string][]struct {
			Step int
			Text string
		}
		Plugins map[string]string
	}
	out := pyref.Run(t, "scripts/gpu/check_tensorboard.py", "--dump", dir)
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("check_tensorboard.py --dump: %v\n%s", err, out)
	}
	t.Logf("%s reads %d scalar tags and %d text tags", python, len(got.Scalars), len(got.Texts))

	// what the file must hold: steps 1–2 of the first run, 3–6 of the resumed one
	want := map[string][][2]uint64{}
	for step := 1; step <= 6; step++ {
		attempt := 0.0
		if step >= 3 {
			attempt = 1
		}
		for tag, v := range tbScalars(step, attempt) {
			want[tag] = append(want[tag], [2]uint64{uint64(step), uint64(math.Float32bits(float32(v)))})
		}
	}
	for tag, w := range want {
		g := got.Scalars[tag]
		if !slices.Equal(g, w) {
			t.Errorf("scalar %s: TensorBoard reads (step, float32 bits) %v, troupe wrote %v", tag, g, w)
		}
	}
	for tag := range got.Scalars {
		if _, ok := want[tag]; !ok {
			t.Errorf("TensorBoard reads a scalar tag troupe did not write: %q", tag)
		}
	}
	if p := got.Plugins["episodes"]; p != "text" {
		t.Errorf("the episodes summaries name the plugin %q; TensorBoard's text tab shows \"text\"", p)
	}
	texts := got.Texts["episodes"]
	if len(got.Texts) != 1 || len(texts) != 6 {
		t.Fatalf("text tags %d (want 1, episodes), episodes events %d (want 6, one per step)", len(got.Texts), len(texts))
	}
	for i, e := range texts {
		attempt := 0.0
		if i+1 >= 3 {
			attempt = 1
		}
		if e.Step != i+1 || e.Text != tbText(i+1, attempt) {
			t.Errorf("episodes event %d: step %d text %q, want step %d text %q", i, e.Step, e.Text, i+1, tbText(i+1, attempt))
		}
	}
}
