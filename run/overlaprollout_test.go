package run

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"troupe/internal/metrics"
)

// lagSets are the settings of the policy-lag runs: four steps, a
// checkpoint after each, the lag corrected by token weights.
var lagSets = []string{"run.steps=4", "checkpoint.every=1", "checkpoint.keep=10", "run.policy_lag=1", "optim.rollout_is=token"}

// sameEngineCopies compares the engine copies two checkpoints hold (both
// none, or every file equal), and says whether they had one.
func sameEngineCopies(t *testing.T, a, b string) bool {
	t.Helper()
	_, errA := os.Stat(filepath.Join(a, "engine_copy"))
	_, errB := os.Stat(filepath.Join(b, "engine_copy"))
	if (errA == nil) != (errB == nil) {
		t.Fatalf("engine copies: %s has one: %v, %s has one: %v", a, errA == nil, b, errB == nil)
	}
	if errA != nil {
		return false
	}
	for _, name := range []string{"solver", "verifier"} {
		x, err := os.ReadFile(filepath.Join(a, "engine_copy", name, "model.safetensors"))
		if err != nil {
			t.Fatal(err)
		}
		y, err := os.ReadFile(filepath.Join(b, "engine_copy", name, "model.safetensors"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s's engine copy differs between %s and %s", name, a, b)
		}
	}
	return true
}

// lagValues reads one metric of every step of a run.
func lagValues(t *testing.T, dir, key string) []float64 {
	t.Helper()
	recs, err := metrics.ReadJSONL(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []float64
	for _, r := range recs {
		v, ok := r.Values[key]
		if !ok {
			t.Fatalf("step %d has no %s", r.Step, key)
		}
		out = append(out, v)
	}
	return out
}

// TestPolicyLagEqualsSerialisedHalves: with run.policy_lag 1, four steps
// of the two-model team give, bit for bit, the metrics and checkpoints of
// the same run with each step's halves one after the other (the next
// step's rollout to its end, then the update, from the same stale engine
// copy); the rollouts beside the updates ran on another OS thread; the
// lag is 0 for the first step and 1 after; the checkpoints hold the
// engine copies; and the rows differ from policy_lag 0's from step 2 on.
func TestPolicyLagEqualsSerialisedHalves(t *testing.T) {
	dir, base := teamTest(t, "three training runs of a two-model team; skipped with -short")
	defer func() { serialHalves = false; rolloutFault = func(int, func() bool) error { return nil } }()

	serialHalves = true
	if err := overlapRun(t, dir, base, "serial", lagSets...); err != nil {
		t.Fatal(err)
	}
	serialHalves = false
	main := syscall.Gettid()
	var mu sync.Mutex
	var threads []int
	rolloutFault = func(int, func() bool) error {
		mu.Lock()
		threads = append(threads, syscall.Gettid())
		mu.Unlock()
		return nil
	}
	if err := overlapRun(t, dir, base, "overlap", lagSets...); err != nil {
		t.Fatal(err)
	}
	if len(threads) != 3 {
		t.Errorf("%d rollouts beside an update, want 3 (steps 2–4)", len(threads))
	}
	for _, id := range threads {
		if id == main {
			t.Error("a rollout beside an update ran on the run's own thread")
		}
	}
	serial, overlap := filepath.Join(dir, "serial"), filepath.Join(dir, "overlap")
	sameMetrics(t, serial, overlap)
	copies := 0
	for _, step := range []string{"step-000001", "step-000002", "step-000003", "step-000004"} {
		sameCheckpoints(t, filepath.Join(serial, "checkpoints", step), filepath.Join(overlap, "checkpoints", step))
		if sameEngineCopies(t, filepath.Join(serial, "checkpoints", step), filepath.Join(overlap, "checkpoints", step)) {
			copies++
		}
	}
	if copies != 4 {
		t.Errorf("%d of the 4 checkpoints hold engine copies, want 4 (each trails the weights by one update)", copies)
	}
	if got := lagValues(t, overlap, "time/policy_lag"); !equalFloats(got, []float64{0, 1, 1, 1}) {
		t.Errorf("time/policy_lag %v, want [0 1 1 1]", got)
	}
	for _, key := range []string{"time/rollout_wait_s", "time/update_wait_s"} {
		for i, v := range lagValues(t, overlap, key) {
			if v < 0 {
				t.Errorf("step %d: %s %v", i+1, key, v)
			}
		}
	}

	// the lag changes what is trained: policy_lag 0 samples step 2 from θ_1
	if err := overlapRun(t, dir, base, "sync", "run.steps=2", "optim.rollout_is=token"); err != nil {
		t.Fatal(err)
	}
	sync, lag := lagValues(t, filepath.Join(dir, "sync"), "reward/mean"), lagValues(t, overlap, "reward/mean")
	syncEnt, lagEnt := lagValues(t, filepath.Join(dir, "sync"), "policy/solver/entropy"), lagValues(t, overlap, "policy/solver/entropy")
	if sync[0] != lag[0] || syncEnt[0] != lagEnt[0] {
		t.Errorf("step 1 differs between policy_lag 0 and 1 (reward %v vs %v), though both sample it from θ_0", sync[0], lag[0])
	}
	if syncEnt[1] == lagEnt[1] {
		t.Errorf("step 2's solver entropy is %v with policy_lag 0 and 1: the lagged rows were not sampled from θ_0", lagEnt[1])
	}
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// copyFile copies src to dst.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// resumeLag resumes the run in dir from checkpoint step (--force: the
// newer checkpoints are replaced) and fails the test if it does not finish.
func resumeLag(t *testing.T, dir, step string) {
	t.Helper()
	if err := (&Train{Resume: filepath.Join(dir, "checkpoints", step), Quiet: true, Force: true}).Run(io.Discard); err != nil {
		t.Fatalf("resuming %s from %s: %v", dir, step, err)
	}
}

// sameAsReference compares a run's metrics and last checkpoint, engine
// copies included, with the reference's.
func sameAsReference(t *testing.T, ref, run string) {
	t.Helper()
	sameMetrics(t, ref, run)
	sameCheckpoints(t, filepath.Join(ref, "step-000004"), filepath.Join(run, "checkpoints", "step-000004"))
	sameEngineCopies(t, filepath.Join(ref, "step-000004"), filepath.Join(run, "checkpoints", "step-000004"))
}

// TestPolicyLagResumesExactly: with run.policy_lag 1, a run resumed from
// the checkpoint after step 2 (a rollout pending, its engine copies one
// update behind) ends equal to the uninterrupted run bit for bit — metrics
// and the last checkpoint; so do runs stopped in step 2 by a SIGTERM
// (the rollout beside the update is stopped, the update finishes, step 2
// is saved as the uninterrupted run saved it), by a failing rollout beside
// the update (the update finishes, nothing of step 2 is saved) and by a
// failing update (the rollout beside it is stopped, nothing of step 2 is
// saved), each resumed from its newest checkpoint.
func TestPolicyLagResumesExactly(t *testing.T) {
	dir, base := teamTest(t, "eight training runs of a two-model team; skipped with -short")
	defer func() {
		rolloutFault = func(int, func() bool) error { return nil }
		updateFault = func(int, string) error { return nil }
	}()
	if err := overlapRun(t, dir, base, "full", lagSets...); err != nil {
		t.Fatal(err)
	}
	full, ref := filepath.Join(dir, "full"), filepath.Join(dir, "ref")
	keepReference(t, full, ref)
	stateAt2, err := os.ReadFile(filepath.Join(full, "checkpoints", "step-000002", StateFile))
	if err != nil {
		t.Fatal(err)
	}

	// resumed from the checkpoint after step 2
	resumeLag(t, full, "step-000002")
	sameAsReference(t, ref, full)

	// SIGTERM during step 2's update: the rollout beside it waits for the
	// stop word and is dropped; step 2 is saved as the full run saved it
	var buf bytes.Buffer
	out := &lockedWriter{w: &buf}
	var mu sync.Mutex
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
	holdUntilStopped := func(want int) func(int, func() bool) error {
		return func(step int, stopped func() bool) error {
			if step != want {
				return nil
			}
			for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
				if stopped() {
					return nil
				}
			}
			return errors.New("the rollout beside the update was never told to stop")
		}
	}
	rolloutFault = holdUntilStopped(2)
	err = teamRun(t, out, dir, base, "sig", lagSets...)
	if err == nil || !strings.Contains(err.Error(), "interrupted after step 2, saved") {
		t.Fatalf("SIGTERM during step 2's update returned %v", err)
	}
	sig := filepath.Join(dir, "sig")
	sameCheckpoints(t, filepath.Join(full, "checkpoints", "step-000002"), filepath.Join(sig, "checkpoints", "step-000002"))
	sameEngineCopies(t, filepath.Join(full, "checkpoints", "step-000002"), filepath.Join(sig, "checkpoints", "step-000002"))
	if st, err := os.ReadFile(filepath.Join(sig, "checkpoints", "step-000002", StateFile)); err != nil || !bytes.Equal(st, stateAt2) {
		t.Errorf("step 2's %s after the signal differs from the full run's (%v):\n%s\n%s", StateFile, err, st, stateAt2)
	}
	updateFault = func(int, string) error { return nil }
	rolloutFault = func(int, func() bool) error { return nil }
	resumeLag(t, sig, "step-000002")
	sameAsReference(t, ref, sig)

	// the rollout beside step 2's update fails: both models finish step 2's
	// update, the step fails, step 1 stays the newest checkpoint
	updated := map[string]bool{}
	updateFault = func(step int, model string) error {
		mu.Lock()
		defer mu.Unlock()
		if step == 1 {
			updated[model] = true
		}
		return nil
	}
	rolloutFault = func(step int, _ func() bool) error {
		if step == 2 {
			return errors.New("the test's rollout failure")
		}
		return nil
	}
	err = overlapRun(t, dir, base, "rolloutfail", lagSets...)
	if err == nil || !strings.Contains(err.Error(), "step 2: rollout of step 3 beside the update: the test's rollout failure") {
		t.Fatalf("a failing rollout beside step 2's update returned %v", err)
	}
	if !updated["solver"] || !updated["verifier"] {
		t.Errorf("step 2's updates reached: %v, want both models", updated)
	}
	failed := filepath.Join(dir, "rolloutfail")
	if _, err := os.Stat(filepath.Join(failed, "checkpoints", "step-000002")); err == nil {
		t.Error("a step whose rollout beside the update failed was checkpointed")
	}
	rolloutFault = func(int, func() bool) error { return nil }
	updateFault = func(int, string) error { return nil }
	resumeLag(t, failed, "step-000001")
	sameAsReference(t, ref, failed)

	// step 2's update fails: the rollout beside it is told to stop
	updateFault = func(step int, model string) error {
		if step == 1 && model == "verifier" {
			return errors.New("the test's update failure")
		}
		return nil
	}
	rolloutFault = holdUntilStopped(2)
	err = overlapRun(t, dir, base, "updatefail", lagSets...)
	if err == nil || !strings.Contains(err.Error(), `step 2: update of model "verifier": the test's update failure`) {
		t.Fatalf("a failing update in step 2 returned %v", err)
	}
	failed = filepath.Join(dir, "updatefail")
	if _, err := os.Stat(filepath.Join(failed, "checkpoints", "step-000002")); err == nil {
		t.Error("a step whose update failed was checkpointed")
	}
	rolloutFault = func(int, func() bool) error { return nil }
	updateFault = func(int, string) error { return nil }
	resumeLag(t, failed, "step-000001")
	sameAsReference(t, ref, failed)
}

// TestPolicyLagAroundEvaluation: with run.policy_lag 1 and an evaluation
// every 2 steps, the evaluating step 2 starts no rollout beside its
// update, so step 3 samples now from the refreshed copies (lags 0, 1, 0,
// 1); the overlapped run equals the serialised one bit for bit, the
// checkpoint of step 2 holds no engine copy (it equals the weights) while
// step 3's does, and a resume from step 2 ends equal to the uninterrupted
// run.
func TestPolicyLagAroundEvaluation(t *testing.T) {
	dir, base := teamTest(t, "three training runs of a two-model team; skipped with -short")
	defer func() { serialHalves = false }()
	sets := append([]string{"eval.every=2", "eval.tasks=4", "eval.n=1"}, lagSets...)
	serialHalves = true
	if err := overlapRun(t, dir, base, "serial", sets...); err != nil {
		t.Fatal(err)
	}
	serialHalves = false
	if err := overlapRun(t, dir, base, "overlap", sets...); err != nil {
		t.Fatal(err)
	}
	serial, overlap := filepath.Join(dir, "serial"), filepath.Join(dir, "overlap")
	sameMetrics(t, serial, overlap)
	if got := lagValues(t, overlap, "time/policy_lag"); !equalFloats(got, []float64{0, 1, 0, 1}) {
		t.Errorf("time/policy_lag %v, want [0 1 0 1]", got)
	}
	recs, err := metrics.ReadJSONL(filepath.Join(overlap, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var evaluated []int
	for _, r := range recs {
		if _, ok := r.Values["eval/accuracy"]; ok {
			evaluated = append(evaluated, r.Step)
		}
	}
	if len(evaluated) != 2 || evaluated[0] != 2 || evaluated[1] != 4 {
		t.Errorf("evaluated after steps %v, want [2 4]", evaluated)
	}
	ck := filepath.Join(overlap, "checkpoints")
	for step, want := range map[string]bool{"step-000001": true, "step-000002": false, "step-000003": true, "step-000004": false} {
		if got := sameEngineCopies(t, filepath.Join(serial, "checkpoints", step), filepath.Join(ck, step)); got != want {
			t.Errorf("%s holds an engine copy: %v, want %v", step, got, want)
		}
	}
	ref := filepath.Join(dir, "ref")
	keepReference(t, overlap, ref)
	resumeLag(t, overlap, "step-000002")
	sameMetrics(t, ref, overlap)
	sameCheckpoints(t, filepath.Join(ref, "step-000004"), filepath.Join(ck, "step-000004"))
}

// BenchmarkPolicyLag trains the two-model team of tinyConfigYAML (over a
// 4-layer, 256-wide model) for four steps with run.policy_lag 0 and 1
// (rollout_is token in both, so only the overlap differs), and reports the
// median step, rollout and update seconds of steps 2 and 3 (the steps
// whose next rollout runs beside the update). With TROUPE_THREADS=1 each
// half takes one core.
func BenchmarkPolicyLag(b *testing.B) {
	dir, base := benchTeamBase(b)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	runs := 0
	for _, lag := range []string{"0", "1"} {
		b.Run("lag="+lag, func(b *testing.B) {
			var step, roll, update []float64
			for range b.N {
				runs++
				name := fmt.Sprintf("lag%s-%d", lag, runs)
				sets := []string{"run.steps=4", "checkpoint.every=0", "checkpoint.at_end=false", "optim.rollout_is=token", "run.policy_lag=" + lag}
				for _, r := range benchTeamRun(b, dir, base, name, sets...)[1:3] {
					step = append(step, r.Values["time/step_s"])
					roll = append(roll, r.Values["time/rollout_s"])
					update = append(update, r.Values["time/update_s"])
				}
			}
			b.ReportMetric(median(step), "step-s")
			b.ReportMetric(median(roll), "rollout-s")
			b.ReportMetric(median(update), "update-s")
		})
	}
}

// TestResumeAfterAnEvaluatingStep: with the synchronous step (policy_lag
// 0) and an evaluation every 2 steps, a run resumed from the checkpoint of
// the evaluating step 2 ends equal to the uninterrupted run bit for bit:
// every rollout starts from an empty prefix cache, so step 3 does not reuse
// the evaluation's cached prompt rows (with them, its rows' log-probs
// differed from the resumed run's in the last bits).
func TestResumeAfterAnEvaluatingStep(t *testing.T) {
	dir, base := teamTest(t, "two training runs of a two-model team; skipped with -short")
	if err := overlapRun(t, dir, base, "full", "run.steps=4", "checkpoint.every=1", "checkpoint.keep=10",
		"eval.every=2", "eval.tasks=4", "eval.n=1", "optim.rollout_is=token"); err != nil {
		t.Fatal(err)
	}
	full, ref := filepath.Join(dir, "full"), filepath.Join(dir, "ref")
	keepReference(t, full, ref)
	resumeLag(t, full, "step-000002")
	sameMetrics(t, ref, full)
	sameCheckpoints(t, filepath.Join(ref, "step-000004"), filepath.Join(full, "checkpoints", "step-000004"))
}

// keepReference copies what a run's step 4 left — its metrics, the
// checkpoint's models and engine copies (when it has them) — to ref, the
// reference a resumed run must end equal to (sameAsReference).
func keepReference(t *testing.T, run, ref string) {
	t.Helper()
	from, to := filepath.Join(run, "checkpoints", "step-000004"), filepath.Join(ref, "step-000004")
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(run, "metrics.jsonl"), filepath.Join(ref, "metrics.jsonl"))
	for _, d := range []string{"models", "engine_copy"} {
		if _, err := os.Stat(filepath.Join(from, d)); err != nil && d == "engine_copy" {
			continue
		}
		if err := os.CopyFS(filepath.Join(to, d), os.DirFS(filepath.Join(from, d))); err != nil {
			t.Fatal(err)
		}
	}
}
