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
