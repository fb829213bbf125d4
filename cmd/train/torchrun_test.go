package main

// torchrun as the launcher, on one node: `torchrun --no-python` starts this
// test binary as its ranks (TestMain turns it into `train`), with the
// torchrun of the Python reference environment (internal/pyref). Helpers
// shared with the two-host test (twohosts_test.go) live here.

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"troupe/ckpt"
	"troupe/dist"
	"troupe/internal/metrics"
	"troupe/internal/pyref"
	"troupe/torch"
)

// dpArgs is a 3-step run of the tiny team that 1, 2 or 4 ranks split
// (4 prompts per step), checkpointed after every step.
func dpArgs(cfgPath, sft string) []string {
	return []string{"-c", cfgPath, "-q", "--set", "models.tiny.path=" + sft, "--set", "batch.prompts_per_step=4",
		"--set", "checkpoint.every=1", "--set", "export.at_end=false", "--set", "run.steps=3", "--set", "eval.every=0"}
}

// oneProcess runs args in this process with one thread, as every rank runs:
// BLAS sums differently with another thread count.
func oneProcess(t *testing.T, args ...string) {
	t.Helper()
	threads := torch.NumThreads()
	torch.SetNumThreads(1)
	defer torch.SetNumThreads(threads)
	cli(t, args...)
}

// stepFile is a file of a run's checkpoint at step.
func stepFile(run string, step int, model, file string) string {
	return filepath.Join(run, "checkpoints", ckpt.DirName(step), "models", model, file)
}

// closeWeights checks that run b's weights after step equal run a's within
// the data-parallel tolerance (1e-6 relative: the ranks' grads are summed in
// another order), and that training moved them from base.
func closeWeights(t *testing.T, a, b, base string, step int) {
	t.Helper()
	for _, m := range []string{"solver", "verifier"} {
		x := tensorsOf(t, stepFile(a, step, m, "model.safetensors"))
		y := tensorsOf(t, stepFile(b, step, m, "model.safetensors"))
		start := tensorsOf(t, filepath.Join(base, "model.safetensors"))
		var num, den, moved float64
		for name, xs := range x {
			for i := range xs {
				d := float64(xs[i] - y[name][i])
				num += d * d
				den += float64(xs[i]) * float64(xs[i])
				moved = math.Max(moved, math.Abs(float64(xs[i]-start[name][i])))
			}
		}
		rel := math.Sqrt(num / den)
		t.Logf("%s: %s vs %s relative difference %.3g", m, filepath.Base(b), filepath.Base(a), rel)
		if rel > 1e-6 {
			t.Fatalf("%s: the weights of %s differ from %s's by %g relative", m, b, a, rel)
		}
		if moved == 0 {
			t.Fatalf("%s: training left the weights unchanged; the comparison shows nothing", m)
		}
	}
}

// sameState checks that two runs' checkpoints at step hold bit-identical
// weights and optimizer states.
func sameState(t *testing.T, a, b string, step int) {
	t.Helper()
	for _, m := range []string{"solver", "verifier"} {
		for _, f := range []string{"model.safetensors", "optimizer.safetensors"} {
			if !bytes.Equal(readFile(t, stepFile(a, step, m, f)), readFile(t, stepFile(b, step, m, f))) {
				t.Fatalf("%s/%s at step %d: %s differs from %s", m, f, step, b, a)
			}
		}
	}
}

// metricSteps is the step of every metrics.jsonl line, in order.
func metricSteps(t *testing.T, run string) []int {
	t.Helper()
	recs, err := metrics.ReadJSONL(filepath.Join(run, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var steps []int
	for _, r := range recs {
		steps = append(steps, r.Step)
	}
	return steps
}

// rankTrainEnv is the environment of a rank started from this test binary.
func rankTrainEnv(extra ...string) []string {
	// a rendezvous or collective that cannot complete ends within 2 minutes
	// (the default, 30, would outlast the test)
	return append(append(os.Environ(), asTrainEnv+"=1", "TROUPE_THREADS=1", dist.TimeoutEnv+"=2m"), extra...)
}

// torchrunCmd is `[ip netns exec NS] python -m torch.distributed.run ARGS
// --no-python THIS-TEST-BINARY TRAIN-ARGS`.
func torchrunCmd(py, ns string, args, train []string, env ...string) *exec.Cmd {
	argv := append([]string{"-m", "torch.distributed.run"}, args...)
	argv = append(append(argv, "--no-python", os.Args[0]), train...)
	cmd := exec.Command(py, argv...)
	if ns != "" {
		cmd = exec.Command("ip", append([]string{"netns", "exec", ns, py}, argv...)...)
	}
	cmd.Env = rankTrainEnv(env...)
	return cmd
}

// pausedRank waits for the rank that RankPauseEnv holds at file and returns
// its process id; the rank goes on once file is removed.
func pausedRank(t *testing.T, file string, deadline time.Duration) int {
	t.Helper()
	end := time.Now().Add(deadline)
	for time.Now().Before(end) {
		if b, err := os.ReadFile(file); err == nil && len(b) > 0 {
			pid, err := strconv.Atoi(string(b))
			if err != nil {
				t.Fatalf("%s: %q", file, b)
			}
			return pid
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no rank paused at %s within %v", file, deadline)
	return 0
}

// killPaused SIGKILLs the rank paused at file; the hook will not act again.
func killPaused(t *testing.T, file string) {
	t.Helper()
	pid := pausedRank(t, file, 5*time.Minute)
	if err := os.WriteFile(file+".done", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 %d: %v", pid, err)
	}
}

// proc is a command running in the background.
type proc struct {
	cmd  *exec.Cmd
	out  bytes.Buffer
	done chan struct{}
	err  error
	at   time.Time // when it exited
}

// start runs cmd in the background, killed (with its process group) when
// the test ends.
func start(t *testing.T, cmd *exec.Cmd) *proc {
	t.Helper()
	p := &proc{cmd: cmd, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &p.out, &p.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = time.Minute // a rank left behind must not hold the output open
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = cmd.Wait()
		p.at = time.Now()
		close(p.done)
	}()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	})
	return p
}

// wait returns the command's combined output and exit error.
func (p *proc) wait(t *testing.T) (string, error) {
	t.Helper()
	select {
	case <-p.done:
		return p.out.String(), p.err
	case <-time.After(8 * time.Minute):
		ps, _ := exec.Command("ps", "-eo", "pid,ppid,pgid,etime,args").Output()
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
		t.Fatalf("%s: still running after 8 minutes:\n%s\nprocesses then:\n%s", strings.Join(p.cmd.Args, " "), tail(p.out.String(), 3000), ps)
		return "", nil
	}
}

// trainLines are the lines a run's ranks printed as their error.
func trainLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if i := strings.Index(l, "train: "); i >= 0 && !strings.Contains(l, "traceback") {
			lines = append(lines, l[i:])
		}
	}
	return lines
}

// torchrun on one node: 2 ranks train the weights of one process; with
// --max-restarts 1 a rank killed (SIGKILL) in step 2 is restarted with its
// group, which resumes from step 1's checkpoint by itself and ends
// bit-identical to the uninterrupted 2-rank run, one metrics line per step;
// without restarts the same kill stops the run, rank 0 naming the rank it
// lost and the step (in torchrun's summary too), step 1's checkpoint intact.
func TestTorchrunOneNode(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end training runs; skipped with -short")
	}
	py := pyref.Python(t)
	dir := t.TempDir()
	cfgPath, sft := warmModel(t, dir)
	args := dpArgs(cfgPath, sft)
	one, two, restarted, stopped := filepath.Join(dir, "one"), filepath.Join(dir, "two"), filepath.Join(dir, "restarted"), filepath.Join(dir, "stopped")
	oneProcess(t, append(args, "--set", "run.output_dir="+one)...)

	standalone := []string{"--standalone", "--nproc-per-node", "2"}
	out, err := start(t, torchrunCmd(py, "", standalone, append(args, "--set", "run.output_dir="+two))).wait(t)
	if err != nil || !strings.Contains(out, "data parallel: 2 ranks; this is rank 0") {
		t.Fatalf("torchrun with 2 ranks: %v\n%s", err, tail(out, 3000))
	}
	closeWeights(t, one, two, sft, 3)

	// a rank killed in step 2, restarted by torchrun
	pause := filepath.Join(dir, "pause-restart")
	p := start(t, torchrunCmd(py, "", append(standalone, "--max-restarts", "1"), append(args, "--set", "run.output_dir="+restarted),
		dist.RankPauseEnv+"=2:1:"+pause))
	killPaused(t, pause)
	out, err = p.wait(t)
	if err != nil || !strings.Contains(out, "torchrun started the group again") || !strings.Contains(out, "resuming from its newest checkpoint, "+filepath.Join(restarted, "checkpoints", ckpt.DirName(1))) {
		t.Fatalf("the restarted group did not resume from step 1 and finish: %v\n%s", err, tail(out, 3000))
	}
	sameState(t, two, restarted, 3)
	if got := metricSteps(t, restarted); !reflect.DeepEqual(got, []int{1, 2, 3}) {
		t.Fatalf("metrics.jsonl of the restarted run has the steps %v, want [1 2 3]", got)
	}

	// the same kill without restarts: a clean stop
	pause = filepath.Join(dir, "pause-stop")
	p = start(t, torchrunCmd(py, "", standalone, append(args, "--set", "run.output_dir="+stopped), dist.RankPauseEnv+"=2:1:"+pause))
	killPaused(t, pause)
	out, err = p.wait(t)
	if err == nil {
		t.Fatalf("torchrun succeeded although a rank was killed:\n%s", tail(out, 3000))
	}
	lines := trainLines(out)
	want := "train: data parallel: rank 0 of 2 (node 0) stopped in step 2: rank 1 on host "
	// "has stopped": rank 0 was in the collective when rank 1 died, and a
	// probe found it gone; "ended without a word": rank 0 reached the
	// collective after, and the watch refused it (dist/watch.go)
	if len(lines) != 1 || !strings.HasPrefix(lines[0], want) || !strings.Contains(lines[0], "has stopped") && !strings.Contains(lines[0], "ended without a word") {
		t.Fatalf("want one line from rank 0 naming rank 1 and step 2 (%q…), got %q:\n%s", want, lines, tail(out, 3000))
	}
	if !strings.Contains(out, "traceback : "+lines[0]) {
		t.Fatalf("torchrun's summary does not show rank 0's error (TORCHELASTIC_ERROR_FILE):\n%s", tail(out, 2000))
	}
	if cp, err := ckpt.Latest(filepath.Join(stopped, "checkpoints")); err != nil || cp.Step != 1 {
		t.Fatalf("after the kill the newest checkpoint should be step 1, intact: %+v, %v", cp, err)
	}
	t.Log(lines[0])
}
