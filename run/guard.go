package run

// guard.go — commands never replace what exists unless told (--force), and
// never write over what they read, told or not.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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

// RefuseInputAsOutput refuses an output that is one of the command's
// inputs, lies inside one or holds one — whatever --force says: the
// command would destroy what it reads. flag names the option that chose
// out; empty inputs are skipped.
func RefuseInputAsOutput(cmd, out, flag string, inputs ...string) error {
	for _, in := range inputs {
		if in == "" {
			continue
		}
		o, i := resolvedPath(out), resolvedPath(in)
		switch {
		case o == i || sameFile(out, in):
			return fmt.Errorf("%s: %s %s is the command's own input; choose another %s", cmd, flag, out, flag)
		case within(o, i):
			return fmt.Errorf("%s: %s %s lies inside %s, which the command reads; choose another %s", cmd, flag, out, in, flag)
		case within(i, o):
			return fmt.Errorf("%s: %s %s holds %s, which the command reads; choose another %s", cmd, flag, out, in, flag)
		}
	}
	return nil
}

// RefuseForeignFile refuses to replace an existing file at path that is
// not of the writer's own kind (isKind reads its first bytes), unless
// force; a directory there is refused always. kind names what the writer
// writes, for the message.
func RefuseForeignFile(cmd, path, flag, kind string, force bool, isKind func(head []byte) bool) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("%s: %s: %w", cmd, path, err)
	case st.IsDir():
		return fmt.Errorf("%s: %s %s is a directory; name the %s file to write", cmd, flag, path, kind)
	case force:
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", cmd, path, err)
	}
	defer f.Close()
	head := make([]byte, 64)
	n, _ := io.ReadFull(f, head)
	if isKind(head[:n]) {
		return nil
	}
	return fmt.Errorf("%s: %s %s exists and is not a %s; pass --force to replace it, or choose another %s", cmd, flag, path, kind, flag)
}

// IsPNG says whether head starts a PNG file.
func IsPNG(head []byte) bool { return bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")) }

// resolvedPath is p absolute and clean, with the symbolic links of its
// longest existing prefix resolved.
func resolvedPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	rest := ""
	for dir := abs; ; dir = filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
		if filepath.Dir(dir) == dir {
			return abs
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// within says whether path lies strictly inside dir (both resolved).
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
