package run

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"troupe/internal/metrics"
	"troupe/policy"
)

// overlapRun trains tinyConfigYAML over base into dir/name with the sets,
// and returns Train's error.
func overlapRun(t *testing.T, dir, base, name string, sets ...string) error {
	t.Helper()
	return teamRun(t, io.Discard, dir, base, name, sets...)
}

// teamTest starts a test of the two-model team: skipped with -short (why
// says what it runs), locked to its OS thread until it ends, and a tiny
// model in a temporary directory; it returns the directory and the model.
func teamTest(t *testing.T, why string) (dir, base string) {
	t.Helper()
	if testing.Short() {
		t.Skip(why)
	}
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread) // cleanups run on the test's goroutine
	dir = t.TempDir()
	base = filepath.Join(dir, "base")
	initTiny(t, base, 5)
	return dir, base
}

// teamRun is overlapRun printing to out (any testing.TB).
func teamRun(tb testing.TB, out io.Writer, dir, base, name string, sets ...string) error {
	tb.Helper()
	cfgPath := filepath.Join(dir, name+".yaml")
	yaml := strings.ReplaceAll(strings.ReplaceAll(tinyConfigYAML, "OUT", filepath.Join(dir, name)), "MODEL", base)
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o644); err != nil {
		tb.Fatal(err)
	}
	// the untrained model's answers are all invalid: the entropy bonus
	// moves both models every step anyway
	sets = append([]string{"optim.entropy_coef=0.01", "max_new_tokens=16", "export.at_end=false"}, sets...)
	return (&Train{Config: cfgPath, Sets: sets, Quiet: true}).Run(out)
}

// lanePerModel puts each trained model in a lane of its own for the test
// (on the CPU every model shares the one device) and counts the updates
// each OS thread ran.
func lanePerModel(t *testing.T) (threads func() int) {
	var mu sync.Mutex
	seen := map[int]bool{}
	laneOf = func(_ *team, tr *policy.Trainer) string { return tr.Model() }
	updateFault = func(int, string) error {
		mu.Lock()
		seen[syscall.Gettid()] = true
		mu.Unlock()
		return nil
	}
	t.Cleanup(func() {
		laneOf = func(t *team, tr *policy.Trainer) string { return t.models[tr.Model()].Device().String() }
		updateFault = func(int, string) error { return nil }
	})
	return func() int { mu.Lock(); defer mu.Unlock(); return len(seen) }
}

// sameCheckpoints compares every file of two checkpoint directories' models.
func sameCheckpoints(t *testing.T, a, b string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(filepath.Join(a, "models"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(a, p)
		x, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		y, err := os.ReadFile(filepath.Join(b, rel))
		if err != nil {
			return err
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs", rel)
		}
		n++
		return nil
	})
	if err != nil || n == 0 {
		t.Fatalf("comparing %s with %s: %v (%d files)", a, b, err, n)
	}
}

// sameMetrics compares two runs' metrics.jsonl, every value but the timings,
// memory and machine readings, bit for bit.
func sameMetrics(t *testing.T, a, b string) {
	t.Helper()
	ra, err := metrics.ReadJSONL(filepath.Join(a, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	rb, err := metrics.ReadJSONL(filepath.Join(b, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ra) != len(rb) {
		t.Fatalf("%d metric records against %d", len(ra), len(rb))
	}
	compared := 0
	for i := range ra {
		for k, v := range ra[i].Values {
			if strings.HasPrefix(k, "time/") || strings.HasPrefix(k, "memory/") || strings.HasPrefix(k, "throughput/") || strings.HasPrefix(k, "system/") || strings.HasPrefix(k, "engine/") {
				continue
			}
			if w, ok := rb[i].Values[k]; !ok || w != v {
				t.Errorf("step %d: %s = %v synchronous, %v (present %v) with update lanes", ra[i].Step, k, v, w, ok)
			}
			compared++
		}
	}
	if compared < 20 {
		t.Fatalf("only %d values compared", compared)
	}
}

// TestUpdateLanesEqualTheSynchronousStep: with run.concurrent_updates and each
// of the team's two models in a lane of its own, three steps give the
// synchronous run's metrics and checkpoint bit for bit, the updates ran on
// two OS threads, and the wait metric is logged; a failure of one
// model's update in step 2 fails the run naming it, keeps step 1's
// checkpoint as the newest, and the resumed run ends equal to the
// synchronous one; so does a run stopped by SIGTERM during step 2's
// update, after saving step 2.
func TestUpdateLanesEqualTheSynchronousStep(t *testing.T) {
	dir, base := teamTest(t, "three training runs of a two-model team; skipped with -short")
	steps := []string{"run.steps=3", "checkpoint.every=1"}
	if err := overlapRun(t, dir, base, "sync", steps...); err != nil {
		t.Fatal(err)
	}

	threads := lanePerModel(t)
	if err := overlapRun(t, dir, base, "lanes", append(steps, "run.concurrent_updates=true")...); err != nil {
		t.Fatal(err)
	}
	if n := threads(); n != 2 {
		t.Errorf("the two models' updates ran on %d OS threads, want 2", n)
	}
	sameMetrics(t, filepath.Join(dir, "sync"), filepath.Join(dir, "lanes"))
	sameCheckpoints(t, filepath.Join(dir, "sync", "checkpoints", "step-000003"), filepath.Join(dir, "lanes", "checkpoints", "step-000003"))
	recs, err := metrics.ReadJSONL(filepath.Join(dir, "lanes", "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if wait, ok := r.Values["time/update_wait_s"]; !ok || wait < 0 {
			t.Errorf("step %d: update_wait_s %v (%v)", r.Step, wait, ok)
		}
	}

	// a failure in one lane: the other lane's model still finishes its update
	finished := map[string]bool{}
	var mu sync.Mutex
	updateFault = func(step int, model string) error {
		if step == 1 && model == "verifier" {
			return errors.New("the test's failure")
		}
		mu.Lock()
		finished[model] = step == 1
		mu.Unlock()
		return nil
	}
	err = overlapRun(t, dir, base, "fail", append(steps, "run.concurrent_updates=true")...)
	if err == nil || !strings.Contains(err.Error(), `step 2: update of model "verifier"`) || !strings.Contains(err.Error(), "the test's failure") {
		t.Fatalf("a failing update in step 2 returned %v", err)
	}
	if !finished["solver"] {
		t.Error("the other lane's model did not reach its step-2 update")
	}
	ck := filepath.Join(dir, "fail", "checkpoints")
	if _, err := os.Stat(filepath.Join(ck, "step-000002")); err == nil {
		t.Error("a step whose update failed was checkpointed")
	}
	if _, err := os.Stat(filepath.Join(ck, "step-000001")); err != nil {
		t.Fatalf("the last completed step's checkpoint is gone: %v", err)
	}
	updateFault = func(int, string) error { return nil }
	if err := (&Train{Resume: filepath.Join(ck, "step-000001"), Sets: []string{"run.steps=3"}, Quiet: true}).Run(io.Discard); err != nil {
		t.Fatal(err)
	}
	sameCheckpoints(t, filepath.Join(dir, "sync", "checkpoints", "step-000003"), filepath.Join(ck, "step-000003"))

	// SIGTERM while the lanes update step 2: both models finish step 2, the
	// run saves it and stops, and the resumed run ends equal to the
	// synchronous one
	var buf bytes.Buffer
	out := &lockedWriter{w: &buf}
	signalled := false
	updateFault = func(step int, model string) error {
		mu.Lock()
		defer mu.Unlock()
		if step == 1 && !signalled {
			signalled = true
			terminate(t, out, &buf)
		}
		return nil
	}
	err = teamRun(t, out, dir, base, "sig", append([]string{"run.concurrent_updates=true"}, steps...)...)
	if err == nil || !strings.Contains(err.Error(), "interrupted after step 2, saved") {
		t.Fatalf("SIGTERM during step 2's update returned %v", err)
	}
	updateFault = func(int, string) error { return nil }
	ck = filepath.Join(dir, "sig", "checkpoints")
	sameCheckpoints(t, filepath.Join(dir, "sync", "checkpoints", "step-000002"), filepath.Join(ck, "step-000002"))
	if err := (&Train{Resume: filepath.Join(ck, "step-000002"), Sets: []string{"run.steps=3"}, Quiet: true}).Run(io.Discard); err != nil {
		t.Fatal(err)
	}
	sameCheckpoints(t, filepath.Join(dir, "sync", "checkpoints", "step-000003"), filepath.Join(ck, "step-000003"))
}

// BenchmarkUpdateLanes trains the two-model team of tinyConfigYAML (over a
// 4-layer, 256-wide model) for three steps, synchronously and with each
// model in an update lane of its own (what two devices give), and reports
// the median update and step seconds of steps 2 and 3. On the CPU the
// lanes share the cores: with TROUPE_THREADS=1 each lane takes one.
func BenchmarkUpdateLanes(b *testing.B) {
	dir, base := benchTeamBase(b)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	runs := 0
	for _, mode := range []struct {
		name  string
		lanes bool
	}{{"sync", false}, {"lanes", true}} {
		b.Run(mode.name, func(b *testing.B) {
			if mode.lanes {
				laneOf = func(_ *team, tr *policy.Trainer) string { return tr.Model() }
				defer func() {
					laneOf = func(t *team, tr *policy.Trainer) string { return t.models[tr.Model()].Device().String() }
				}()
			}
			var update, step []float64
			for range b.N {
				runs++
				name := fmt.Sprintf("%s-%d", mode.name, runs)
				sets := []string{"run.steps=3", "checkpoint.every=0", "checkpoint.at_end=false"}
				if mode.lanes {
					sets = append(sets, "run.concurrent_updates=true")
				}
				for _, r := range benchTeamRun(b, dir, base, name, sets...)[1:] {
					update = append(update, r.Values["time/update_s"])
					step = append(step, r.Values["time/step_s"])
				}
			}
			b.ReportMetric(median(update), "update-s")
			b.ReportMetric(median(step), "step-s")
		})
	}
}

// benchTeamBase makes the model the team benchmarks train: a 4-layer,
// 256-wide Qwen3 in a temporary directory; it returns the directory and
// the model's path.
func benchTeamBase(b *testing.B) (dir, base string) {
	dir = b.TempDir()
	base = filepath.Join(dir, "base")
	c := &Init{Family: "qwen3", Hidden: 256, Layers: 4, Heads: 4, KvHeads: 2, HeadDim: 64, Intermediate: 768,
		Merges: 1500, Seed: 5, Dtype: "float32", Text: "math"}
	if err := c.Run(io.Discard, []string{base}); err != nil {
		b.Fatal(err)
	}
	return dir, base
}

// benchTeamRun trains the two-model team of tinyConfigYAML over base into
// dir/name with sets, and returns its metric records.
func benchTeamRun(b *testing.B, dir, base, name string, sets ...string) []metrics.Record {
	if err := teamRun(b, io.Discard, dir, base, name, sets...); err != nil {
		b.Fatal(err)
	}
	recs, err := metrics.ReadJSONL(filepath.Join(dir, name, "metrics.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	return recs
}
