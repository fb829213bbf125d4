package main

// The ranks of a data-parallel run stop with their launcher, and ranks
// started with different configs refuse to train together.

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"troupe/ckpt"
)

// tinyRun makes a random tiny model and a config of the e2e shape for it.
func tinyRun(t *testing.T, dir string) (cfgPath, out string) {
	t.Helper()
	base := filepath.Join(dir, "base")
	cli(t, "init", base, "--merges", "0")
	out = filepath.Join(dir, "out")
	yaml := strings.ReplaceAll(strings.ReplaceAll(e2eConfig, "OUT", out), "MODEL", base)
	cfgPath = filepath.Join(dir, "run.yaml")
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfgPath, out
}

// trainProcess is this test binary started as the train command.
func trainProcess(args []string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), asTrainEnv+"=1"), env...)
	return cmd
}

// childrenOf lists the processes whose parent is pid (Linux /proc).
func childrenOf(pid int) []int {
	var out []int
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, s := range stats {
		b, err := os.ReadFile(s)
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			n, _ := strconv.Atoi(filepath.Base(filepath.Dir(s)))
			out = append(out, n)
		}
	}
	return out
}

// alive says whether pid runs (a zombie has exited).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

// waitFor polls cond every 50 ms for up to d.
func waitFor(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// Killing the launcher (SIGKILL: it cannot pass anything on) stops both
// ranks: they finish their step, checkpoint and exit, instead of training
// on out of reach of Ctrl-C.
func TestDistRanksStopWithLauncher(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	dir := t.TempDir()
	cfgPath, out := tinyRun(t, dir)
	launcher := trainProcess([]string{"-c", cfgPath, "-q", "--nproc", "2", "--set", "run.steps=100000", "--set", "checkpoint.every=0",
		"--set", "export.at_end=false", "--set", "max_new_tokens=8", "--set", "batch.prompts_per_step=2", "--set", "batch.n=2"}, "TROUPE_THREADS=1")
	// a file, not a pipe: the ranks inherit it, and Wait would wait for them
	logs, err := os.Create(filepath.Join(dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logs.Close()
	logText := func() string { b, _ := os.ReadFile(logs.Name()); return tail(string(b), 3000) }
	launcher.Stdout, launcher.Stderr = logs, logs
	if err := launcher.Start(); err != nil {
		t.Fatal(err)
	}
	var ranks []int
	t.Cleanup(func() {
		for _, r := range ranks {
			if alive(r) {
				syscall.Kill(r, syscall.SIGKILL)
			}
		}
	})
	if !waitFor(3*time.Minute, func() bool {
		ranks = childrenOf(launcher.Process.Pid)
		b, _ := os.ReadFile(filepath.Join(out, "metrics.jsonl"))
		return len(ranks) == 2 && bytes.Count(b, []byte("\n")) >= 1
	}) {
		launcher.Process.Kill()
		launcher.Wait()
		t.Fatalf("the ranks did not train a step (ranks %v):\n%s", ranks, logText())
	}
	launcher.Process.Kill()
	launcher.Wait()
	if !waitFor(time.Minute, func() bool { return !alive(ranks[0]) && !alive(ranks[1]) }) {
		t.Fatalf("ranks %v still run a minute after their launcher died", ranks)
	}
	cp, err := ckpt.Latest(filepath.Join(out, "checkpoints"))
	if err != nil || cp.Step < 1 {
		t.Fatalf("the ranks stopped without a checkpoint: %+v, %v\n%s", cp, err, logText())
	}
}

// freePort is a TCP port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Two ranks started by hand (as on two nodes) with different --set flags
// refuse at the join, naming the key, instead of training different runs.
func TestDistRanksRefuseDifferentConfigs(t *testing.T) {
	dir := t.TempDir()
	cfgPath, out := tinyRun(t, dir)
	port := strconv.Itoa(freePort(t))
	errs := make([]bytes.Buffer, 2)
	cmds := make([]*exec.Cmd, 2)
	for r := range 2 {
		cmds[r] = trainProcess([]string{"-c", cfgPath, "-q", "--set", "run.steps=1", "--set", "export.at_end=false",
			"--set", "max_new_tokens=8", "--set", "batch.prompts_per_step=2", "--set", "run.seed=" + strconv.Itoa(3+r),
			"--set", "run.output_dir=" + out},
			"WORLD_SIZE=2", "RANK="+strconv.Itoa(r), "MASTER_ADDR=127.0.0.1", "MASTER_PORT="+port, "TROUPE_THREADS=1", "TROUPE_DIST_TIMEOUT=2m")
		cmds[r].Stderr = &errs[r]
		if err := cmds[r].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for r, c := range cmds {
		err := c.Wait()
		if err == nil {
			t.Fatalf("rank %d trained although the ranks were started with different run.seed", r)
		}
		// the ranks are named with their hosts: "run.seed is 3 on rank 0 on host H (ADDR) but 4 on rank 1 on host …"
		if want := regexp.MustCompile(`run\.seed is 3 on rank 0 .*but 4 on rank 1`); !want.MatchString(errs[r].String()) {
			t.Fatalf("rank %d: the error should match %q:\n%s", r, want, errs[r].String())
		}
	}
}
