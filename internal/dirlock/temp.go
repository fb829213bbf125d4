package dirlock

// temp.go — hidden working directories that belong to their writer: a save
// in progress, an export being staged. MakeTemp names one after the writing
// process (prefix + pid + "." + random) and holds an flock on the directory
// itself until Release, so RemoveIfFree — what a later writer's clean-up of
// crashed work calls — removes only a temporary whose writer is gone (a
// killed writer's lock is dropped by the kernel). Before this, a clean-up
// removed every temporary of its prefix, including one a live writer was
// filling through another name of the same directory.
//
// What it is not: a lock on the directory's contents against readers, or
// anything on a file system without flock (there a temporary is removed as
// before: Acquire refuses such a run directory anyway).

import (
	"fmt"
	"os"
	"strconv"
)

// Temp is a working directory held by this process.
type Temp struct {
	Path string
	f    *os.File
}

// MakeTemp creates parent/prefix<pid>.<random> (mode 0755) and holds it.
func MakeTemp(parent, prefix string) (*Temp, error) {
	p, err := os.MkdirTemp(parent, prefix+strconv.Itoa(os.Getpid())+".*")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(p, 0o755); err != nil { // MkdirTemp makes it 0700
		os.Remove(p)
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		os.Remove(p)
		return nil, err
	}
	if busy, err := tryLock(f); busy || err != nil && !noLocks(err) {
		f.Close()
		os.Remove(p)
		return nil, fmt.Errorf("%s: cannot lock the new directory: busy %v, %v", p, busy, err)
	}
	return &Temp{Path: p, f: f}, nil
}

// Release gives up the hold (the directory stays, renamed or not). Safe to
// call more than once and on a nil Temp.
func (t *Temp) Release() {
	if t == nil || t.f == nil {
		return
	}
	t.f.Close()
	t.f = nil
}

// Remove deletes the directory and releases it.
func (t *Temp) Remove() error {
	if t == nil {
		return nil
	}
	defer t.Release()
	return os.RemoveAll(t.Path)
}

// RemoveIfFree deletes the temporary at path unless a live writer holds it,
// and says whether it did. A temporary that is not a directory (a file, a
// link, which is removed as a name and never followed) has no holder.
func RemoveIfFree(path string) (bool, error) {
	st, err := os.Lstat(path)
	if err != nil {
		return false, err
	}
	if st.IsDir() {
		f, err := os.Open(path)
		if err != nil {
			return false, err
		}
		defer f.Close() // after the removal: nobody can take it meanwhile
		if busy, _ := tryLock(f); busy {
			return false, nil
		}
	}
	return true, os.RemoveAll(path)
}
