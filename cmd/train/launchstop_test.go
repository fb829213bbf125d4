package main

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Ctrl-C under train --nproc 2 stops both ranks in order and the command
// says so once: rank 0's line with what was saved and the command that
// continues it — with the --nproc 2 the run needs and the directory as
// given (relative) — and exit status 130; the resolved config is printed
// once. A config error under --nproc 3 is printed once, before any rank
// starts. Before, the launcher added "rank 1 of 2 failed first" after a
// clean, checkpointed stop, every rank printed the resume hint with an
// absolute path and no --nproc, and a config error came once per rank.
func TestOrderlyStopUnderNprocSaysItOnce(t *testing.T) {
	dir := t.TempDir()
	cfgPath, _ := tinyRun(t, dir)
	cmd := trainProcess([]string{"-c", cfgPath, "--set", "run.output_dir=rel", "--set", "batch.prompts_per_step=4", "--set", "run.steps=200",
		"--set", "checkpoint.every=0", "--set", "export.at_end=false", "--nproc", "2"}, "TROUPE_THREADS=1")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var stdout strings.Builder
	sc := bufio.NewScanner(out)
	signalled := false
	for sc.Scan() {
		stdout.WriteString(sc.Text() + "\n")
		if !signalled && strings.HasPrefix(sc.Text(), "step 1/200 ") {
			cmd.Process.Signal(os.Interrupt) // as Ctrl-C reaches the launcher
			signalled = true
		}
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !signalled || !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Fatalf("signalled %v, exit %v, want status %d\nstderr: %s\nstdout tail: %s", signalled, err, exitInterrupted, stderr.String(), tail(stdout.String(), 600))
	}
	if !regexp.MustCompile(`^train: interrupted after step \d+, saved; continue with: train --resume=rel --nproc 2\n$`).MatchString(stderr.String()) {
		t.Errorf("stderr %q, want rank 0's one line with the resume command (--resume=rel --nproc 2)", stderr.String())
	}
	if n := strings.Count(stdout.String(), "# resolved config"); n != 1 {
		t.Errorf("the resolved config was printed %d times", n)
	}
	// a config error: once, before any rank starts
	began := time.Now()
	bad := trainProcess([]string{"-c", cfgPath, "-q", "--set", "optim.lr=-1", "--nproc", "3"}, "TROUPE_THREADS=1")
	stderr.Reset()
	bad.Stderr = &stderr
	if err := bad.Run(); err == nil {
		t.Fatal("a bad config under --nproc 3 exited 0")
	}
	if msg := stderr.String(); strings.Count(msg, "\n") != 1 || strings.Contains(msg, "[rank") || !strings.Contains(msg, "optim.lr") {
		t.Errorf("a config error under --nproc 3: %q, want one line of its own", msg)
	}
	t.Logf("the refused --nproc 3 took %v", time.Since(began))
}
