package main

// The Makefile builds troupe on a machine with no Go on PATH: scripts/go/go
// runs the toolchain scripts/go/install.py put in troupe's cache (setup
// installs it there; `make test`'s setup does so even where PATH has Go,
// for this test), also with scripts/go itself on PATH.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pathWithoutGo is a PATH of the usual system directories in which no
// `go` (or `gofmt`) can be found: a directory that holds one is replaced by
// a directory of links to everything else in it.
func pathWithoutGo(t *testing.T) string {
	t.Helper()
	var dirs []string
	for i, d := range []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"} {
		entries, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		_, errGo := os.Stat(filepath.Join(d, "go"))
		_, errFmt := os.Stat(filepath.Join(d, "gofmt"))
		if errGo != nil && errFmt != nil {
			dirs = append(dirs, d)
			continue
		}
		shadow := filepath.Join(t.TempDir(), "bin"+string(rune('0'+i)))
		if err := os.MkdirAll(shadow, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Name() == "go" || e.Name() == "gofmt" {
				continue
			}
			if err := os.Symlink(filepath.Join(d, e.Name()), filepath.Join(shadow, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
		dirs = append(dirs, shadow)
	}
	path := strings.Join(dirs, ":")
	if p, err := lookPathIn("go", path); err == nil {
		t.Fatalf("PATH %s still finds %s", path, p)
	}
	return path
}

func lookPathIn(name, path string) (string, error) {
	for _, d := range filepath.SplitList(path) {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", os.ErrNotExist
}

func TestMakeBuildsWithoutGoOnPath(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds bin/train")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	where := exec.Command("python3", filepath.Join(root, "scripts", "go", "install.py"), "--where")
	cached, err := where.Output()
	if err != nil {
		if os.Getenv("TROUPE_SETUP_REQUIRED") == "1" {
			t.Fatalf("no Go toolchain in troupe's cache; make test's setup installs it (scripts/go/install.py --always): %v", err)
		}
		t.Skip("no Go toolchain in troupe's cache (make setup with fixtures installs it: python3 scripts/go/install.py --always)")
	}
	path := pathWithoutGo(t)
	env := []string{"PATH=" + path, "HOME=" + os.Getenv("HOME")}
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOFLAGS", "GOPROXY", "TROUPE_GO_DIR", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	which := exec.Command(filepath.Join(root, "scripts", "go", "go"), "--which")
	which.Env = env
	got, err := which.CombinedOutput()
	if err != nil || strings.TrimSpace(string(got)) != strings.TrimSpace(string(cached)) {
		t.Fatalf("scripts/go/go --which with no Go on PATH: %q (%v), want the cached %q", got, err, cached)
	}
	// scripts/go itself on PATH: it passes over itself rather than asking
	// itself for its version without end
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	self := exec.CommandContext(ctx, filepath.Join(root, "scripts", "go", "go"), "--which")
	self.Env = append([]string{"PATH=" + filepath.Join(root, "scripts", "go") + ":" + path}, env[1:]...)
	self.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a recursion is killed whole
	self.Cancel = func() error { return syscall.Kill(-self.Process.Pid, syscall.SIGKILL) }
	got, err = self.CombinedOutput()
	if err != nil || strings.TrimSpace(string(got)) != strings.TrimSpace(string(cached)) {
		t.Fatalf("scripts/go/go --which with scripts/go on PATH: %q (%v), want the cached %q", got, err, cached)
	}
	bin := filepath.Join(t.TempDir(), "train")
	mk := exec.Command("make", "--no-print-directory", "build", "TRAIN_OUT="+bin)
	mk.Dir, mk.Env = root, env
	out, err := mk.CombinedOutput()
	if err != nil {
		t.Fatalf("make build with PATH=%s: %v\n%s", path, err, out)
	}
	if !strings.Contains(string(out), strings.TrimSpace(string(cached))) {
		t.Fatalf("make build did not say it used the cached Go %s:\n%s", cached, out)
	}
	version := exec.Command(bin, "version")
	version.Env = env // not the test's LD_LIBRARY_PATH (test-shim.sh points it at a CUDA shim): the shim the build linked
	v, err := version.CombinedOutput()
	if err != nil || !strings.Contains(string(v), "build: CPU only") {
		t.Fatalf("the built binary's version: %v\n%s", err, v)
	}
}
