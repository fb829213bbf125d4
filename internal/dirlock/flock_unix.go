//go:build unix

package dirlock

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// tryLock takes an exclusive flock on f without waiting: busy when another
// open file holds it.
func tryLock(f *os.File) (busy bool, err error) {
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if errors.Is(err, unix.EWOULDBLOCK) {
		return true, nil
	}
	return false, err
}

// openNoFollow opens name inside the open directory d for reading and
// writing (openat with O_NOFOLLOW: a link is an error, not followed;
// O_NONBLOCK: a FIFO planted there does not block the open).
func openNoFollow(d *os.File, name string, create bool) (*os.File, error) {
	flags := unix.O_RDWR | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC
	if create {
		flags |= unix.O_CREAT
	}
	var fd int
	var err error
	for {
		fd, err = unix.Openat(int(d.Fd()), name, flags, 0o644)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		return nil, &os.PathError{Op: "openat", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}

// isLinkError says whether an open with O_NOFOLLOW met a symbolic link.
func isLinkError(err error) bool { return errors.Is(err, unix.ELOOP) }

// checkOwnFile refuses an open file that is not a regular file, not this
// user's, or has more than one name (a hard link to a file elsewhere).
func checkOwnFile(f *os.File, path string) error {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return fmt.Errorf("%s is not a regular file (mode %v); a run's lock file must be one: remove it and start again", path, os.FileMode(st.Mode&0o777)|fileType(st.Mode))
	case int(st.Uid) != os.Geteuid():
		return fmt.Errorf("%s belongs to user id %d, not to this user (%d); a run writes only a lock file of its own: remove it if the directory is yours, or write elsewhere (--set run.output_dir=DIR)", path, st.Uid, os.Geteuid())
	case st.Nlink > 1:
		return fmt.Errorf("%s has %d names (a hard link shares it with another file); a run's lock file must be its own: remove it and start again", path, st.Nlink)
	}
	return nil
}

func fileType(mode uint32) os.FileMode {
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return os.ModeDir
	case unix.S_IFIFO:
		return os.ModeNamedPipe
	case unix.S_IFSOCK:
		return os.ModeSocket
	case unix.S_IFCHR:
		return os.ModeDevice | os.ModeCharDevice
	case unix.S_IFBLK:
		return os.ModeDevice
	}
	return 0
}

// noLocks says whether a lock error means the file system keeps no locks.
func noLocks(err error) bool {
	return errors.Is(err, unix.ENOLCK) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS)
}

// mkdirIn makes name inside the open directory d.
func mkdirIn(d *os.File, name string) error {
	if err := unix.Mkdirat(int(d.Fd()), name, 0o755); err != nil {
		return &os.PathError{Op: "mkdirat", Path: name, Err: err}
	}
	return nil
}
