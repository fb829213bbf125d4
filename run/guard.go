package run

// guard.go — commands never replace what exists unless told (--force).

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// refuseReplace returns an error when dir exists and is not empty, unless
// force is set; flag names the option that chose dir, for the message.
func RefuseReplace(cmd, dir, flag string, force bool) error {
	if force {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		if st, serr := os.Stat(dir); serr == nil && !st.IsDir() {
			return fmt.Errorf("%s: %s exists and is not a directory", cmd, dir)
		}
		return fmt.Errorf("%s: %w", cmd, err)
	}
	if len(entries) == 0 {
		return nil
	}
	return fmt.Errorf("%s: %s already exists and is not empty (%s…); pass --force to replace it, or choose another %s", cmd, dir, entries[0].Name(), flag)
}

// sameFile says whether two paths name the same directory or file (by
// identity when both exist, else by absolute path).
func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	if err1 == nil && err2 == nil {
		return os.SameFile(sa, sb)
	}
	if x, err := filepath.Abs(a); err == nil {
		a = x
	}
	if x, err := filepath.Abs(b); err == nil {
		b = x
	}
	return filepath.Clean(a) == filepath.Clean(b)
}
