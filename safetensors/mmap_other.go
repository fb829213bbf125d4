//go:build !unix

// mmap_other.go: troupe runs on Linux; elsewhere Open reports that it cannot
// map files rather than silently reading whole checkpoints into memory.
package safetensors

import (
	"errors"
	"os"
)

func mapReadOnly(f *os.File, size int64) ([]byte, error) {
	return nil, errors.New("memory mapping is only implemented for unix systems")
}

func unmap(b []byte) error { return nil }
