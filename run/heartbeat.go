package run

// heartbeat.go — no phase of a run is silent for long: a phase without
// progress of its own (an update, an evaluation, loading the models) prints
// "still …" every heartbeatEvery while it lasts, from a goroutine; the
// rollout reports its own progress (train.go), SFT prints its loss, rate and
// ETA at least as often (sftProgress).
//
// What it is not: a measure of anything; the step line and metrics.jsonl
// carry the timings.

import (
	"fmt"
	"io"
	"time"

	"troupe/internal/metrics"
)

// heartbeatEvery is how often a silent phase says it is still running.
var heartbeatEvery = 10 * time.Second

// startHeartbeat prints "  <what>: still running (Ns)" every heartbeatEvery
// until the returned function is called (which waits for the printer to
// stop). out must be safe for concurrent writes.
func startHeartbeat(out io.Writer, what string) func() {
	stop, done := make(chan struct{}), make(chan struct{})
	began := time.Now()
	go func() {
		defer close(done)
		tick := time.NewTicker(heartbeatEvery)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				fmt.Fprintf(out, "  %s: still running (%s)\n", what, metrics.FormatDuration(time.Since(began)))
			}
		}
	}()
	return func() { close(stop); <-done }
}

// sftProgress is SFT's progress line: the smoothed loss, steps per second
// and the time left.
func sftProgress(step, steps int, loss float64, elapsed time.Duration) string {
	rate := float64(step) / max(elapsed.Seconds(), 1e-9)
	eta := time.Duration(float64(steps-step) / rate * float64(time.Second))
	return fmt.Sprintf("  step %d/%d  loss %.4f  %.2f steps/s  elapsed %s  eta %s", step, steps, loss, rate,
		metrics.FormatDuration(elapsed), metrics.FormatDuration(eta))
}
