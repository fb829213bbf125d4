package run

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// A silent phase says it is still running until it ends, and not after.
func TestHeartbeatUntilThePhaseEnds(t *testing.T) {
	old := heartbeatEvery
	heartbeatEvery = 5 * time.Millisecond
	defer func() { heartbeatEvery = old }()
	var buf bytes.Buffer
	out := &lockedWriter{w: &buf}
	lines := func() int {
		out.mu.Lock()
		defer out.mu.Unlock()
		return strings.Count(buf.String(), "  step 2/9 update of model solver: still running (")
	}
	stop := startHeartbeat(out, "step 2/9 update of model solver")
	for deadline := time.Now().Add(10 * time.Second); lines() < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no heartbeat within 10 s:\n%q", buf.String())
		}
	}
	stop()
	n := lines()
	time.Sleep(20 * heartbeatEvery)
	if lines() != n {
		t.Fatalf("the heartbeat went on after its phase ended")
	}
}

// SFT's progress line carries the loss, the rate and the time left.
func TestSFTProgressLine(t *testing.T) {
	got := sftProgress(50, 200, 1.25, 25*time.Second)
	for _, w := range []string{"step 50/200", "loss 1.2500", "2.00 steps/s", "eta 1m15s"} {
		if !strings.Contains(got, w) {
			t.Errorf("%q should contain %q", got, w)
		}
	}
}
