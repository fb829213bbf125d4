// file.go: one open .safetensors file, memory-mapped read-only.
//
// Lifetime: the byte slices returned by Bytes point into the mapping. They
// are valid until Close, and must never be written to (the pages are mapped
// read-only: a write crashes the process). Copy what must outlive the File.
// If another process truncates the file while it is mapped, touching the
// lost pages raises SIGBUS; files written by this package are replaced by
// rename, never truncated in place, so readers of the old file are safe.
//
// Not here: sharded directories (modeldir.go), writing (write.go).
package safetensors

import (
	"fmt"
	"os"
	"sync"
)

// File is an open, validated safetensors file. Its methods are safe for
// concurrent use; Close must not race with the other methods.
type File struct {
	path     string
	mapping  []byte // the whole file, read-only; nil for an empty mapping
	data     []byte // mapping[dataStart:]
	header   *header
	closeMu  sync.Mutex
	isClosed bool
}

// Open memory-maps the file at path and validates its header (see
// header.go). The returned File must be closed.
func Open(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("safetensors: %s: not a regular file (mode %v)", path, st.Mode())
	}
	if st.Size() < 8 {
		return nil, fmt.Errorf("safetensors: %s: file is %d bytes, shorter than the 8-byte header length; it is truncated or not a safetensors file", path, st.Size())
	}
	mapping, err := mapReadOnly(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("safetensors: %s: mmap of %d bytes: %w", path, st.Size(), err)
	}
	h, dataStart, err := parseFile(path, mapping)
	if err != nil {
		unmap(mapping)
		return nil, err
	}
	return &File{path: path, mapping: mapping, data: mapping[dataStart:], header: h}, nil
}

// Path is the path the file was opened with.
func (f *File) Path() string { return f.path }

// Names returns the tensor names, sorted.
func (f *File) Names() []string { return append([]string(nil), f.header.names...) }

// Len is the number of tensors.
func (f *File) Len() int { return len(f.header.names) }

// Info returns the dtype, shape and offsets of the named tensor.
func (f *File) Info(name string) (TensorInfo, bool) {
	t, ok := f.header.tensors[name]
	if ok {
		t.Shape = append([]int64(nil), t.Shape...) // callers may not edit ours
	}
	return t, ok
}

// Bytes returns the named tensor's data as a read-only view into the
// mapping, valid until Close (see the file comment). A tensor with no
// elements gives an empty, non-nil slice.
func (f *File) Bytes(name string) ([]byte, error) {
	t, ok := f.header.tensors[name]
	if !ok {
		return nil, fmt.Errorf("safetensors: %s: no tensor %q (the file has %d tensors)", f.path, name, len(f.header.names))
	}
	if f.closed() {
		return nil, fmt.Errorf("safetensors: %s: Bytes(%q) after Close", f.path, name)
	}
	return f.data[t.Begin:t.End:t.End], nil
}

// Metadata returns a copy of the header's __metadata__ map (nil if the
// header has none).
func (f *File) Metadata() map[string]string {
	if f.header.metadata == nil {
		return nil
	}
	m := make(map[string]string, len(f.header.metadata))
	for k, v := range f.header.metadata {
		m[k] = v
	}
	return m
}

// Close unmaps the file. Every slice returned by Bytes becomes invalid.
// Closing twice is a no-op.
func (f *File) Close() error {
	f.closeMu.Lock()
	defer f.closeMu.Unlock()
	if f.isClosed {
		return nil
	}
	f.isClosed = true
	m := f.mapping
	f.mapping, f.data = nil, nil
	if err := unmap(m); err != nil {
		return fmt.Errorf("safetensors: %s: munmap: %w", f.path, err)
	}
	return nil
}

func (f *File) closed() bool {
	f.closeMu.Lock()
	defer f.closeMu.Unlock()
	return f.isClosed
}
