package main

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"troupe/ckpt"
)

// `train … | tee log`, then Ctrl-C: the reader of the run's stdout is gone
// when the run next prints. The run still finishes its step, checkpoints,
// exits with its "interrupted" message, and the checkpoint resumes
// bit-exactly (weights and optimizer as a straight run's).
func TestBrokenPipeStillCheckpoints(t *testing.T) {
	dir := t.TempDir()
	cfgPath, out := tinyRun(t, dir)
	common := []string{"-c", cfgPath, "--set", "checkpoint.every=0", "--set", "export.at_end=false",
		"--set", "max_new_tokens=8", "--set", "batch.prompts_per_step=1"}
	// every run is a process of its own with one thread: the same sums
	run := func(args ...string) *exec.Cmd { return trainProcess(append(common, args...), "TROUPE_THREADS=1") }

	cmd := run("--set", "run.steps=200")
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = pw, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	// read until the first step line, then go away as tee does
	lines := bufio.NewScanner(pr)
	for lines.Scan() && !strings.HasPrefix(lines.Text(), "step 1/") {
	}
	pr.Close()
	time.Sleep(100 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("the run should exit non-zero after an interrupt: %v\n%s", err, stderr.String())
	}
	if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("the run died by %v after its stdout closed:\n%s", ws.Signal(), stderr.String())
	}
	m := regexp.MustCompile(`interrupted after step (\d+), saved; continue with: \S+ --resume=`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no interrupt message on stderr:\n%s", stderr.String())
	}
	step, _ := strconv.Atoi(m[1])
	cp, err := ckpt.Latest(filepath.Join(out, "checkpoints"))
	if err != nil || cp.Step != step {
		t.Fatalf("latest checkpoint %+v (%v), want step %d", cp, err, step)
	}

	// resume one more step; run the same steps straight in another directory
	steps := "run.steps=" + strconv.Itoa(step+1)
	straight := filepath.Join(dir, "straight")
	for _, c := range []*exec.Cmd{run("-q", "--set", steps, "--resume"), run("-q", "--set", steps, "--set", "run.output_dir="+straight)} {
		if b, err := c.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", c.Args, err, tail(string(b), 1500))
		}
	}
	for _, m := range []string{"solver", "verifier"} {
		for _, f := range []string{"model.safetensors", "optimizer.safetensors"} {
			p := filepath.Join("checkpoints", ckpt.DirName(step+1), "models", m, f)
			if !bytes.Equal(readFile(t, filepath.Join(out, p)), readFile(t, filepath.Join(straight, p))) {
				t.Fatalf("%s: interrupted through a broken pipe and resumed differs from a straight run", p)
			}
		}
	}
}

// Every command outlives a closed console: with its stdout a pipe whose
// reader is gone (`train sft … | head -1`), sft and init finish their work,
// write it and exit 0, rather than die by SIGPIPE at their first line.
func TestCommandsOutliveAClosedPipe(t *testing.T) {
	dir := t.TempDir()
	cfgPath, _ := tinyRun(t, dir)
	for _, args := range [][]string{
		{"init", filepath.Join(dir, "fresh"), "--merges", "0"},
		{"sft", "-c", cfgPath, "--out", filepath.Join(dir, "sft"), "--steps", "3", "--tasks", "8", "--batch", "4", "--log-every", "1"},
	} {
		cmd := trainProcess(args)
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		pr.Close() // the reader is gone before the first line
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = pw, &stderr
		err = cmd.Run()
		pw.Close()
		if err != nil {
			t.Errorf("train %s with a closed stdout: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
	}
	for _, p := range []string{filepath.Join(dir, "fresh", "model.safetensors"), filepath.Join(dir, "sft", "tiny", "model.safetensors")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("not written with a closed stdout: %v", err)
		}
	}
}
