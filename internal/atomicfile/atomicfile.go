// Package atomicfile writes files so that a crash or an error never leaves a
// partial file under the final name: the data goes to a temporary file in the
// same directory, which is fsynced, renamed over the final name, and the
// directory is fsynced so the rename is durable. Every package that writes
// state (safetensors, checkpoints, model directories, metrics rewrites) uses
// this one implementation.
package atomicfile

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
)

// Write writes the file at path through fill (buffered), with mode 0644,
// replacing any existing file atomically. The directory must exist. On an
// error the temporary file is removed; a crash can leave a ".<name>.tmp-*"
// file behind, never a partial path.
func Write(path string, fill func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriterSize(tmp, 1<<20)
	if err := fill(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := tmp.Chmod(0o644); err != nil { // CreateTemp makes it 0600
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return SyncDir(dir)
}

// WriteBytes is Write for data already in memory.
func WriteBytes(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// SyncDir fsyncs a directory so that entries created or renamed in it are
// durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
