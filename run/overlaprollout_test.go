package run

import (
	"bytes"
	"errors"
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
	if testing.Short() {
		t.Skip("three training runs of a two-model team; skipped with -short")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	dir := t.TempDir()
	base := filepath.Join(dir, "base")
	initTiny(t, base, 5)
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

var _ = errors.New
var _ = io.Discard
var _ = strings.Contains
var _ = time.Now
