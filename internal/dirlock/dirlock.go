// Package dirlock gives a directory one writer at a time: a lock file in the
// directory, held with flock(2) for as long as the writer runs. The kernel
// drops the lock when the holder's process ends, however it ends (an error,
// Ctrl-C, kill -9, a node that reboots), so a crash never leaves it stuck;
// the file itself stays, and names its last holder (pid, host, start time,
// command) so that a refused writer can say who holds the directory.
//
// What it is not: a lock between threads of one process that share a Lock
// (each Acquire opens the file anew, so two Acquires in one process do
// exclude each other), or a lease with a timeout. On NFS, flock is carried
// by the server's lock manager (Linux 2.6.12 and newer); a file system that
// keeps no locks makes Acquire fail with that said, rather than run
// unguarded. Other systems than Unix take no lock (flock_other.go).
package dirlock

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Name is the lock file's name inside the directory it guards.
const Name = "run.lock"

// Holder is who holds (or last held) a directory.
type Holder struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Started time.Time `json:"started"`
	Command string    `json:"command"`
}

func (h Holder) String() string {
	if h.PID == 0 {
		return "a process that has not yet written its name"
	}
	return fmt.Sprintf("pid %d on %s, since %s: %s", h.PID, h.Host, h.Started.Format("2006-01-02 15:04:05"), h.Command)
}

// BusyError is Acquire's error when another process holds the directory.
type BusyError struct {
	Dir    string
	Holder Holder
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("%s is in use by another writer (%s)", e.Dir, e.Holder)
}

// Lock is a held directory; Release gives it up.
type Lock struct {
	f *os.File
}

// Acquire takes dir's lock without waiting, and records this process as the
// holder. The directory must exist. It returns a *BusyError naming the
// holder when another process (or another Acquire of this one) holds it.
func Acquire(dir string) (*Lock, error) {
	path := filepath.Join(dir, Name)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot open the lock file: %w", dir, err)
	}
	busy, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: cannot lock %s (%v); the file system keeps no locks: use a local directory or one on a file system with locking", dir, path, err)
	}
	if busy {
		h := readHolder(f)
		f.Close()
		return nil, &BusyError{Dir: dir, Holder: h}
	}
	if err := writeHolder(f); err != nil {
		f.Close() // drops the lock
		return nil, fmt.Errorf("%s: cannot write the lock file: %w", dir, err)
	}
	return &Lock{f: f}, nil
}

// Release gives up the lock; the file stays. Safe to call more than once
// and on a nil Lock.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	l.f.Close() // closing the last descriptor drops the flock
	l.f = nil
}

func writeHolder(f *os.File) error {
	host, _ := os.Hostname()
	cmd := strings.Join(os.Args, " ")
	if len(cmd) > 300 {
		cmd = cmd[:300] + "…"
	}
	b, _ := json.Marshal(Holder{PID: os.Getpid(), Host: host, Started: time.Now(), Command: cmd})
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.WriteAt(append(b, '\n'), 0); err != nil {
		return err
	}
	return f.Sync()
}

func readHolder(f *os.File) Holder {
	var h Holder
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil || json.Unmarshal(b, &h) != nil {
		return Holder{}
	}
	return h
}

// Probe reports the holder of dir's lock as a *BusyError when another
// process holds it, and nil when none does (or dir has no lock file). It
// takes the lock for an instant to find out, so a run that starts at that
// instant is told the directory is busy: it fails safe.
func Probe(dir string) error {
	f, err := os.OpenFile(filepath.Join(dir, Name), os.O_RDWR, 0)
	if err != nil {
		return nil // no lock file: nobody has held it
	}
	defer f.Close() // drops a lock this probe took
	if busy, err := tryLock(f); err == nil && busy {
		return &BusyError{Dir: dir, Holder: readHolder(f)}
	}
	return nil
}

// IsBusy says whether err is (or wraps) a BusyError.
func IsBusy(err error) bool {
	var b *BusyError
	return errors.As(err, &b)
}
