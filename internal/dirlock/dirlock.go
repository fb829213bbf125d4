// Package dirlock gives a directory one writer at a time: a lock file in the
// directory, held with flock(2) for as long as the writer runs. The kernel
// drops the lock when the holder's process ends, however it ends (an error,
// Ctrl-C, kill -9, a node that reboots), so a crash never leaves it stuck;
// the file itself stays, and names its last holder (pid, host, start time,
// command) so that a refused writer can say who holds the directory.
//
// The lock pins the directory, not its name: Acquire keeps the directory
// open, opens run.lock inside it without following a link, and takes it
// only when it is a regular file of this user with one name (a planted
// link or hard link would otherwise have the writer overwrite another
// file). Check says whether the path still names the locked directory, so
// a writer whose directory was renamed or deleted stops instead of writing
// by path into whatever the name now means. Temporaries (temp.go) are named
// by their writer and locked while it writes, so a sweep never removes a
// live writer's work.
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
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
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

// MovedError is Check's error when the locked directory's path no longer
// names it.
type MovedError struct {
	Dir  string
	Gone bool // nothing is at Dir now (else another directory or file is)
}

func (e *MovedError) Error() string {
	if e.Gone {
		return fmt.Sprintf("%s was renamed or deleted while this process wrote it", e.Dir)
	}
	return fmt.Sprintf("%s now names another directory than the one this process locked (the locked one was renamed or deleted, and something else made at its name)", e.Dir)
}

// Lock is a held directory; Release gives it up.
type Lock struct {
	f    *os.File // run.lock, flocked
	dir  *os.File // the directory itself, open: what Check compares the path with
	path string
}

// Acquire takes dir's lock without waiting, and records this process as the
// holder. The directory must exist. It returns a *BusyError naming the
// holder when another process (or another Acquire of this one) holds it, and
// refuses a lock file that is a link, not a regular file, another user's, or
// a file with more than one name.
func Acquire(dir string) (*Lock, error) {
	d, err := openDir(dir)
	if err != nil {
		return nil, err
	}
	f, err := openLockFile(d, dir, true)
	if err != nil {
		d.Close()
		return nil, err
	}
	busy, err := tryLock(f)
	if err != nil {
		f.Close()
		d.Close()
		return nil, fmt.Errorf("%s: cannot lock %s (%v); the file system keeps no locks: use a local directory or one on a file system with locking", dir, filepath.Join(dir, Name), err)
	}
	if busy {
		h := readHolder(f)
		f.Close()
		d.Close()
		return nil, &BusyError{Dir: dir, Holder: h}
	}
	if err := writeHolder(f); err != nil {
		f.Close() // drops the lock
		d.Close()
		return nil, fmt.Errorf("%s: cannot write the lock file: %w", dir, err)
	}
	return &Lock{f: f, dir: d, path: dir}, nil
}

// openDir opens the directory a lock guards (a link to it is followed: that
// is the user's own name for it).
func openDir(dir string) (*os.File, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot open the directory: %w", dir, err)
	}
	if st, err := d.Stat(); err != nil || !st.IsDir() {
		d.Close()
		return nil, fmt.Errorf("%s: not a directory", dir)
	}
	return d, nil
}

// openLockFile opens run.lock inside the open directory d without following
// a link (created when create is set), and refuses it unless it is a
// regular file of this user with one name.
func openLockFile(d *os.File, dir string, create bool) (*os.File, error) {
	path := filepath.Join(dir, Name)
	f, err := openNoFollow(d, Name, create)
	if err != nil {
		if isLinkError(err) {
			target, _ := os.Readlink(path)
			return nil, fmt.Errorf("%s is a symbolic link (to %s); a run writes its lock file only as a regular file of its own, never through a link: remove %s and start again", path, Quote(target), path)
		}
		if st, serr := os.Lstat(path); serr == nil && st.IsDir() {
			return nil, fmt.Errorf("%s is a directory; a run's lock file must be a regular file: remove it and start again", path)
		}
		return nil, fmt.Errorf("%s: cannot open the lock file: %w", path, err)
	}
	if err := checkOwnFile(f, path); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Release gives up the lock; the file stays. Safe to call more than once
// and on a nil Lock.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	l.f.Close() // closing the last descriptor drops the flock
	l.dir.Close()
	l.f, l.dir = nil, nil
}

// Check reports a *MovedError when the path the lock was taken through no
// longer names the locked directory (renamed, deleted, or replaced by
// another), and nil while it does. A writer calls it before each write by
// path, so that it never writes into what the name has come to mean.
func (l *Lock) Check() error {
	if l == nil || l.dir == nil {
		return nil
	}
	held, err := l.dir.Stat()
	if err != nil {
		return fmt.Errorf("%s: %w", l.path, err)
	}
	now, err := os.Stat(l.path)
	if err != nil {
		return &MovedError{Dir: l.path, Gone: true}
	}
	if !os.SameFile(held, now) {
		return &MovedError{Dir: l.path}
	}
	return nil
}

// Mkdir makes the directory name inside the locked directory, through the
// open directory rather than its path (mkdirat): if the path has come to
// name another directory, it is made in the locked one all the same. An
// existing directory is no error.
func (l *Lock) Mkdir(name string) error {
	if l == nil || l.dir == nil {
		return nil
	}
	if err := mkdirIn(l.dir, name); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s: %w", filepath.Join(l.path, name), err)
	}
	return nil
}

// Quote writes a name from the file system for a one-line message: control
// characters and invalid UTF-8 escaped, as Go quotes strings, else as is.
func Quote(s string) string {
	q := strconv.Quote(s)
	if q[1:len(q)-1] == s {
		return s
	}
	return q
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
//
// A lock file Acquire would refuse (a link, another user's) is reported
// with Acquire's error.
func Probe(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return nil // no directory: nobody has held it
	}
	defer d.Close()
	if _, err := os.Lstat(filepath.Join(dir, Name)); err != nil {
		return nil // no lock file: nobody has held it
	}
	f, err := openLockFile(d, dir, false)
	if err != nil {
		return err
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
