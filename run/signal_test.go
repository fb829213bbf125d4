package run

import (
	"bytes"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A second interrupt quits at once instead of waiting for the step.
func TestSecondInterruptQuits(t *testing.T) {
	quit := make(chan struct{}, 1)
	old := forceQuit
	forceQuit = func() { quit <- struct{}{} }
	defer func() { forceQuit = old }()
	var buf bytes.Buffer
	out := &lockedWriter{w: &buf}
	stop, stopping, release := interrupts(out, nil)
	defer release()
	if stopping() {
		t.Fatal("stopping before any signal")
	}
	syscall.Kill(os.Getpid(), syscall.SIGINT)
	select {
	case <-stop:
	case <-time.After(5 * time.Second):
		t.Fatal("the first interrupt did not reach the run")
	}
	if !stopping() {
		t.Fatal("after the first interrupt, the rollout is not asked to stop")
	}
	select {
	case <-quit:
		t.Fatal("one interrupt quit the process")
	case <-time.After(100 * time.Millisecond):
	}
	syscall.Kill(os.Getpid(), syscall.SIGINT)
	select {
	case <-quit:
	case <-time.After(5 * time.Second):
		t.Fatal("the second interrupt did not quit")
	}
	out.mu.Lock()
	defer out.mu.Unlock()
	if !strings.Contains(buf.String(), "interrupt again to quit now") || !strings.Contains(buf.String(), "quitting now") {
		t.Errorf("the console should say what each interrupt does:\n%s", buf.String())
	}
}
