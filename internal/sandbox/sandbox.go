// Package sandbox runs untrusted programs — code that a model wrote — in a
// separate, confined process, and says plainly how the run ended: passed,
// failed (a non-zero exit: a failing test), timed out, out of memory,
// crashed (killed by a signal), too much output, stopped by the caller, or
// sandbox unavailable.
//
// # Threat model
//
// The program is hostile: an RL policy searches, without meaning to, for
// any behaviour that raises its reward or escapes its limits, and a model
// can also write code that deletes, reads or floods what it can reach. The
// sandbox is what stands between such code and the machine; the coding
// reward (rollout/env/coding) adds its own protocol so that the program
// cannot forge its score either. Tests a model wrote (the code-test
// workflow's tester) are hostile in the same way and would run beside the
// verdict, so they never run: the coding reward reads them as data.
//
// What every run gets (confine.go builds it):
//
//   - Namespaces (bubblewrap): new user, mount, PID, network, IPC, UTS and
//     cgroup namespaces; nested user namespaces are refused inside
//     (--disable-userns, bubblewrap 0.8 and newer). The only network device is loopback, so neither
//     the Internet nor the host's abstract Unix sockets are reachable; the
//     program sees only its own processes and cannot signal or trace the
//     trainer or another run.
//   - A file system of its own, built on an empty root that is read-only:
//     the system's /usr/bin, /usr/lib (and /usr/lib32, /usr/lib64, /usr/libx32
//     where they exist), the /bin and /lib links or directories, the dynamic
//     linker's cache /etc/ld.so.cache, and the directories the caller names
//     (the interpreter's own installation when it lies elsewhere) — all
//     read-only; nothing else of the host: not /etc, /home, /root, /run,
//     /var, /srv, /opt, /usr/local, the checkout or the run directories, and
//     so no host Unix socket either. /proc is the sandbox's own; /dev holds
//     null, zero, full, random, urandom and tty, read-only.
//   - One writable place: a tmpfs at /tmp of Limits.Scratch bytes, holding
//     the working directory /tmp/work; the program's files are copied into
//     it before it starts, and everything written there counts against the
//     one size. Nothing is written on the host's disks, so a run that
//     crashes — or a trainer killed with -9 — leaves no file behind; the
//     one process it can leave (orphans.go) is killed by the next New.
//   - A hostname that names the trainer (pid and start time), nothing of
//     the host's.
//   - An explicit environment: PATH, HOME, TMPDIR and LANG, set here; no
//     variable of the trainer's (tokens, proxies, HOME, …) is inherited.
//   - Resource limits (prlimit, set just before the program starts, inside
//     the namespaces): CPU seconds, address space, the size of one written
//     file, processes, open files, no core dumps; a wall-clock deadline
//     after which the whole sandbox is killed; stdout and stderr kept up to
//     a byte limit, past which the run is killed too.
//   - When troupe runs as root, the program runs as nobody: the kernel does
//     not enforce RLIMIT_NPROC for root, so a fork bomb would otherwise not
//     be contained.
//   - Descriptors: only stdin (/dev/null), stdout, stderr and the
//     descriptors the caller passes. Program.Files' copies are closed before
//     the program starts, and every descriptor of the trainer's is marked
//     close-on-exec before each start (os/exec would pass on those that lack
//     the flag).
//
// What it does not defend against:
//
//   - The kernel: the program makes system calls directly (no seccomp
//     filter), so a kernel or bubblewrap vulnerability is an escape. The
//     sandbox is as strong as the namespaces it is built from.
//   - Memory outside the address space: RLIMIT_AS bounds mapped memory, the
//     tmpfs bounds files; memory held in memfd or SysV shared-memory objects
//     that are not mapped is bounded only per object (RLIMIT_FSIZE) and by
//     the count of open files, not in total. A cgroup would bound it; none
//     is used (it needs a delegated cgroup tree).
//   - Side channels and the CPU: the program shares the machine's cores and
//     caches; the CPU limit bounds how long, not how much of the machine.
//   - Reading the system's public files: what /usr/bin and /usr/lib hold is
//     visible (package-managed programs and libraries, no secrets by
//     convention).
//   - The processes limit counts every process of the sandbox's user on the
//     host (nobody, when troupe runs as root), so many concurrent sandboxes
//     share it.
//
// Needs: bwrap (Debian: bubblewrap) 0.7 or newer for --size, and 0.8 for
// --disable-userns, which is used where present (Debian 12 ships 0.8.0,
// Ubuntu 22.04 0.6.1: too old), prlimit (util-linux) and, for Python programs,
// python3 — scripts/setup.sh installs them. Without bwrap every run reports
// Unavailable, and the caller decides what that means (the coding reward
// treats it as an error of the run, not of the model).
package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Outcome is how a run ended, as the supervisor saw it: its own kills
// (deadline, output, caller), bwrap's status (did its set-up finish and
// the program run?), the CPU time and peak memory of the sandbox's
// processes (their rusage, which reaches this process through the
// sandbox's first process, a shell that waits for the program), and the
// exit status. Never what the program wrote: "bwrap: …" or "MemoryError"
// on its stderr, or an exit status of 152, choose nothing.
type Outcome int

const (
	Passed      Outcome = iota // exit status 0
	Failed                     // a non-zero exit status (a failing test, an exception, an allocation the limit refused at once)
	TimedOut                   // the wall-clock deadline, or the CPU time used reached the CPU-time limit
	OutOfMemory                // failed with a peak resident memory of at least half the memory limit
	Crashed                    // ended by a signal (its own, or one the limits do not explain)
	OutputLimit                // wrote more than the output limit
	Unavailable                // the sandbox could not start the program (bwrap reported no exit)
	Stopped                    // the caller's context ended first
)

func (o Outcome) String() string {
	return [...]string{"passed", "failed", "timed out", "out of memory", "crashed", "output limit", "sandbox unavailable", "stopped"}[o]
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
	// (read-only file system), "disk" (the scratch space is full) and
	// "processes" (fork refused). A program may still pass after hitting
	// them.
	Blocked []string
	Detail  string // why, for Unavailable and the limits
}

// Program is one run: the command and what it starts with.
type Program struct {
	// Args is the command; Args[0] is an absolute path or a name found on
	// the sandbox's PATH (/usr/bin:/bin).
	Args []string
	// Files are copied into the working directory (names relative to it)
	// before the program starts.
	Files map[string][]byte
	// ExtraFiles become the program's descriptors 3, 4, …: pipes to another
	// process, typically. Exec closes them once the program has started (or
	// failed to), so that the caller's copies do not keep a pipe open.
	ExtraFiles []*os.File
}

// Sandbox runs programs with one set of limits. Safe for concurrent use:
// every run has its own namespaces, file system and processes.
type Sandbox struct {
	bwrap   string
	prlimit string
	limits  Limits
	mounts  []string            // bwrap arguments for the read-only system directories
	nested  bool                // bwrap can refuse nested user namespaces (--disable-userns)
	asUser  *syscall.Credential // nobody, when troupe runs as root
}

// New finds bwrap and returns a sandbox with the given limits (zero fields
// take DefaultLimits') and, besides the system's directories, the given
// host directories mounted read-only at the same place (an interpreter
// installed outside /usr, for instance). It fails — with the fix in the
// message — when a limit is out of range, a directory does not exist, or
// bwrap is missing or cannot create the namespaces on this machine.
func New(l Limits, readOnly ...string) (*Sandbox, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, fmt.Errorf("sandbox: bwrap not found (install bubblewrap: apt-get install bubblewrap, or run scripts/setup.sh)")
	}
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		return nil, fmt.Errorf("sandbox: prlimit not found (it is part of util-linux: apt-get install util-linux)")
	}
	nested, err := bwrapFeatures(bwrap)
	if err != nil {
		return nil, err
	}
	mounts, err := systemMounts(readOnly)
	if err != nil {
		return nil, err
	}
	reapOrphans()
	s := &Sandbox{bwrap: bwrap, prlimit: prlimit, limits: l.withDefaults(), mounts: mounts, nested: nested}
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

// Run copies files (name → content, relative names only) into a fresh
// working directory and runs argv there, confined.
func (s *Sandbox) Run(ctx context.Context, files map[string][]byte, argv ...string) Result {
	return s.Exec(ctx, Program{Args: argv, Files: files})
}

// Exec runs one program, confined, and waits for it. Cancelling ctx kills
// it (outcome Stopped); the wall-clock limit kills it too (TimedOut).
func (s *Sandbox) Exec(ctx context.Context, p Program) Result {
	start := time.Now()
	res := s.exec(ctx, p)
	res.Wall = time.Since(start)
	return res
}

func (s *Sandbox) exec(ctx context.Context, p Program) Result {
	inherited := p.ExtraFiles
	defer closeFiles(inherited) // idempotent: also closed right after Start
	if len(p.Args) == 0 {
		return unavailable("no command to run")
	}
	files, fileArgs, err := copyIn(p.Files, 3+len(p.ExtraFiles))
	defer closeFiles(files)
	if err != nil {
		return unavailable(err.Error())
	}
	l := s.limits
	cpu := max(int64(l.CPU/time.Second), 1)
	// bwrap's status: it writes {"exit-code": N} only once its set-up is
	// done and the program has run, on a descriptor the program never
	// holds — how the supervisor tells its own failure from the program's
	status, statusW, err := os.Pipe()
	if err != nil {
		return unavailable(err.Error())
	}
	defer status.Close()
	statusFD := 3 + len(inherited) + len(files)
	args := append([]string{"--json-status-fd", fmt.Sprint(statusFD)}, s.bwrapArgs(fileArgs)...)
	// the sandbox's first process is a shell that waits for the program,
	// so that the program's CPU time and peak memory reach bwrap's and so
	// this process's wait (bwrap's own init would exit unwaited for, and
	// take them with it); the program itself is an ordinary process
	args = append(args, "--", shell, "-c", `"$@"; exit $?`, "sh", s.prlimit)
	args = append(args, s.prlimitArgs(cpu)...)
	args = append(args, "--")
	args = append(args, p.Args...)

	wall, cancel := context.WithTimeout(ctx, l.Wall)
	defer cancel()
	cmd := exec.Command(s.bwrap, args...)
	cmd.Env = []string{} // bwrap needs none; the program's comes from --setenv
	cmd.Dir = "/"
	cmd.ExtraFiles = append(append(append([]*os.File(nil), inherited...), files...), statusW)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: s.asUser, Pdeathsig: syscall.SIGKILL}
	stdout := &capped{limit: l.Output}
	stderr := &capped{limit: l.Output}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := closeOnExec(); err != nil {
		return unavailable(err.Error())
	}
	err = cmd.Start()
	closeFiles(inherited)
	closeFiles(files)
	statusW.Close()
	if err != nil {
		return unavailable("starting bwrap: " + err.Error())
	}
	ran := make(chan bool, 1) // bwrap reported the program's exit
	go func() { ran <- reportsExit(status) }()
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
		case <-wall.Done():
			killed = "deadline"
			if ctx.Err() != nil {
				killed = "caller"
			}
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
	started := <-ran
	var ee *exec.ExitError
	peak := peakMemory(cmd.ProcessState)
	// the outcome is what the supervisor saw — its own kills, bwrap's
	// status, the CPU time and memory the sandbox's processes used, the
	// exit status — never what the program wrote (see Outcome)
	switch {
	case killed == "caller":
		res.Outcome, res.Detail = Stopped, "stopped by the caller"
	case killed == "deadline":
		res.Outcome, res.Detail = TimedOut, fmt.Sprintf("killed after the %v wall-clock limit", l.Wall)
	case killed == "output":
		res.Outcome, res.Detail = OutputLimit, fmt.Sprintf("killed after writing more than %d bytes", l.Output)
	case !started:
		detail := "bwrap could not set up the sandbox"
		if waitErr != nil && !errors.As(waitErr, &ee) {
			detail = waitErr.Error()
		}
		res.Outcome, res.Detail = Unavailable, strings.TrimSpace(detail+": "+string(res.Stderr))
	case waitErr == nil:
		res.Outcome = Passed
	// the kernel's CPU-time limit counts the precise run time; the rusage
	// the supervisor reads is split into user and system time by sampling
	// and came out 5 % short of a 1 s limit on a loaded machine (949 ms):
	// nine tenths of the limit is the limit reached
	case cpuUsed(cmd.ProcessState) >= time.Duration(cpu)*time.Second*9/10:
		res.Outcome, res.Detail = TimedOut, fmt.Sprintf("over the %ds CPU-time limit (used %v)", cpu, cpuUsed(cmd.ProcessState).Round(time.Millisecond))
	case peak >= l.Memory/2:
		res.Outcome, res.Detail = OutOfMemory, fmt.Sprintf("at the %d MiB memory limit (peak %d MiB resident)", l.Memory>>20, peak>>20)
	case res.ExitCode > 128 || res.Signal != "":
		res.Outcome, res.Detail = Crashed, fmt.Sprintf("ended by signal %d", res.ExitCode-128)
	default:
		res.Outcome = Failed
	}
	return res
}

// reportsExit reads bwrap's JSON status to its end and says whether it
// reported an exit code: bwrap writes one only once its set-up is done and
// the program has run and ended.
func reportsExit(status *os.File) bool {
	dec := json.NewDecoder(io.LimitReader(status, 1<<16))
	exited := false
	for {
		var m map[string]any
		if dec.Decode(&m) != nil {
			io.Copy(io.Discard, status) // bwrap must never block on a full pipe
			return exited
		}
		if _, ok := m["exit-code"]; ok {
			exited = true
		}
	}
}

// peakMemory is the largest resident memory of the sandbox's processes
// (the rusage of bwrap and every process it waited for), in bytes.
func peakMemory(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss << 10 // KiB on Linux
	}
	return 0
}

// shell is the sandbox's first process (see exec).
const shell = "/bin/sh"

func unavailable(detail string) Result {
	return Result{Outcome: Unavailable, ExitCode: -1, Detail: detail}
}

// closeFiles closes each file; closing one twice is harmless (os.File
// reports the second close as an error, which is ignored here).
func closeFiles(fs []*os.File) {
	for _, f := range fs {
		f.Close()
	}
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
	if strings.Contains(s, "No space left on device") || strings.Contains(s, "File too large") {
		out = append(out, "disk")
	}
	if strings.Contains(s, "Resource temporarily unavailable") {
		out = append(out, "processes")
	}
	return out
}

// cpuUsed is the CPU time of the sandbox and its waited-for descendants.
func cpuUsed(ps *os.ProcessState) time.Duration { return ps.UserTime() + ps.SystemTime() }

// capped keeps the first limit bytes written and counts them all. Write
// runs on exec's copying goroutine; over is polled from Exec's; bytes is
// read after the process is waited for.
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
