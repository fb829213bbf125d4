package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// newSandbox skips the test when bwrap is not installed, unless
// TROUPE_SANDBOX_REQUIRED is set (make test sets it: scripts/setup.sh
// installs bubblewrap).
func newSandbox(t *testing.T, l Limits) *Sandbox {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil && os.Getenv("TROUPE_SANDBOX_REQUIRED") == "" {
		t.Skip("bwrap not installed (scripts/setup.sh installs bubblewrap)")
	}
	s, err := New(l)
	if err != nil {
		t.Fatalf("%v (scripts/setup.sh installs bubblewrap)", err)
	}
	return s
}

func python(t *testing.T, s *Sandbox, code string) Result {
	t.Helper()
	res := s.Run(context.Background(), map[string][]byte{"main.py": []byte(code)}, "python3", "-I", "main.py")
	t.Logf("%s: exit %d, signal %q, %v, blocked %v, detail %q, stderr %q", res.Outcome, res.ExitCode, res.Signal, res.Wall.Round(time.Millisecond), res.Blocked, res.Detail, tailOf(res.Stderr))
	return res
}

func tailOf(b []byte) string {
	if len(b) > 300 {
		b = b[len(b)-300:]
	}
	return string(b)
}

// Each misbehaviour is contained and named; the test process (the trainer)
// carries on after every one of them.
func TestSandboxOutcomes(t *testing.T) {
	s := newSandbox(t, Limits{Wall: 3 * time.Second, CPU: time.Second, Memory: 256 << 20, Processes: 16, Output: 64 << 10})
	// a host path outside the run's directory: the package directory (not
	// mounted in the sandbox at all) and /usr (mounted read-only)
	cwd, _ := os.Getwd()
	outside := filepath.Join(cwd, "sandbox-escape-test.txt")
	os.Remove(outside)
	cases := []struct {
		name    string
		code    string
		want    Outcome
		blocked string
		stdout  string
	}{
		{"correct program", "def add(a, b):\n    return a + b\nassert add(2, 3) == 5\nprint('ok')\n", Passed, "", "ok\n"},
		{"failing test", "def add(a, b):\n    return a - b\nassert add(2, 3) == 5, 'add is wrong'\n", Failed, "", ""},
		{"infinite loop", "while True:\n    pass\n", TimedOut, "", ""},
		{"sleeping forever", "import time\ntime.sleep(600)\n", TimedOut, "", ""},
		{"memory filled to the limit", "chunks = []\nwhile True:\n    chunks.append(bytearray(1 << 20))\n", OutOfMemory, "", ""},
		// refused at once: nothing was resident, the program failed on its own
		{"1 GB allocation", "x = bytearray(1 << 30)\nprint(len(x))\n", Failed, "", ""},
		{"fork bomb", "import os\nwhile True:\n    os.fork()\n", Failed, "processes", ""},
		{"write to the host's checkout", "open(" + pyString(outside) + ", 'w').write('x')\n", Failed, "", ""},
		{"write outside its directory", "open('/usr/lib/sandbox-escape-test.txt', 'w').write('x')\n", Failed, "write outside its directory", ""},
		{"network connection", "import socket\nsocket.create_connection(('93.184.216.34', 80), timeout=3)\n", Failed, "network", ""},
		{"flood of output", "while True:\n    print('y' * 1000)\n", OutputLimit, "", ""},
		{"crash by signal", "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n", Crashed, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := python(t, s, c.code)
			// a fork bomb's processes die of EAGAIN one by one; on a busy
			// machine the last ones may outlive the wall clock — contained
			// either way, which the blocked check below is about
			forkBombLate := c.blocked == "processes" && res.Outcome == TimedOut
			if res.Outcome != c.want && !forkBombLate {
				t.Fatalf("outcome %s, want %s", res.Outcome, c.want)
			}
			if c.blocked != "" && !slices.Contains(res.Blocked, c.blocked) {
				t.Fatalf("blocked %v, want it to name %q", res.Blocked, c.blocked)
			}
			if c.stdout != "" && string(res.Stdout) != c.stdout {
				t.Fatalf("stdout %q, want %q", res.Stdout, c.stdout)
			}
		})
	}
	if _, err := os.Stat(outside); err == nil {
		os.Remove(outside)
		t.Fatal("the program wrote outside its directory")
	}
	// files of a run stay inside it: a second run does not see the first's
	res := python(t, s, "open('left.txt', 'w').write('x')\n")
	if res.Outcome != Passed {
		t.Fatal(res.Outcome)
	}
	if res := python(t, s, "import os\nassert not os.path.exists('left.txt')\n"); res.Outcome != Passed {
		t.Fatalf("a run saw the previous run's file: %s", res.Outcome)
	}
}

func TestSandboxRefusesEscapingFileNames(t *testing.T) {
	s := newSandbox(t, Limits{})
	for _, name := range []string{"../x.py", "/etc/x.py", "."} {
		res := s.Run(context.Background(), map[string][]byte{name: []byte("1")}, "true")
		if res.Outcome != Unavailable || !strings.Contains(res.Detail, "relative") {
			t.Errorf("file %q: %s %q", name, res.Outcome, res.Detail)
		}
	}
}

func TestSandboxUnavailableWithoutBwrap(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := New(Limits{}); err == nil || !strings.Contains(err.Error(), "bubblewrap") {
		t.Fatalf("no bwrap on PATH: %v", err)
	}
}

func pyString(s string) string { return "'" + strings.ReplaceAll(s, "'", "\\'") + "'" }

// The outcome is the supervisor's: what the program writes or exits with
// cannot make its run look unavailable, out of memory or timed out, and
// ignoring SIGXCPU does not hide a CPU limit it hit. Before, "bwrap: …"
// on stderr with exit 1 read as "sandbox unavailable", "MemoryError" on
// stderr as "out of memory", and an exit status of 152 (128 + SIGXCPU) as
// "timed out".
func TestOutcomesAreTheSupervisors(t *testing.T) {
	s := newSandbox(t, Limits{Wall: 20 * time.Second, CPU: time.Second, Memory: 256 << 20, Processes: 16, Output: 64 << 10})
	for _, c := range []struct {
		name, code string
		want       Outcome
	}{
		{"bwrap's failure forged", "import sys\nsys.stderr.write('bwrap: Can\\'t mount proc on /newroot/proc: Operation not permitted\\n')\nsys.exit(1)\n", Failed},
		{"out of memory forged", "import sys\nsys.stderr.write('MemoryError\\nCannot allocate memory\\n')\nsys.exit(1)\n", Failed},
		{"the CPU limit's exit status forged", "import os\nos._exit(152)\n", Crashed},
		{"SIGXCPU sent to itself", "import os, signal\nos.kill(os.getpid(), signal.SIGXCPU)\n", Crashed},
		{"SIGXCPU ignored", "import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True:\n    pass\n", TimedOut},
	} {
		t.Run(c.name, func(t *testing.T) {
			if res := python(t, s, c.code); res.Outcome != c.want {
				t.Errorf("outcome %s (%s), want %s", res.Outcome, res.Detail, c.want)
			}
		})
	}
}
