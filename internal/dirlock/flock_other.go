//go:build !unix

package dirlock

import "os"

// tryLock takes no lock where flock(2) does not exist.
func tryLock(*os.File) (bool, error) { return false, nil }
