// Package sandbox runs untrusted programs — code that a model wrote — in a
// separate, confined process, and says plainly how the run ended: passed,
// failed (a non-zero exit: a failing test), timed out, out of memory,
// crashed (killed by a signal), too much output, or sandbox unavailable.
//
// Confinement, for every run:
//
//   - bubblewrap (bwrap) puts the program in new user, mount, PID, network,
//     IPC and UTS namespaces: the host file system is mounted read-only, a
//     private /tmp is a tmpfs, the run's own temporary directory is the only
//     writable host path (mounted at /tmp/work, the working directory), and there
//     is no network device but loopback. The directory is removed afterwards.
//   - resource limits: CPU seconds (RLIMIT_CPU), address space (RLIMIT_AS),
//     written file size (RLIMIT_FSIZE), processes (RLIMIT_NPROC) and a
//     wall-clock deadline after which the whole process group is killed;
//     stdout and stderr are kept up to a byte limit, past which the run is
//     killed too.
//   - when troupe itself runs as root, the program runs as nobody: the
//     kernel does not enforce RLIMIT_NPROC for root, so a fork bomb would
//     otherwise not be contained.
//
// What it deliberately is not: a security boundary against a determined
// attacker (it is as strong as bubblewrap and the kernel's namespaces), nor a
// language runtime: it runs a command; the coding environment decides which.
//
// Needs: bwrap (Debian: bubblewrap), prlimit (util-linux) and, for Python
// programs, python3 —
// scripts/setup.sh installs both. Without bwrap every run reports
// Unavailable, and the caller decides what that means (the coding reward
// treats it as an error of the run, not of the model).
package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Outcome is how a run ended.
type Outcome int

const (
	Passed      Outcome = iota // exit status 0
	Failed                     // a non-zero exit status (a failing test, an exception)
	TimedOut                   // the wall-clock deadline or the CPU-time limit
	OutOfMemory                // the address-space limit (Python: MemoryError)
	Crashed                    // killed by a signal other than the limits'
	OutputLimit                // wrote more than the output limit
	Unavailable                // the sandbox could not start the program
)

func (o Outcome) String() string {
	return [...]string{"passed", "failed", "timed out", "out of memory", "crashed", "output limit", "sandbox unavailable"}[o]
}

// Limits bound one run. Zero fields take the defaults of DefaultLimits.
type Limits struct {
	Wall      time.Duration // wall-clock deadline
	CPU       time.Duration // CPU time (RLIMIT_CPU, whole seconds, at least 1)
	Memory    int64         // address space in bytes (RLIMIT_AS)
	FileSize  int64         // largest file the program may write (RLIMIT_FSIZE)
	Processes int           // processes and threads the program may add (RLIMIT_NPROC)
	Output    int64         // bytes of stdout and of stderr kept; more kills the run
}

// DefaultLimits suit unit tests of short generated functions.
var DefaultLimits = Limits{
	Wall: 10 * time.Second, CPU: 5 * time.Second, Memory: 512 << 20,
	FileSize: 16 << 20, Processes: 32, Output: 1 << 20,
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.Wall > 0 {
		d.Wall = l.Wall
	}
	if l.CPU > 0 {
		d.CPU = l.CPU
	}
	if l.Memory > 0 {
		d.Memory = l.Memory
	}
	if l.FileSize > 0 {
		d.FileSize = l.FileSize
	}
	if l.Processes > 0 {
		d.Processes = l.Processes
	}
	if l.Output > 0 {
		d.Output = l.Output
	}
	return d
}

// Result is what a run produced.
type Result struct {
	Outcome  Outcome
	ExitCode int    // the exit status (-1 when killed)
	Signal   string // the signal that ended it, if any
	Stdout   []byte
	Stderr   []byte
	Wall     time.Duration
	// Blocked lists confinements the program ran into, read from its error
	// output: "network" (no route out), "write outside its directory"
	// (read-only file system) and "processes" (fork refused). A program may
	// still pass after hitting them.
	Blocked []string
	Detail  string // why, for Unavailable and the limits
}

// Sandbox runs programs with one set of limits. Safe for concurrent use:
// every Run has its own directory and processes.
type Sandbox struct {
	bwrap   string
	prlimit string
	limits  Limits
	asUser  *syscall.Credential // nobody, when troupe runs as root
}

// New finds bwrap and returns a sandbox with the given limits. It fails —
// with the fix in the message — when bwrap is missing or cannot create the
// namespaces on this machine.
func New(l Limits) (*Sandbox, error) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, fmt.Errorf("sandbox: bwrap not found (install bubblewrap: apt-get install bubblewrap, or run scripts/setup.sh)")
	}
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		return nil, fmt.Errorf("sandbox: prlimit not found (it is part of util-linux: apt-get install util-linux)")
	}
	s := &Sandbox{bwrap: bwrap, prlimit: prlimit, limits: l.withDefaults()}
	if os.Geteuid() == 0 {
		s.asUser = &syscall.Credential{Uid: 65534, Gid: 65534}
	}
	res := s.Run(context.Background(), nil, "true")
	if res.Outcome != Passed {
		return nil, fmt.Errorf("sandbox: bwrap cannot start a confined process here (%s): %s", res.Outcome, strings.TrimSpace(res.Detail+" "+string(res.Stderr)))
	}
	return s, nil
}

// Limits returns the sandbox's limits.
func (s *Sandbox) Limits() Limits { return s.limits }

// Run writes files (name → content, relative names only) into a fresh
// directory, runs argv there, confined, and removes the directory.
func (s *Sandbox) Run(ctx context.Context, files map[string][]byte, argv ...string) Result {
	start := time.Now()
	res := s.run(ctx, files, argv)
	res.Wall = time.Since(start)
	return res
}

func (s *Sandbox) run(ctx context.Context, files map[string][]byte, argv []string) Result {
	if len(argv) == 0 {
		return Result{Outcome: Unavailable, ExitCode: -1, Detail: "no command to run"}
	}
	dir, err := os.MkdirTemp("", "troupe-sandbox-")
	if err != nil {
		return Result{Outcome: Unavailable, ExitCode: -1, Detail: "temporary directory: " + err.Error()}
	}
	defer os.RemoveAll(dir)
	// the program may run as nobody: the directory is its to write
	if err := os.Chmod(dir, 0o777); err != nil {
		return Result{Outcome: Unavailable, ExitCode: -1, Detail: err.Error()}
	}
	for name, data := range files {
		clean := filepath.Clean(name)
		if filepath.IsAbs(clean) || clean == "." || strings.HasPrefix(clean, "..") {
			return Result{Outcome: Unavailable, ExitCode: -1, Detail: fmt.Sprintf("file name %q must be relative and inside the run's directory", name)}
		}
		p := filepath.Join(dir, clean)
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			return Result{Outcome: Unavailable, ExitCode: -1, Detail: err.Error()}
		}
		if err := os.WriteFile(p, data, 0o666); err != nil {
			return Result{Outcome: Unavailable, ExitCode: -1, Detail: err.Error()}
		}
	}

	l := s.limits
	cpu := max(int64(l.CPU/time.Second), 1)
	nproc := l.Processes
	if s.asUser == nil {
		nproc += processesOf(os.Getuid()) // RLIMIT_NPROC counts every process of the real user
	}
	// prlimit (util-linux) sets the limits just before it execs the program,
	// inside the namespaces, so they bind the program and not bwrap's setup.
	args := []string{
		"--ro-bind", "/", "/",
		"--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
		"--bind", dir, "/tmp/work", "--chdir", "/tmp/work",
		"--unshare-all", "--die-with-parent", "--new-session",
		"--setenv", "HOME", "/tmp/work", "--setenv", "TMPDIR", "/tmp",
		"--", s.prlimit,
		fmt.Sprintf("--cpu=%d:%d", cpu, cpu+1), // SIGXCPU at the soft limit, SIGKILL a second later
		fmt.Sprintf("--as=%d", l.Memory), fmt.Sprintf("--fsize=%d", l.FileSize),
		fmt.Sprintf("--nproc=%d", nproc), "--",
	}
	args = append(args, argv...)

	ctx, cancel := context.WithTimeout(ctx, l.Wall)
	defer cancel()
	cmd := exec.Command(s.bwrap, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: s.asUser, Pdeathsig: syscall.SIGKILL}
	stdout := &capped{limit: l.Output}
	stderr := &capped{limit: l.Output}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		return Result{Outcome: Unavailable, ExitCode: -1, Detail: "starting bwrap: " + err.Error()}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	killed := ""
	var waitErr error
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
wait:
	for {
		select {
		case waitErr = <-done:
			break wait
		case <-ctx.Done():
			killed = "deadline"
		case <-tick.C:
			if stdout.over() || stderr.over() {
				killed = "output"
			}
		}
		if killed != "" {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			waitErr = <-done
			break
		}
	}
	res := Result{ExitCode: cmd.ProcessState.ExitCode(), Stdout: stdout.bytes(), Stderr: stderr.bytes()}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.Signal = ws.Signal().String()
	}
	res.Blocked = blocked(res.Stderr)
	switch {
	case killed == "deadline":
		res.Outcome, res.Detail = TimedOut, fmt.Sprintf("killed after the %v wall-clock limit", l.Wall)
	case killed == "output":
		res.Outcome, res.Detail = OutputLimit, fmt.Sprintf("killed after writing more than %d bytes", l.Output)
	case bwrapFailed(res.Stderr, res.ExitCode):
		res.Outcome, res.Detail = Unavailable, strings.TrimSpace(string(res.Stderr))
	case waitErr == nil:
		res.Outcome = Passed
	case res.ExitCode == 128+int(syscall.SIGXCPU) || res.ExitCode == 128+int(syscall.SIGKILL) && cpuUsed(cmd.ProcessState) >= time.Duration(cpu)*time.Second:
		res.Outcome, res.Detail = TimedOut, fmt.Sprintf("over the %ds CPU-time limit", cpu)
	case bytes.Contains(res.Stderr, []byte("MemoryError")) || bytes.Contains(res.Stderr, []byte("Cannot allocate memory")):
		res.Outcome, res.Detail = OutOfMemory, fmt.Sprintf("over the %d MiB memory limit", l.Memory>>20)
	case res.ExitCode > 128 || res.Signal != "":
		res.Outcome, res.Detail = Crashed, fmt.Sprintf("ended by signal %d", res.ExitCode-128)
	default:
		var ee *exec.ExitError
		if !errors.As(waitErr, &ee) {
			res.Outcome, res.Detail = Unavailable, waitErr.Error()
		} else {
			res.Outcome = Failed
		}
	}
	return res
}

// bwrapFailed recognises bwrap's own start-up failures (before the program
// ran), which it reports on stderr with its name and exit status 1.
func bwrapFailed(stderr []byte, code int) bool {
	return code == 1 && bytes.HasPrefix(bytes.TrimSpace(stderr), []byte("bwrap:"))
}

// blocked reads the confinements a program ran into from its error output.
func blocked(stderr []byte) []string {
	var out []string
	s := string(stderr)
	if strings.Contains(s, "Network is unreachable") || strings.Contains(s, "Temporary failure in name resolution") {
		out = append(out, "network")
	}
	if strings.Contains(s, "Read-only file system") {
		out = append(out, "write outside its directory")
	}
	if strings.Contains(s, "Resource temporarily unavailable") {
		out = append(out, "processes")
	}
	return out
}

// cpuUsed is the CPU time of the sandbox and its waited-for descendants.
func cpuUsed(ps *os.ProcessState) time.Duration { return ps.UserTime() + ps.SystemTime() }

// processesOf counts the processes whose real user is uid.
func processesOf(uid int) int {
	entries, _ := os.ReadDir("/proc")
	n := 0
	prefix := fmt.Sprintf("Uid:\t%d\t", uid)
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		status, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err == nil && bytes.Contains(status, []byte(prefix)) {
			n++
		}
	}
	return n
}

// capped keeps the first limit bytes written and counts them all. Write
// runs on exec's copying goroutine; over is polled from Run's; bytes is read
// after the process is waited for.
type capped struct {
	buf   bytes.Buffer
	limit int64
	total atomic.Int64
}

func (c *capped) Write(p []byte) (int, error) {
	c.total.Add(int64(len(p)))
	if room := c.limit - int64(c.buf.Len()); room > 0 {
		c.buf.Write(p[:min(int64(len(p)), room)])
	}
	return len(p), nil
}

func (c *capped) over() bool    { return c.total.Load() > c.limit }
func (c *capped) bytes() []byte { return c.buf.Bytes() }
