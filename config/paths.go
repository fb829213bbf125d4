package config

// paths.go — the directories a run writes, checked before it starts: a
// run.output_dir that cannot be created (a file in its way, a parent that
// is not writable) is refused with the key that set it, rather than as the
// operating system's "not a directory" once the models are loaded.
//
// What it is not: a check of free space, or of files a run reads (those
// are checked where they are named: models, tokenizers, datasets).

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// validatePaths checks the output directory of a config a run starts
// from; a checkpoint's saved config (the run resumes where the checkpoint
// lives, perhaps on another machine) and a plan's (it writes nothing) are
// not checked.
func (c *Config) validatePaths() error {
	if c.files != allFiles {
		return nil
	}
	return checkWritableDir("run.output_dir", c.Run.OutputDir)
}

// checkWritableDir checks that dir exists as a directory, or can be
// created: its nearest existing ancestor is a writable directory.
func checkWritableDir(key, dir string) error {
	p := filepath.Clean(dir)
	for {
		st, err := os.Stat(p)
		switch {
		case err == nil && !st.IsDir():
			if p == filepath.Clean(dir) {
				return fmt.Errorf("%s: %s is a file, not a directory; set %s to a directory (--set %s=DIR)", key, dir, key, key)
			}
			return fmt.Errorf("%s: %s cannot be created: %s is a file; set %s to a directory (--set %s=DIR)", key, dir, p, key, key)
		case err == nil:
			if syscall.Access(p, 2 /* W_OK */) != nil {
				return fmt.Errorf("%s: %s cannot be written: %s is not writable by this user; set %s to a directory you can write (--set %s=DIR)", key, dir, p, key, key)
			}
			return nil
		case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
			return fmt.Errorf("%s: %s: %v; set %s to a directory you can write (--set %s=DIR)", key, dir, err, key, key)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return nil
		}
		p = parent
	}
}
