//go:build unix

// mmap_unix.go: read-only memory mapping through the syscall package.
package safetensors

import (
	"os"
	"syscall"
)

func mapReadOnly(f *os.File, size int64) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
}

func unmap(b []byte) error {
	if b == nil {
		return nil
	}
	return syscall.Munmap(b)
}
