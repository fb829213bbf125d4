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
