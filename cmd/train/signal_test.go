package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"troupe/ckpt"
	"troupe/internal/metrics"
)

// SIGINT during training finishes the step, writes a checkpoint, exits
// non-zero naming the step and the exact command that continues the run —
// here a run whose output directory came from --set, not from the config
// (a bare --resume, or -c CONFIG --resume, would continue another run) —
// and that command, as printed, continues it.
func TestInterruptCheckpointsAndResumes(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base")
	cli(t, "init", base, "--merges", "0")
	yaml := strings.ReplaceAll(strings.ReplaceAll(e2eConfig, "OUT", filepath.Join(dir, "config-out")), "MODEL", base)
	cfgPath := filepath.Join(dir, "run.yaml")
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "elsewhere")
	common := []string{"-c", cfgPath, "-q", "--set", "run.output_dir=" + out, "--set", "checkpoint.every=0", "--set", "export.at_end=false",
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
	m := regexp.MustCompile(`interrupted after step (\d+), saved; continue with: (.*)\n`).FindStringSubmatch(e.String())
	if code == 0 || m == nil {
		t.Fatalf("exit %d, stderr %q", code, e.String())
	}
	step, _ := strconv.Atoi(m[1])
	cp, err := ckpt.Latest(filepath.Join(out, "checkpoints"))
	if err != nil || cp.Step != step {
		t.Fatalf("latest checkpoint %+v (%v), want step %d", cp, err, step)
	}
	// the printed command, word for word (it names the program as invoked:
	// "train" here), with one more step to run
	words := shellWords(m[2])
	if words[0] != "train" {
		t.Fatalf("the printed command should start with the program: %q", m[2])
	}
	cli(t, append(words[1:], "-q", "--set", "run.steps="+strconv.Itoa(step+1))...)
	recs, err := metrics.ReadJSONL(filepath.Join(out, "metrics.jsonl"))
	if err != nil || len(recs) != step+1 || recs[step].Step != step+1 {
		t.Fatalf("after resuming: %d records (%v), want %d", len(recs), err, step+1)
	}
	if _, err := os.Stat(filepath.Join(dir, "config-out")); err == nil {
		t.Fatalf("the printed command wrote into the config's run.output_dir, not the interrupted run's")
	}
}

// watchWriter collects a command's output and closes seen once it holds
// want.
type watchWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if w.seen != nil && strings.Contains(w.buf.String(), w.want) {
		close(w.seen)
		w.seen = nil
	}
	return len(p), nil
}

func (w *watchWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// SIGTERM in the middle of a long rollout is honoured within a round: the
// step is dropped, the state after the step before (which the weights
// still are) is checkpointed, and the printed command resumes it into the
// run an uninterrupted one would have been — the dropped step's tasks are
// drawn again and its metrics are the same to the bit. Before, the run
// finished the whole rollout and update of the step first.
func TestSIGTERMStopsARolloutWithinARound(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base")
	cli(t, "init", base, "--merges", "0")
	cfgPath := filepath.Join(dir, "run.yaml")
	writeTestFile(t, cfgPath, []byte(strings.ReplaceAll(strings.ReplaceAll(e2eConfig, "OUT", filepath.Join(dir, "unused")), "MODEL", base)))
	// a step whose rollout takes seconds: 3 tasks × 24 trajectories, at
	// most 16 rows at a time
	common := []string{"-c", cfgPath, "-q", "--set", "checkpoint.every=0", "--set", "export.at_end=false", "--set", "batch.n=24",
		"--set", "batch.max_batch_rows=16"}
	ref := filepath.Join(dir, "ref")
	cli(t, append(common, "--set", "run.output_dir="+ref, "--set", "run.steps=2")...)

	out := filepath.Join(dir, "stopped")
	o := &watchWriter{want: "step 1/200  reward", seen: make(chan struct{})}
	seen := o.seen
	go func() { // once step 1 is reported, into step 2's rollout
		select {
		case <-seen:
			time.Sleep(500 * time.Millisecond)
			syscall.Kill(os.Getpid(), syscall.SIGTERM)
		case <-time.After(10 * time.Minute):
		}
	}()
	var e bytes.Buffer
	code := execute(append(common, "--set", "run.output_dir="+out, "--set", "run.steps=200"), o, &e)
	m := regexp.MustCompile(`interrupted after step (\d+), saved; continue with: (.*)\n`).FindStringSubmatch(e.String())
	if code == 0 || m == nil || m[1] != "1" || !strings.Contains(o.String(), "step 2's rollout stopped by the signal: the step is dropped") {
		t.Fatalf("exit %d, stderr %q, stdout tail %q; want step 2's rollout dropped and step 1 saved", code, e.String(), tail(o.String(), 600))
	}
	cp, err := ckpt.Latest(filepath.Join(out, "checkpoints"))
	if err != nil || cp.Step != 1 {
		t.Fatalf("latest checkpoint %+v (%v), want step 1", cp, err)
	}
	words := shellWords(m[2])
	cli(t, append(words[1:], "-q", "--set", "run.steps=2")...)
	want, err := metrics.ReadJSONL(filepath.Join(ref, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := metrics.ReadJSONL(filepath.Join(out, "metrics.jsonl"))
	if err != nil || len(got) != 2 {
		t.Fatalf("after resuming: %d records (%v), want 2", len(got), err)
	}
	for _, k := range []string{"reward/mean", "rollout/response_tokens", "policy/solver/loss", "policy/verifier/grad_norm"} {
		if got[1].Values[k] != want[1].Values[k] {
			t.Errorf("step 2's %s: %v after the dropped step, %v uninterrupted", k, got[1].Values[k], want[1].Values[k])
		}
	}
}
