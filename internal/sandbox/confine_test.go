package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pyJSON runs a Python program that prints one JSON document and decodes it.
func pyJSON(t *testing.T, s *Sandbox, code string, into any) {
	t.Helper()
	res := python(t, s, code)
	if res.Outcome != Passed {
		t.Fatalf("%s: %s", res.Outcome, res.Stderr)
	}
	if err := json.Unmarshal(res.Stdout, into); err != nil {
		t.Fatalf("%v: %q", err, res.Stdout)
	}
}

// The program's environment is the sandbox's own: nothing of the
// trainer's, whose variables may hold tokens, proxies and its HOME.
func TestEnvironmentIsExplicit(t *testing.T) {
	t.Setenv("TROUPE_TEST_TOKEN", "secret-token-value")
	t.Setenv("HOME", "/root/secret-home")
	t.Setenv("https_proxy", "http://secret-proxy.invalid:3128")
	s := newSandbox(t, Limits{})
	var env map[string]string
	pyJSON(t, s, "import json, os\nprint(json.dumps(dict(os.environ)))\n", &env)
	// PWD is bwrap's (the working directory), LC_CTYPE Python's own
	// coercion of the C locale
	allowed := []string{"PATH", "HOME", "TMPDIR", "LANG", "PWD", "LC_CTYPE"}
	for k, v := range env {
		if !slices.Contains(allowed, k) || strings.Contains(v, "secret") {
			t.Errorf("the program sees %s=%q", k, v)
		}
	}
	if env["HOME"] != WorkDir {
		t.Errorf("HOME %q, want %s", env["HOME"], WorkDir)
	}
}

// The program sees the system's binaries and libraries, read-only, and
// nothing else of the host: not the checkout, /etc, /home, /var, /run.
func TestFileSystemHoldsOnlyTheSystem(t *testing.T) {
	s := newSandbox(t, Limits{})
	cwd, _ := os.Getwd()
	host := []string{filepath.Join(cwd, "sandbox_test.go"), cwd, "/etc/passwd", "/etc/hostname", "/etc/resolv.conf", "/home", "/root", "/var", "/run", "/srv", "/opt", "/usr/local", "/usr/share", "/usr/include"}
	list, _ := json.Marshal(host)
	var seen struct {
		Root, Etc, Usr []string
		Exists         map[string]bool
	}
	pyJSON(t, s, "import json, os\nhost = "+string(list)+"\nprint(json.dumps({'Root': os.listdir('/'), 'Etc': os.listdir('/etc'), 'Usr': os.listdir('/usr'), 'Exists': {p: os.path.exists(p) for p in host}}))\n", &seen)
	for p, ok := range seen.Exists {
		if ok {
			t.Errorf("the program sees the host's %s", p)
		}
	}
	for _, c := range []struct {
		dir     string
		entries []string
		allowed []string
	}{
		{"/", seen.Root, []string{"bin", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "tmp", "usr"}},
		{"/etc", seen.Etc, []string{"ld.so.cache"}},
		{"/usr", seen.Usr, []string{"bin", "lib", "lib32", "lib64", "libx32"}},
	} {
		for _, e := range c.entries {
			if !slices.Contains(c.allowed, e) {
				t.Errorf("%s holds %s (want only %v)", c.dir, e, c.allowed)
			}
		}
	}
}

// A Unix socket listening on the host — at a path, or in the abstract
// namespace — cannot be reached from inside.
func TestHostSocketsAreOutOfReach(t *testing.T) {
	s := newSandbox(t, Limits{})
	// not under /tmp, which has always been private to the sandbox
	dir, err := os.MkdirTemp("/var/tmp", "troupe-socket-")
	if err != nil {
		cwd, _ := os.Getwd()
		if dir, err = os.MkdirTemp(cwd, "troupe-socket-"); err != nil {
			t.Fatal(err)
		}
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755) // the program may run as nobody
	path := filepath.Join(dir, "s")
	abstract := fmt.Sprintf("@troupe-socket-test-%d", time.Now().UnixNano())
	accepted := make(chan string, 2)
	for _, addr := range []string{path, abstract} {
		l, err := net.Listen("unix", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		go func() {
			if c, err := l.Accept(); err == nil {
				accepted <- addr
				c.Close()
			}
		}()
	}
	os.Chmod(path, 0o777)
	code := fmt.Sprintf(`import json, socket
out = {}
for addr in (%q, "\0" + %q):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(addr)
        out[addr] = "connected"
    except OSError as e:
        out[addr] = str(e)
print(json.dumps(out))
`, path, abstract[1:])
	var out map[string]string
	pyJSON(t, s, code, &out)
	for addr, how := range out {
		if how == "connected" {
			t.Errorf("the program connected to the host's socket %q", addr)
		}
	}
	select {
	case addr := <-accepted:
		t.Errorf("the host's socket %s accepted a connection", addr)
	default:
	}
}

// Everything the program writes, anywhere, counts against one bound: the
// scratch space (RLIMIT_FSIZE alone bounds each file, not their sum).
func TestWrittenFilesAreBoundedInTotal(t *testing.T) {
	const scratch = 16 << 20
	s := newSandbox(t, Limits{Wall: 30 * time.Second, CPU: 20 * time.Second, FileSize: 4 << 20, Scratch: scratch})
	// up to 64 files of 4 MiB (256 MiB), round-robin over every place a
	// program might write
	code := `import os
chunk = b"x" * (1 << 20)
total = 0
dirs = [".", "/tmp", "/dev/shm", "/dev", "/", "/etc", "/var/tmp", "/usr/lib"]
for i in range(64):
    try:
        fd = os.open(os.path.join(dirs[i % len(dirs)], "f%d" % i), os.O_WRONLY | os.O_CREAT, 0o600)
    except OSError:
        continue
    try:
        for _ in range(4):
            total += os.write(fd, chunk)
    except OSError:
        pass
    os.close(fd)
print(total)
`
	res := python(t, s, code)
	var total int64
	if _, err := fmt.Sscan(string(res.Stdout), &total); err != nil {
		t.Fatalf("%s: %q %s", res.Outcome, res.Stdout, res.Stderr)
	}
	t.Logf("wrote %d MiB", total>>20)
	if total > scratch {
		t.Fatalf("the program wrote %d bytes, over the %d-byte scratch limit", total, scratch)
	}
	if total < scratch/2 {
		t.Fatalf("the program wrote only %d bytes: the scratch space should hold %d", total, scratch)
	}
}

// Negative and absurd limits are refused, by name, before anything runs.
func TestLimitsAreValidated(t *testing.T) {
	for _, c := range []struct {
		field string
		l     Limits
	}{
		{"Wall", Limits{Wall: -time.Second}},
		{"Wall", Limits{Wall: 48 * time.Hour}},
		{"CPU", Limits{CPU: -1}},
		{"Memory", Limits{Memory: -1}},
		{"Memory", Limits{Memory: 1 << 62}}, // memory_mib << 20 past int64's range wraps here
		{"Memory", Limits{Memory: 4096}},
		{"FileSize", Limits{FileSize: -5}},
		{"Scratch", Limits{Scratch: -1}},
		{"Scratch", Limits{Scratch: 1 << 50}},
		{"Processes", Limits{Processes: -1}},
		{"Processes", Limits{Processes: 1 << 20}},
		{"OpenFiles", Limits{OpenFiles: 3}},
		{"Output", Limits{Output: -1}},
	} {
		_, err := New(c.l)
		if err == nil || !strings.Contains(err.Error(), "Limits."+c.field) {
			t.Errorf("%+v: %v, want an error naming Limits.%s", c.l, err, c.field)
		}
	}
}

// The program gets the descriptors it is given (as 3, 4, …) and no other:
// not the copies of its files, not the sandbox's.
func TestProgramInheritsOnlyItsDescriptors(t *testing.T) {
	s := newSandbox(t, Limits{})
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := make(chan string, 1)
	go func() { b, _ := io.ReadAll(r); got <- string(b) }()
	res := s.Exec(context.Background(), Program{
		Args:       []string{"python3", "-I", "main.py"},
		Files:      map[string][]byte{"main.py": []byte(openFDs), "data/other.txt": []byte("x")},
		ExtraFiles: []*os.File{w},
	})
	if res.Outcome != Passed {
		t.Fatalf("%s: %s", res.Outcome, res.Stderr)
	}
	if fds := <-got; fds != "[3]" {
		t.Fatalf("open descriptors %s, want [3]", fds)
	}
}

// A trainer killed with -9 in the middle of a run leaves no process and no
// file behind: the program dies with it, and nothing of the run was ever on
// the host's disk (TMPDIR points at a directory that must stay empty).
func TestKilledTrainerLeavesNothing(t *testing.T) {
	newSandbox(t, Limits{}) // skips without bwrap
	// a directory a sandbox running as nobody could use (t.TempDir's
	// parent is private to root)
	tmp, err := os.MkdirTemp("", "troupe-killed-trainer-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	os.Chmod(tmp, 0o755)
	marker := fmt.Sprintf("troupe-orphan-%d", time.Now().UnixNano())
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHoldsARun$")
	cmd.Env = append(os.Environ(), "TROUPE_SANDBOX_HELPER="+marker, "TMPDIR="+tmp)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "running" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper said %q", line)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if !eventually(func() bool { return len(processesWith(marker)) == 0 }) {
		t.Errorf("the program outlived its trainer: %v", processesWith(marker))
	}
	entries, _ := os.ReadDir(tmp)
	for _, e := range entries {
		t.Errorf("left on disk: %s", filepath.Join(tmp, e.Name()))
	}
}

// TestHelperHoldsARun is TestKilledTrainerLeavesNothing's trainer: it
// starts a long run, says "running" once the program is up, and waits to be
// killed.
func TestHelperHoldsARun(t *testing.T) {
	marker := os.Getenv("TROUPE_SANDBOX_HELPER")
	if marker == "" {
		t.Skip("runs only as TestKilledTrainerLeavesNothing's helper")
	}
	s := newSandbox(t, Limits{Wall: time.Minute, CPU: time.Minute})
	go s.Run(context.Background(), map[string][]byte{"main.py": []byte("import time\ntime.sleep(120)\n")}, "python3", "-I", "main.py", marker)
	// the program itself, not bwrap (whose arguments hold the marker too)
	if !eventually(func() bool {
		return slices.ContainsFunc(processesWith(marker), func(p string) bool { return strings.Contains(p, ": python3 ") })
	}) {
		t.Fatal("the program did not start")
	}
	fmt.Println("running")
	select {}
}

// openFDs writes the list of its open descriptors above 2 to descriptor 3.
const openFDs = `import os
def is_open(fd):
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False
os.write(3, repr([fd for fd in range(3, 256) if is_open(fd)]).encode())
`

// A sandbox whose trainer is gone (bwrap's set-up can hang when its
// launcher dies at the wrong moment) is killed when the next sandbox
// starts; a live trainer's sandbox is left alone.
func TestOrphanedSandboxIsKilledAtStart(t *testing.T) {
	newSandbox(t, Limits{}) // skips without bwrap
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	sleeper := func(hostname string) *exec.Cmd {
		cmd := exec.Command("bwrap", "--unshare-all", "--unshare-user", "--hostname", hostname, "--ro-bind", "/", "/", "--", "sleep", "120")
		if os.Geteuid() == 0 {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	dead := fmt.Sprintf("%s%d-1", ownerPrefix, gone.Process.Pid)
	if ownerAlive(dead) || !ownerAlive(owner()) || !ownerAlive("somebody-else") {
		t.Fatalf("ownerAlive: %s %v, %s %v", dead, ownerAlive(dead), owner(), ownerAlive(owner()))
	}
	orphan, live := sleeper(dead), sleeper(owner())
	orphaned, ended := make(chan error, 1), make(chan error, 1)
	go func() { orphaned <- orphan.Wait() }()
	go func() { ended <- live.Wait() }()
	defer func() { live.Process.Kill(); <-ended }()
	newSandbox(t, Limits{})
	select {
	case <-orphaned:
	case <-time.After(20 * time.Second): // a wait for an event, not a timing
		orphan.Process.Kill()
		t.Fatal("the orphaned sandbox is still running")
	}
	select {
	case err := <-ended:
		ended <- err
		t.Fatalf("the live trainer's sandbox ended: %v", err)
	case <-time.After(time.Second):
	}
}

// processesWith lists the host's processes whose command line holds s.
func processesWith(s string) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), s) {
			out = append(out, e.Name()+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
	return out
}

// eventually polls cond for up to 20 s (a wait for an event, generous for
// a loaded machine; no test asserts on how long it took).
func eventually(cond func() bool) bool {
	for i := 0; i < 400; i++ {
		if cond() {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return cond()
}

// The program cannot create a user namespace of its own (the kernel's
// largest attack surface for an unprivileged process), where bwrap can
// refuse it (0.8 and newer).
func TestNestedUserNamespacesAreRefused(t *testing.T) {
	s := newSandbox(t, Limits{})
	if !s.nested {
		t.Skip("this bwrap has no --disable-userns (bubblewrap older than 0.8)")
	}
	res := python(t, s, "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\nprint(libc.unshare(0x10000000), os.strerror(ctypes.get_errno()))\n")
	if res.Outcome != Passed || !strings.HasPrefix(string(res.Stdout), "-1 ") {
		t.Fatalf("unshare(CLONE_NEWUSER) in the sandbox: %s %q", res.Outcome, res.Stdout)
	}
}

// A bwrap without --size (older than 0.7) cannot bound the scratch space:
// refused, with the version to install.
func TestBwrapWithoutSizeIsRefused(t *testing.T) {
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("prlimit not installed")
	}
	dir := t.TempDir()
	fake := "#!/bin/sh\necho 'usage: bwrap [OPTIONS...] [--] COMMAND [ARGS...]'\necho '    --tmpfs DEST                 Mount new tmpfs on DEST'\n"
	if err := os.WriteFile(filepath.Join(dir, "bwrap"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+":"+filepath.Dir(prlimit))
	if _, err := New(Limits{}); err == nil || !strings.Contains(err.Error(), "--size") || !strings.Contains(err.Error(), "0.7") {
		t.Fatalf("a bwrap without --size: %v", err)
	}
}
