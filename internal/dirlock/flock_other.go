//go:build !unix

package dirlock

import (
	"os"
	"path/filepath"
)

// tryLock takes no lock where flock(2) does not exist.
func tryLock(*os.File) (bool, error) { return false, nil }

// openNoFollow opens name in d; links are not told apart here.
func openNoFollow(d *os.File, name string, create bool) (*os.File, error) {
	flags := os.O_RDWR
	if create {
		flags |= os.O_CREATE
	}
	return os.OpenFile(filepath.Join(d.Name(), name), flags, 0o644)
}

func isLinkError(error) bool { return false }

func checkOwnFile(*os.File, string) error { return nil }

func noLocks(error) bool { return true }

func mkdirIn(d *os.File, name string) error { return os.Mkdir(filepath.Join(d.Name(), name), 0o755) }
