package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"troupe/ckpt"
	"troupe/internal/metrics"
)

// SIGINT during training finishes the step, writes a checkpoint, exits
// non-zero naming the step, and --resume continues from it.
func TestInterruptCheckpointsAndResumes(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base")
	cli(t, "init", base, "--merges", "0")
	out := filepath.Join(dir, "out")
	yaml := strings.ReplaceAll(strings.ReplaceAll(e2eConfig, "OUT", out), "MODEL", base)
	cfgPath := filepath.Join(dir, "run.yaml")
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	common := []string{"-c", cfgPath, "-q", "--set", "checkpoint.every=0", "--set", "export.at_end=false",
		"--set", "max_new_tokens=8", "--set", "batch.prompts_per_step=1"}
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if data, err := os.ReadFile(filepath.Join(out, "metrics.jsonl")); err == nil && bytes.Count(data, []byte("\n")) >= 1 {
				syscall.Kill(os.Getpid(), syscall.SIGINT)
				return
			}
		}
	}()
	var o, e bytes.Buffer
	code := execute(append(common, "--set", "run.steps=200"), &o, &e)
	close(stop)
	m := regexp.MustCompile(`interrupted after step (\d+); continue with --resume`).FindStringSubmatch(e.String())
	if code == 0 || m == nil {
		t.Fatalf("exit %d, stderr %q", code, e.String())
	}
	step, _ := strconv.Atoi(m[1])
	cp, err := ckpt.Latest(filepath.Join(out, "checkpoints"))
	if err != nil || cp.Step != step {
		t.Fatalf("latest checkpoint %+v (%v), want step %d", cp, err, step)
	}
	cli(t, append(common, "--set", "run.steps="+strconv.Itoa(step+1), "--resume")...)
	recs, err := metrics.ReadJSONL(filepath.Join(out, "metrics.jsonl"))
	if err != nil || len(recs) != step+1 || recs[step].Step != step+1 {
		t.Fatalf("after resuming: %d records (%v), want %d", len(recs), err, step+1)
	}
}

// A second interrupt quits at once instead of waiting for the step.
func TestSecondInterruptQuits(t *testing.T) {
	quit := make(chan struct{}, 1)
	old := forceQuit
	forceQuit = func() { quit <- struct{}{} }
	defer func() { forceQuit = old }()
	var buf bytes.Buffer
	out := &lockedWriter{w: &buf}
	stop, release := interrupts(out)
	defer release()
	syscall.Kill(os.Getpid(), syscall.SIGINT)
	select {
	case <-stop:
	case <-time.After(5 * time.Second):
		t.Fatal("the first interrupt did not reach the run")
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
