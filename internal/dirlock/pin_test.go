package dirlock

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A lock file that is a link, a FIFO, a hard link or another user's is
// refused by Acquire and Probe, and the file it points at is left as it
// was (before, Acquire opened it through the link and rewrote it).
func TestLockFileMustBeOwnRegularFile(t *testing.T) {
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := map[string]func(lock string) error{
		"symbolic link": func(lock string) error { return os.Symlink(victim, lock) },
		"dangling link": func(lock string) error { return os.Symlink(victim+"-missing", lock) },
		"hard link":     func(lock string) error { return os.Link(victim, lock) },
		"FIFO":          func(lock string) error { return syscall.Mkfifo(lock, 0o644) },
		"directory":     func(lock string) error { return os.Mkdir(lock, 0o755) },
	}
	if os.Geteuid() == 0 { // only root can make a file another user's
		cases["another user's file"] = func(lock string) error {
			if err := os.WriteFile(lock, nil, 0o644); err != nil {
				return err
			}
			return os.Chown(lock, 4242, 4242)
		}
	}
	for name, plant := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			lock := filepath.Join(dir, Name)
			if err := plant(lock); err != nil {
				t.Fatal(err)
			}
			l, err := Acquire(dir)
			if err == nil {
				l.Release()
				t.Fatalf("Acquire took a lock file that is a %s", name)
			}
			if !strings.Contains(err.Error(), lock) || IsBusy(err) {
				t.Errorf("Acquire: %v, want an error naming %s", err, lock)
			}
			if perr := Probe(dir); perr == nil {
				t.Errorf("Probe accepted a lock file that is a %s", name)
			}
			if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
				t.Fatalf("the file behind the lock was changed: %q", b)
			}
			if _, err := os.Lstat(victim + "-missing"); err == nil {
				t.Fatalf("a dangling link's target was created")
			}
		})
	}
	// the directory itself may be reached through a link: that is the
	// user's name for it
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	l, err := Acquire(link)
	if err != nil {
		t.Fatalf("a directory named through a link: %v", err)
	}
	l.Release()
}

// Check follows the directory, not its name: renamed, deleted, or replaced
// by another directory at the same name, it says so.
func TestCheckPinsTheDirectory(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "run")
	for _, what := range []string{"renamed", "deleted", "replaced"} {
		t.Run(what, func(t *testing.T) {
			os.RemoveAll(dir)
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			l, err := Acquire(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Release()
			if err := l.Check(); err != nil {
				t.Fatalf("before anything moved: %v", err)
			}
			switch what {
			case "renamed":
				err = os.Rename(dir, dir+"-moved")
				defer os.RemoveAll(dir + "-moved")
			case "deleted":
				err = os.RemoveAll(dir)
			case "replaced":
				if err = os.Rename(dir, dir+"-moved"); err == nil {
					err = os.Mkdir(dir, 0o755)
				}
				defer os.RemoveAll(dir + "-moved")
			}
			if err != nil {
				t.Fatal(err)
			}
			var moved *MovedError
			if err := l.Check(); !errors.As(err, &moved) || moved.Gone != (what != "replaced") {
				t.Fatalf("after the directory was %s: %v, want a MovedError (gone %v)", what, err, what != "replaced")
			}
		})
	}
}

// A temporary held by a live writer survives another writer's clean-up;
// once its writer is gone (killed: the kernel drops the hold) it is
// removed. Its name carries the writer's pid.
func TestTempIsRemovedOnlyWhenItsWriterIsGone(t *testing.T) {
	parent := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdTempEnv+"="+parent)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	buf := make([]byte, 4096)
	n, _ := out.Read(buf)
	path := strings.TrimSpace(string(buf[:n]))
	if !strings.HasPrefix(filepath.Base(path), ".tmp-x-"+itoa(cmd.Process.Pid)+".") {
		t.Fatalf("the writer's temporary is %q, want it named after pid %d", path, cmd.Process.Pid)
	}
	if removed, err := RemoveIfFree(path); removed || err != nil {
		t.Fatalf("a live writer's temporary: removed %v, %v", removed, err)
	}
	if _, err := os.Stat(filepath.Join(path, "part")); err != nil {
		t.Fatalf("the live writer's temporary lost its file: %v", err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if removed, err := RemoveIfFree(path); !removed || err != nil {
		t.Fatalf("a killed writer's temporary: removed %v, %v", removed, err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("still there")
	}
	// this process's own temporary: Remove deletes it
	mine, err := MakeTemp(parent, ".tmp-x-")
	if err != nil {
		t.Fatal(err)
	}
	if removed, _ := RemoveIfFree(mine.Path); removed {
		t.Fatal("a held temporary was removed through another open file")
	}
	if err := mine.Remove(); err != nil {
		t.Fatal(err)
	}
}
