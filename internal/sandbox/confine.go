// confine.go — what a run is confined by: the limits and their checks, the
// bubblewrap arguments (namespaces, the read-only system directories, the
// size-limited scratch tmpfs, the environment) and the prlimit arguments.
// It holds no policy about what runs inside; the package doc says what the
// confinement defends against and what it does not.
package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Limits bound one run. Zero fields take the defaults of DefaultLimits;
// Validate refuses negative and absurd values.
type Limits struct {
	Wall      time.Duration // wall-clock deadline
	CPU       time.Duration // CPU time (RLIMIT_CPU, whole seconds, at least 1)
	Memory    int64         // address space in bytes (RLIMIT_AS)
	FileSize  int64         // largest file the program may write (RLIMIT_FSIZE)
	Scratch   int64         // bytes of files in /tmp, working directory included, all together (tmpfs size)
	Processes int           // processes and threads the program may add (RLIMIT_NPROC)
	OpenFiles int           // open descriptors (RLIMIT_NOFILE)
	Output    int64         // bytes of stdout and of stderr kept; more kills the run
}

// DefaultLimits suit unit tests of short generated functions.
var DefaultLimits = Limits{
	Wall: 10 * time.Second, CPU: 5 * time.Second, Memory: 512 << 20,
	FileSize: 16 << 20, Scratch: 64 << 20, Processes: 32, OpenFiles: 64, Output: 1 << 20,
}

// Validate checks each limit against its range; the error names the field,
// the value and the range. Zero means the default.
func (l Limits) Validate() error {
	type check struct {
		name      string
		v, lo, hi int64
		unit      string
	}
	for _, c := range []check{
		{"Wall", int64(l.Wall), int64(time.Millisecond), int64(time.Hour), "duration"},
		{"CPU", int64(l.CPU), int64(time.Millisecond), int64(time.Hour), "duration"},
		{"Memory", l.Memory, 32 << 20, 1 << 40, "bytes"},
		{"FileSize", l.FileSize, 1 << 10, 64 << 30, "bytes"},
		{"Scratch", l.Scratch, 1 << 20, 64 << 30, "bytes"},
		{"Processes", int64(l.Processes), 1, 4096, ""},
		{"OpenFiles", int64(l.OpenFiles), 16, 1 << 16, ""},
		{"Output", l.Output, 1 << 10, 1 << 30, "bytes"},
	} {
		if c.v == 0 || c.v >= c.lo && c.v <= c.hi {
			continue
		}
		show := func(v int64) string {
			switch c.unit {
			case "duration":
				return time.Duration(v).String()
			case "bytes":
				return fmt.Sprintf("%d bytes", v)
			}
			return fmt.Sprint(v)
		}
		return fmt.Errorf("sandbox: Limits.%s: must be in [%s, %s] (0 takes the default), got %s", c.name, show(c.lo), show(c.hi), show(c.v))
	}
	return nil
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	return Limits{
		Wall: orDefault(l.Wall, d.Wall), CPU: orDefault(l.CPU, d.CPU),
		Memory: orDefault(l.Memory, d.Memory), FileSize: orDefault(l.FileSize, d.FileSize),
		Scratch: orDefault(l.Scratch, d.Scratch), Processes: orDefault(l.Processes, d.Processes),
		OpenFiles: orDefault(l.OpenFiles, d.OpenFiles), Output: orDefault(l.Output, d.Output),
	}
}

func orDefault[T int | int64 | time.Duration](v, d T) T {
	if v > 0 {
		return v
	}
	return d
}

// WorkDir is the program's working directory (and HOME) inside the
// sandbox; it lies in the scratch tmpfs at /tmp.
const WorkDir = "/tmp/work"

// Environment is the program's whole environment, as name/value pairs.
var Environment = []string{
	"PATH", "/usr/bin:/bin",
	"HOME", WorkDir,
	"TMPDIR", "/tmp",
	"LANG", "C.UTF-8",
}

// systemDirs are what any dynamically linked program (python3, prlimit,
// true) needs from the host: binaries, libraries, the dynamic linker and
// its cache. A merged-/usr system has /bin and /lib* as links into /usr;
// older ones have them as directories.
var (
	usrDirs     = []string{"/usr/bin", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libx32"}
	rootDirs    = []string{"/bin", "/lib", "/lib32", "/lib64", "/libx32"}
	linkerCache = "/etc/ld.so.cache"
)

// bwrapFeatures reads from bwrap's --help whether it has the options this
// package needs (--size, without which the scratch space has no bound)
// and whether it can refuse nested user namespaces (--disable-userns).
func bwrapFeatures(bwrap string) (disableUserns bool, err error) {
	out, _ := exec.Command(bwrap, "--help").CombinedOutput()
	help := string(out)
	if !strings.Contains(help, "--size") {
		return false, fmt.Errorf("sandbox: %s has no --size option, which bounds the program's scratch space: install bubblewrap 0.7 or newer (Debian 12 has 0.8.0)", bwrap)
	}
	return strings.Contains(help, "--disable-userns"), nil
}

// systemMounts builds the read-only part of the file system: the system
// directories that exist here, then the caller's.
func systemMounts(readOnly []string) ([]string, error) {
	var args []string
	for _, d := range usrDirs {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			args = append(args, "--ro-bind", d, d)
		}
	}
	for _, d := range rootDirs {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(d)
			if err != nil {
				return nil, fmt.Errorf("sandbox: %s: %w", d, err)
			}
			args = append(args, "--symlink", target, d)
		case fi.IsDir():
			args = append(args, "--ro-bind", d, d)
		}
	}
	if _, err := os.Stat(linkerCache); err == nil {
		args = append(args, "--ro-bind", linkerCache, linkerCache)
	}
	for _, d := range readOnly {
		clean := filepath.Clean(d)
		if !filepath.IsAbs(clean) || clean == "/" {
			return nil, fmt.Errorf("sandbox: read-only directory %q must be an absolute path below /", d)
		}
		if _, err := os.Stat(clean); err != nil {
			return nil, fmt.Errorf("sandbox: read-only directory: %w", err)
		}
		if covered(clean) {
			continue
		}
		args = append(args, "--ro-bind", clean, clean)
	}
	return args, nil
}

// covered says whether a host path is already visible in every sandbox
// through the system directories.
func covered(path string) bool {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false
	}
	for _, d := range append(append([]string(nil), usrDirs...), rootDirs...) {
		rd, err := filepath.EvalSymlinks(d)
		if err == nil && (real == rd || strings.HasPrefix(real, rd+"/")) {
			return true
		}
	}
	return false
}

// bwrapArgs is everything before the command: namespaces, the file system,
// the environment. fileArgs copy the program's files into the working
// directory.
func (s *Sandbox) bwrapArgs(fileArgs []string) []string {
	args := []string{"--unshare-all", "--unshare-user"}
	if s.nested {
		args = append(args, "--disable-userns")
	}
	args = append(args,
		"--as-pid-1", // the first process is exec's shell, which waits for the program
		"--die-with-parent", "--new-session", "--clearenv",
		"--hostname", owner(), // orphans.go
	)
	for i := 0; i+1 < len(Environment); i += 2 {
		args = append(args, "--setenv", Environment[i], Environment[i+1])
	}
	args = append(args, s.mounts...)
	args = append(args,
		"--dev", "/dev", "--proc", "/proc",
		"--size", fmt.Sprint(s.limits.Scratch), "--tmpfs", "/tmp",
		"--dir", WorkDir,
	)
	args = append(args, fileArgs...)
	// the root and /dev (a tmpfs of bwrap's, not size-limited) are
	// read-only once built: /tmp is the one writable place
	return append(args, "--chdir", WorkDir, "--remount-ro", "/dev", "--remount-ro", "/")
}

// prlimitArgs sets the resource limits just before prlimit (util-linux)
// execs the program, inside the namespaces, so that they bind the program
// and not bwrap's setup.
func (s *Sandbox) prlimitArgs(cpu int64) []string {
	l := s.limits
	nproc := l.Processes
	if s.asUser == nil {
		nproc += processesOf(os.Getuid()) // RLIMIT_NPROC counts every process of the real user
	}
	return []string{
		fmt.Sprintf("--cpu=%d:%d", cpu, cpu+1), // SIGXCPU at the soft limit, SIGKILL a second later
		fmt.Sprintf("--as=%d", l.Memory), fmt.Sprintf("--fsize=%d", l.FileSize),
		fmt.Sprintf("--nproc=%d", nproc), fmt.Sprintf("--nofile=%d", l.OpenFiles), "--core=0",
	}
}

// copyIn puts each file's content in an anonymous memory file (memfd: no
// trace on disk) and returns them with the bwrap arguments that copy them
// into the working directory, given the descriptor number the first one
// will have in bwrap. bwrap closes them once copied, so the program does
// not inherit them.
func copyIn(files map[string][]byte, firstFD int) ([]*os.File, []string, error) {
	var (
		out  []*os.File
		args []string
		dirs = map[string]bool{WorkDir: true}
	)
	for name, data := range files {
		clean := filepath.Clean(name)
		if filepath.IsAbs(clean) || clean == "." || clean == ".." || strings.HasPrefix(clean, "../") {
			return out, nil, fmt.Errorf("file name %q must be relative and inside the run's directory", name)
		}
		dest := filepath.Join(WorkDir, clean)
		var parents []string
		for d := filepath.Dir(dest); !dirs[d]; d = filepath.Dir(d) {
			parents = append(parents, d)
			dirs[d] = true
		}
		for i := len(parents) - 1; i >= 0; i-- {
			args = append(args, "--dir", parents[i])
		}
		fd, err := unix.MemfdCreate("troupe-sandbox-file", unix.MFD_CLOEXEC)
		if err != nil {
			return out, nil, fmt.Errorf("memfd for %s: %w", name, err)
		}
		f := os.NewFile(uintptr(fd), name)
		out = append(out, f)
		if _, err := f.Write(data); err != nil {
			return out, nil, fmt.Errorf("memfd for %s: %w", name, err)
		}
		if _, err := f.Seek(0, 0); err != nil {
			return out, nil, fmt.Errorf("memfd for %s: %w", name, err)
		}
		args = append(args, "--file", fmt.Sprint(firstFD+len(out)-1), dest)
	}
	return out, args, nil
}

// closeOnExec marks close-on-exec every descriptor above 2 of this
// process that lacks the flag, so that none reaches a sandboxed program:
// os/exec passes a child only the descriptors it is given but does not
// close the others, and the trainer holds some without the flag — those it
// inherited, and those that C libraries (libtorch, Gloo's sockets) open.
// Called before every start; one opened by another thread in between can
// still slip through, which is why the coding harness also closes every
// descriptor it does not know first thing.
func closeOnExec() error {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("sandbox: listing this process's descriptors: %w", err)
	}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd < 3 {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil || flags&unix.FD_CLOEXEC != 0 {
			continue // closed since it was listed (the listing's own), or already marked
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, flags|unix.FD_CLOEXEC); err != nil {
			return fmt.Errorf("sandbox: marking descriptor %d close-on-exec: %w", fd, err)
		}
	}
	return nil
}

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
